// `dpsosp run`'s option words: --set's overrides, the batch counts, and the
// library's messages with a RunOptions field named as the command line names it.
#include <algorithm>
#include <cstring>
#include <set>

#include "cli.hpp"

namespace dpsosp::cli {

Index parse_index_value(const std::string& text, const std::string& option) {
  // 2^53: exactly representable, and far above any batch a dataset could fill.
  return static_cast<Index>(parse_count(text, option, 1, std::uint64_t{1} << 53));
}

// --set name=value into the overrides; which names the algorithm reads is the
// library's to check (RunOptions::Validate).
void parse_overrides(const std::vector<std::string>& items, ParameterOverrides& o) {
  static const std::vector<std::string> kNames = {"alpha", "kappa", "sigma", "noise_multiplier", "eta",
                                                  "zeta",  "threshold", "b", "T", "Gamma"};
  std::set<std::string> seen;
  for (const auto& kv : items) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--set: expected name=value, got " + quote_token(kv));
    const std::string k = kv.substr(0, eq);
    const std::string v = kv.substr(eq + 1);
    const std::string option = "--set " + k;
    if (std::find(kNames.begin(), kNames.end(), k) == kNames.end())
      throw Error("--set: unknown parameter " + quote_token(k) + " (" + override_names(~0u) + ")");
    if (!seen.insert(k).second) throw Error(option + ": given twice");
    if (k == "b") o.b = parse_index_value(v, option);
    else if (k == "T") o.T = parse_index_value(v, option);
    else if (k == "Gamma") o.Gamma = parse_index_value(v, option);
    else {
      const double x = parse_real(v, option, Range::kPositive);
      if (k == "alpha") o.alpha = x;
      else if (k == "kappa") o.kappa = x;
      else if (k == "sigma") o.sigma = x;
      else if (k == "noise_multiplier") o.noise_multiplier = x;
      else if (k == "eta") o.eta = x;
      else if (k == "zeta") o.zeta = x;
      else o.threshold = x;
    }
  }
}

// The library's words for a refused RunOptions field, with the field named as
// the command line names it ("RunOptions: batch_size: ..." -> "--batch-size: ...").
[[noreturn]] void refuse_in_cli_words(const Error& e) {
  static const std::pair<const char*, const char*> kFields[] = {
      {"privacy.noise", "--noise"},     {"privacy.epsilon", "--epsilon"}, {"privacy.delta", "--delta"},
      {"privacy.adjacency", "--adjacency"}, {"privacy", "--epsilon"},      {"batch_size", "--batch-size"},
      {"period", "--period"},           {"epochs", "--epochs"},        {"learning_rate", "--learning-rate"},
      {"alpha_scale", "--alpha-scale"}, {"max_phase_length", "--max-phase-length"}, {"tail", "--tail"},
      {"o2", "--o2"},                   {"accountant", "--accountant"},  {"sample_order", "--order"},
      {"sampling", "--sampling"},       {"bands", "--bands"},
      {"threads", "--threads"},         {"overrides.", "--set "}};
  std::string m = e.what();
  const std::string prefix = "RunOptions: ";
  if (m.compare(0, prefix.size(), prefix) != 0) throw e;
  m = m.substr(prefix.size());
  for (const auto& [field, option] : kFields) {
    if (m.compare(0, std::strlen(field), field) == 0) {
      m = option + m.substr(std::strlen(field));
      break;
    }
  }
  throw Error(m);
}

}  // namespace dpsosp::cli
