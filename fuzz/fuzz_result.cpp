// libFuzzer harness: the point reader of `certify --point` and `run --x0`
// (apps/dpsosp/result_reader.hpp), on the text of a file.
#include <cmath>
#include <string>

#include "../apps/dpsosp/result_reader.hpp"
#include "dpsosp/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const dpsosp::cli::PointFile p = dpsosp::cli::parse_point_text(text, "--point fuzz");
    if (!p.x.allFinite()) __builtin_trap();
    if (p.rho && !(std::isfinite(*p.rho) && *p.rho > 0)) __builtin_trap();
    if (p.rho && !p.from_json) __builtin_trap();
  } catch (const dpsosp::Error&) {
  }
  return 0;
}
