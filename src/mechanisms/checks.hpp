// Checks shared by the mechanisms' makers and releases.
#pragma once
#include <limits>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/target.hpp"

namespace dpsosp::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A release's sensitivity against the calibrated bound. Batch sizes are
// computed in floating point (b_t = ceil(u slope)), so 2u/b_t may exceed 2/slope
// by a rounding: a relative 1e-12 is allowed, nothing more.
inline void check_sensitivity(const char* who, double sensitivity, double bound) {
  if (sensitivity >= 0 && sensitivity <= bound * (1 + 1e-12)) return;
  std::ostringstream os;
  os.precision(17);
  os << who << ": a release of L2 sensitivity " << sensitivity << " exceeds the calibrated bound " << bound
     << " (the noise would not cover it)";
  throw Error(os.str());
}

inline void check_target(const char* who, const PrivacyTarget& target) {
  target.Validate();
  if (!target.is_private()) throw Error(std::string(who) + ": needs a finite epsilon (a private target)");
}

}  // namespace dpsosp::detail
