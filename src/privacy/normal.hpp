// The normal distribution's log-CDF and log-space sums, shared by the
// accountants of this part (internal: not installed).
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

namespace dpsosp::privacy::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.69314718055994530942;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log(sqrt(2 pi))

// log Phi(x), accurate in both tails (scipy's log_ndtr plays this role in
// dp_accounting). For x <= -20, Phi(x) is near underflow, so use the
// asymptotic series Phi(x) = phi(x)/|x| * sum_k (-1)^k (2k-1)!! / x^(2k);
// at |x| >= 20 its terms fall below 1e-20 by k = 12.
inline double log_ndtr(double x) {
  if (x > 0) return std::log1p(-0.5 * std::erfc(x / kSqrt2));
  if (x > -20) return std::log(0.5 * std::erfc(-x / kSqrt2));
  if (std::isinf(x)) return -kInf;
  const double inv_x2 = 1.0 / (x * x);
  double term = 1.0, series = 1.0;
  for (int k = 1; k <= 12; ++k) {
    term *= -(2.0 * k - 1.0) * inv_x2;
    series += term;
  }
  return -0.5 * x * x - std::log(-x) - kLogSqrt2Pi + std::log(series);
}

// Phi(x) = erfc(-x / sqrt 2) / 2, accurate in the lower tail.
inline double ndtr(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

// log(exp(a) + exp(b)) without overflow.
inline double log_add(double a, double b) {
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (lo == -kInf) return hi;
  return std::log1p(std::exp(lo - hi)) + hi;
}

// The x with log Phi(x) = log_p (log_p <= log 0.5 ... any log_p < 0), by
// bisection on [-40, 40] to the last bit.
inline double ndtr_inverse_log(double log_p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    (log_ndtr(mid) < log_p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace dpsosp::privacy::detail
