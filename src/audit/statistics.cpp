// The audit's statistics (src/audit/statistics.hpp, docs/privacy.md).
#include "audit/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "dpsosp/error.hpp"

namespace dpsosp::audit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Continued fraction of the incomplete beta function (modified Lentz).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < kEps) return h;
  }
  throw Error("incomplete_beta: the continued fraction did not converge (a = " + std::to_string(a) +
              ", b = " + std::to_string(b) + ", x = " + std::to_string(x) + ")");
}

// The p with I_p(a, b) = target, by bisection (I is increasing in p).
double beta_quantile(double a, double b, double target) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-16; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (incomplete_beta(a, b, mid) < target)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

namespace detail {

double bound_from_rates(double tpr_lower, double fpr_upper, double delta) {
  if (!(tpr_lower > delta)) return 0;
  return std::max(0.0, std::log((tpr_lower - delta) / fpr_upper));
}

double BoundTable::cached(std::map<Index, std::vector<double>>& table, Index k, Index n, bool lower) {
  std::vector<double>& v = table[n];
  if (v.empty()) v.assign(static_cast<std::size_t>(n) + 1, std::numeric_limits<double>::quiet_NaN());
  double& x = v[static_cast<std::size_t>(k)];
  if (std::isnan(x)) x = lower ? clopper_pearson_lower(k, n, alpha_) : clopper_pearson_upper(k, n, alpha_);
  return x;
}

Index count_positive(const std::vector<double>& sorted, double t, bool reject_high) {
  const auto above = static_cast<Index>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), t));
  return reject_high ? above : static_cast<Index>(sorted.size()) - above;
}

void choose_test(std::size_t score, std::vector<double> without, std::vector<double> with, BoundTable& table,
                 Test& best) {
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  for (const bool positive_is_with : {true, false}) {
    const std::vector<double>& alt_scores = positive_is_with ? with : without;
    const std::vector<double>& null_scores = positive_is_with ? without : with;
    for (const bool high : {true, false}) {
      for (std::size_t j = 0; j < null_scores.size(); ++j) {
        if (j > 0 && null_scores[j] == null_scores[j - 1]) continue;  // the same test again
        // high: t at a null score (positives > t exclude it); low: just below it.
        const double threshold = high ? null_scores[j] : std::nextafter(null_scores[j], -kInf);
        const Index fp = count_positive(null_scores, threshold, high);
        const Index tp = count_positive(alt_scores, threshold, high);
        const double b = table.bound(tp, alt_scores.size(), fp, null_scores.size());
        if (b > best.bound) best = {score, threshold, high, positive_is_with, b};
      }
    }
  }
}

}  // namespace detail

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || !(x >= 0 && x <= 1))
    throw Error("incomplete_beta: expected a > 0, b > 0, x in [0, 1], got a = " + std::to_string(a) +
                ", b = " + std::to_string(b) + ", x = " + std::to_string(x));
  if (x == 0) return 0;
  if (x == 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double clopper_pearson_lower(Index k, Index n, double alpha) {
  if (n == 0 || k > n || !(alpha > 0 && alpha < 1))
    throw Error("clopper_pearson_lower: expected 0 <= k <= n, n >= 1, alpha in (0, 1)");
  if (k == 0) return 0;
  return beta_quantile(static_cast<double>(k), static_cast<double>(n - k + 1), alpha);
}

double clopper_pearson_upper(Index k, Index n, double alpha) {
  if (n == 0 || k > n || !(alpha > 0 && alpha < 1))
    throw Error("clopper_pearson_upper: expected 0 <= k <= n, n >= 1, alpha in (0, 1)");
  if (k == n) return 1;
  return beta_quantile(static_cast<double>(k + 1), static_cast<double>(n - k), 1 - alpha);
}

double epsilon_lower_bound(Index true_positives, Index positives_trials, Index false_positives, Index negatives_trials,
                           double delta, double alpha) {
  const double tpr = clopper_pearson_lower(true_positives, positives_trials, alpha);
  const double fpr = clopper_pearson_upper(false_positives, negatives_trials, alpha);
  return detail::bound_from_rates(tpr, fpr, delta);
}

}  // namespace dpsosp::audit
