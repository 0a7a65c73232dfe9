// `dpsosp run`'s --set items: name=value, each name once; the values are the
// library's to check (RunRequest, options.hpp).
#include <set>

#include "cli.hpp"

namespace dpsosp::cli {

std::map<std::string, std::string> parse_overrides(const std::vector<std::string>& items) {
  std::map<std::string, std::string> out;
  for (const auto& kv : items) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--set: expected name=value, got " + quote_token(kv));
    const std::string k = kv.substr(0, eq);
    if (!out.emplace(k, kv.substr(eq + 1)).second) throw Error("--set " + k + ": given twice");
  }
  return out;
}

}  // namespace dpsosp::cli
