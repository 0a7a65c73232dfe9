// The audit's tests of the claim's shape (src/audit/tradeoff.hpp, docs/privacy.md).
#include "audit/tradeoff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "audit/setup.hpp"
#include "audit/statistics.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/pld.hpp"

namespace dpsosp::audit::detail {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
}  // namespace

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) return p <= 0 ? -kInf : kInf;
  // Acklam's approximation (relative error 1.15e-9), then one Newton step.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                             1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  double x;
  if (p < 0.02425 || p > 1 - 0.02425) {
    const double q = std::sqrt(-2 * std::log(p < 0.5 ? p : 1 - p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    if (p > 0.5) x = -x;
  } else {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  return x - e * std::sqrt(2 * kPi) * std::exp(x * x / 2);
}

double mu_lower_bound(double mu_hat, Index n0, Index n1, double level) {
  if (!std::isfinite(mu_hat) || n0 < 2 || n1 < 2) return std::numeric_limits<double>::quiet_NaN();
  const double a = static_cast<double>(n0), b = static_cast<double>(n1);
  const double se = std::sqrt(1 / a + 1 / b + mu_hat * mu_hat / (2 * (a + b - 2)));
  return std::max(0.0, std::abs(mu_hat) - normal_quantile(1 - level / 2) * se);
}

ClaimedCurve::ClaimedCurve(double q, double z, std::uint64_t steps) {
  const privacy::PrivacyLossDistribution pld =
      privacy::poisson_gaussian_pld(q, z, 1.0, privacy::Neighbouring::kAddRemove).self_compose(steps);
  for (double eps = 0; eps <= 12 + 1e-9; eps += 0.02) {
    epsilon_.push_back(eps);
    delta_.push_back(pld.delta(eps));
  }
}

double ClaimedCurve::max_tpr(double fpr) const {
  double best = 1;
  for (std::size_t i = 0; i < epsilon_.size(); ++i) {
    const double e = std::exp(epsilon_[i]);
    best = std::min({best, e * fpr + delta_[i], 1 - (1 - fpr - delta_[i]) / e});
  }
  return std::max(best, fpr);
}

double poisson_lr(const std::vector<double>& v, double signal, double q, double z) {
  const double mu = 1 / z;
  double sum = 0;
  for (const double x : v) {
    // log(1 - q + q e^t), stable for large t.
    const double t = mu * x / (z * signal) - mu * mu / 2;
    sum += t > 0 ? t + std::log(q + (1 - q) * std::exp(-t)) : std::log1p(q * std::expm1(t));
  }
  return sum;
}

AuditResult::TradeOff tradeoff_test(std::vector<double> select_without, std::vector<double> select_with,
                                    std::vector<double> measure_without, std::vector<double> measure_with,
                                    const ClaimedCurve& curve, double level) {
  for (auto* v : {&select_without, &select_with, &measure_without, &measure_with}) std::sort(v->begin(), v->end());
  const double alpha = level / 2;
  const auto evaluate = [&](const std::vector<double>& null, const std::vector<double>& alt, double t,
                            AuditResult::TradeOff& out) {
    out.false_positives = count_positive(null, t, true);
    out.true_positives = count_positive(alt, t, true);
    out.fpr_upper = clopper_pearson_upper(out.false_positives, null.size(), alpha);
    out.tpr_lower = clopper_pearson_lower(out.true_positives, alt.size(), alpha);
    out.claimed_tpr_max = curve.max_tpr(out.fpr_upper);
    return out.tpr_lower - out.claimed_tpr_max;
  };
  AuditResult::TradeOff best;
  double margin = -kInf;
  // Thresholds at the null's upper quantiles (a handful: each costs two
  // Clopper-Pearson bounds and a pass over the curve).
  for (const double quantile : {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5}) {
    const std::size_t above = static_cast<std::size_t>(quantile * static_cast<double>(select_without.size()));
    if (above < 1 || above >= select_without.size()) continue;
    const double t = select_without[select_without.size() - 1 - above];
    AuditResult::TradeOff candidate;
    const double m = evaluate(select_without, select_with, t, candidate);
    if (m > margin) {
      margin = m;
      best.threshold = t;
    }
  }
  best.samples = measure_without.size();
  if (measure_without.empty() || measure_with.empty()) return best;
  evaluate(measure_without, measure_with, best.threshold, best);
  return best;
}

// The Poisson paths' samples (src/audit/setup.hpp).
std::vector<double> Setup::opportunities(const Summary& s, Index j) const {
  const std::vector<Vec>& tr = s.trajectory;
  const Index T = tr.empty() ? 0 : static_cast<Index>(tr.size()) - 1;
  const auto e = static_cast<Eigen::Index>(j);
  // r(t) = x_{t-1} - x_t along e_j: the release of step t times the step size.
  auto r = [&](Index t) { return tr[static_cast<std::size_t>(t - 1)][e] - tr[static_cast<std::size_t>(t)][e]; };
  std::vector<double> v;
  if (poisson) {
    for (Index t = 1; t <= T; ++t) v.push_back(r(t));
    return v;
  }
  // Poisson passes. The releases rel_t = r(t) / eta are (the canary's
  // clipped gradient if sampled) / b + (C^{-1} xi)_t sigma; C rel is then the
  // canary's shift along C's column at each step it was sampled, plus white
  // noise. Its opportunities are the steps 1, 1 + bands, ... (group 0); over
  // each, <c, (C rel)[t .. t + bands)> / ||c|| is N(shift ||c||, sigma^2)
  // when sampled, N(0, sigma^2) when not.
  const auto eta = s.params.find("eta");
  const double step_size = eta == s.params.end() ? 1.0 : eta->second;
  const BandedFactorization f = BandedFactorization::square_root(static_cast<Index>(s.params.at("bands")));
  const Index bands = f.bands();
  std::vector<double> w(static_cast<std::size_t>(T), 0.0);  // C rel
  for (Index t = 0; t < T; ++t)
    for (Index i = 0; i < bands && i <= t; ++i) w[t] += f.c[i] * r(t - i + 1) / step_size;
  const double norm = f.column_norm();
  for (Index t = 0; t < T; t += bands) {
    double dot = 0;
    for (Index i = 0; i < bands && t + i < T; ++i) dot += f.c[i] * w[t + i];
    v.push_back(dot / norm);
  }
  return v;
}

std::vector<double> Setup::lr_statistics(const Summary& s) const {
  std::vector<double> out(static_cast<std::size_t>(a.canaries));
  for (Index j = 0; j < a.canaries; ++j)
    out[static_cast<std::size_t>(j)] = poisson_lr(opportunities(s, j), signal, claim_q, claim_z);
  return out;
}

}  // namespace dpsosp::audit::detail
