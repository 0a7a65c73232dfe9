// detail::format_number: a number in the fewest digits that read back as it,
// for the messages of the models and their checks.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "models/model_internal.hpp"

namespace dpsosp::detail {

std::string format_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  if (std::floor(v) == v && std::abs(v) < 1e15) {  // integers as integers: "10", not "1e+01"
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace dpsosp::detail
