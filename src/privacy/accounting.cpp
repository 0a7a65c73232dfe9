// Privacy accounting (SPEC section 3; formulas and sources in docs/privacy-accounting.md).
//
// Two families:
//  * exact Gaussian DP (Dong, Roth, Su 2019) for the tree-aggregated releases
//    of the single-pass methods (replace-one adjacency), and
//  * Renyi DP converted to (eps, delta) exactly as Google's dp_accounting does,
//    so that our figures can be compared with that library number for number:
//    its order grid, its conversion (Canonne-Kamath-Steinke Prop. 12), its tree
//    aggregation RDP and its Poisson-subsampled Gaussian RDP (Mironov, Talwar,
//    Zhang 2019), the latter under add/remove-one adjacency.
#include "dpsosp/privacy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <tuple>

#include "dpsosp/error.hpp"
#include "privacy/memo.hpp"
#include "privacy/normal.hpp"

namespace dpsosp::privacy {
namespace {

using detail::kInf;
using detail::kLn2;
using detail::kSqrt2;
using detail::log_add;
using detail::log_ndtr;

[[noreturn]] void fail(const char* function, const char* rule, double got) {
  std::ostringstream msg;
  msg.precision(17);
  msg << "privacy::" << function << ": " << rule << ", got " << got;
  throw Error(msg.str());
}

void check_delta(const char* function, double delta) {
  if (!(delta > 0 && delta < 1)) fail(function, "delta must be in (0, 1)", delta);
}
void check_epsilon(const char* function, double epsilon) {
  if (!(epsilon > 0) || !std::isfinite(epsilon)) fail(function, "epsilon must be finite and > 0", epsilon);
}
void check_noise_multiplier(const char* function, double z) {
  if (!(z > 0) || !std::isfinite(z)) fail(function, "noise_multiplier must be finite and > 0", z);
}
void check_sampling_rate(const char* function, double q) {
  if (!(q > 0 && q <= 1)) fail(function, "sampling rate q must be in (0, 1]", q);
}
void check_steps(const char* function, std::uint64_t steps) {
  if (steps < 1) fail(function, "steps must be >= 1", 0.0);
}

// log erfc(x) = log 2 + log Phi(-sqrt(2) x), dp_accounting's _log_erfc.
double log_erfc(double x) { return kLn2 + log_ndtr(-x * kSqrt2); }

// log |binomial(n, k)| for real n, via log|Gamma| (std::lgamma, like scipy's gammaln).
double log_abs_binomial(double n, double k) { return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1); }

// log A_alpha of the Poisson-subsampled Gaussian for integer alpha and 0 < q < 1
// (Mironov, Talwar, Zhang 2019, Sec. 3.2): binomial expansion of
// E_{x~N(0,z^2)} [((1-q) + q exp((2x-1)/(2z^2)))^alpha], summed in log space.
double log_a_integer(double q, double z, int alpha) {
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  double log_a = -kInf;
  for (int i = 0; i <= alpha; ++i) {
    const double di = i;
    const double s = log_abs_binomial(alpha, di) + di * log_q + (alpha - di) * log_1mq + (di * di - di) / (2 * z * z);
    log_a = log_add(log_a, s);
  }
  return log_a;
}

// log A_alpha for fractional alpha (MTZ 2019, Sec. 3.3): the integral is split
// at z0 = z^2 log(1/q - 1) + 1/2 and each half is a convergent series. Like
// dp_accounting (which this must match), the terms are added by absolute
// value, which can only overstate A_alpha, i.e. it stays an upper bound; the
// series stops when both halves' terms are decreasing and 30 nats below the
// total, and an order whose series has not converged after 1000 terms is
// given RDP = infinity (it drops out of the minimum over orders).
double log_a_fractional(double q, double z, double alpha) {
  constexpr int kMaxTerms = 1000;
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  const double z0 = z * z * std::log(1 / q - 1) + 0.5;
  double log_a0 = -kInf, log_a1 = -kInf;
  double last_s0 = -kInf, last_s1 = -kInf;
  for (int i = 0; i < kMaxTerms; ++i) {
    const double di = i;
    const double j = alpha - di;
    const double log_coef = log_abs_binomial(alpha, di);
    const double log_t0 = log_coef + di * log_q + j * log_1mq;
    const double log_t1 = log_coef + j * log_q + di * log_1mq;
    const double log_e0 = std::log(0.5) + log_erfc((di - z0) / (kSqrt2 * z));
    const double log_e1 = std::log(0.5) + log_erfc((z0 - j) / (kSqrt2 * z));
    const double log_s0 = log_t0 + (di * di - di) / (2 * z * z) + log_e0;
    const double log_s1 = log_t1 + (j * j - j) / (2 * z * z) + log_e1;
    log_a0 = log_add(log_a0, log_s0);
    log_a1 = log_add(log_a1, log_s1);
    const double total = log_add(log_a0, log_a1);
    if (log_s0 < last_s0 && log_s1 < last_s1 && std::max(log_s0, log_s1) < total - 30) return total;
    last_s0 = log_s0;
    last_s1 = log_s1;
  }
  return kInf;
}

}  // namespace

double normal_cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

double gdp_delta(double mu, double epsilon) {
  if (!(mu >= 0)) fail("gdp_delta", "mu must be >= 0", mu);
  if (!(epsilon >= 0)) fail("gdp_delta", "epsilon must be >= 0", epsilon);
  if (mu == 0) return 0.0;
  if (std::isinf(mu)) return 1.0;
  if (std::isinf(epsilon)) return 0.0;
  // The second term e^eps Phi(...) is formed in log space: e^eps overflows
  // long before the product does.
  const double first = normal_cdf(-epsilon / mu + mu / 2);
  const double second = std::exp(epsilon + log_ndtr(-epsilon / mu - mu / 2));
  return std::max(0.0, first - second);
}

double gdp_epsilon(double mu, double delta) {
  if (!(mu >= 0)) fail("gdp_epsilon", "mu must be >= 0", mu);
  check_delta("gdp_epsilon", delta);
  if (mu == 0) return 0.0;
  if (std::isinf(mu)) return kInf;
  // delta(eps) is strictly decreasing in eps; find the root by bisection,
  // keeping hi feasible (delta(hi) <= delta) so the answer is never optimistic.
  if (gdp_delta(mu, 0.0) <= delta) return 0.0;
  double lo = 0.0, hi = 1.0;
  while (gdp_delta(mu, hi) > delta) {
    lo = hi;
    hi *= 2;
    if (!std::isfinite(hi)) return kInf;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (gdp_delta(mu, mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

double gdp_mu(double epsilon, double delta) {
  check_epsilon("gdp_mu", epsilon);
  check_delta("gdp_mu", delta);
  // delta(eps) at fixed eps is strictly increasing in mu; keep lo feasible.
  double lo = 0.0, hi = 1.0;
  while (gdp_delta(hi, epsilon) <= delta) {
    lo = hi;
    hi *= 2;
    if (!std::isfinite(hi)) fail("gdp_mu", "no finite mu reaches delta; epsilon too large", epsilon);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (gdp_delta(mid, epsilon) <= delta ? lo : hi) = mid;
  }
  return lo;
}

int tree_depth(std::uint64_t phase_length) {
  // ceil(log2(L + 1)) is the bit length of L: 2^(D-1) <= L < 2^D.
  int depth = 0;
  for (std::uint64_t l = phase_length; l != 0; l >>= 1) ++depth;
  return depth;
}

const std::vector<double>& rdp_orders() {
  // dp_accounting's DEFAULT_RDP_ORDERS. The fractional orders are 1 + k/10
  // computed as such (not by repeated += 0.1), so they are the same doubles.
  static const std::vector<double> orders = [] {
    std::vector<double> o;
    for (int k = 1; k < 100; ++k) o.push_back(1.0 + k / 10.0);
    for (int a = 11; a < 64; ++a) o.push_back(a);
    for (double a : {128.0, 256.0, 512.0, 1024.0}) o.push_back(a);
    return o;
  }();
  return orders;
}

double rdp_to_epsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta) {
  check_delta("rdp_to_epsilon", delta);
  if (orders.empty()) throw Error("privacy::rdp_to_epsilon: orders must be non-empty, got 0 orders");
  if (orders.size() != rdp.size()) {
    throw Error("privacy::rdp_to_epsilon: rdp must have one value per order, got " + std::to_string(orders.size()) +
                " orders and " + std::to_string(rdp.size()) + " values");
  }
  double best = kInf;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    if (!(a >= 1)) fail("rdp_to_epsilon", "every order must be >= 1", a);
    if (!(r >= 0)) fail("rdp_to_epsilon", "every RDP value must be >= 0", r);
    double eps;
    if (delta * delta + std::expm1(-r) > 0) {
      eps = 0;  // delta <= sqrt(1 - exp(-KL)) already holds (dp_accounting's KL shortcut)
    } else if (a > 1.01) {
      // Canonne, Kamath, Steinke (2020), Prop. 12; unstable as a -> 1, hence a > 1.01.
      eps = r + std::log1p(-1 / a) - std::log(delta * a) / (a - 1);
    } else {
      eps = kInf;
    }
    best = std::min(best, eps);
  }
  return std::max(0.0, best);
}

double zcdp_to_epsilon(double rho, double delta) {
  if (!(rho >= 0) || !std::isfinite(rho)) fail("zcdp_to_epsilon", "rho must be finite and >= 0", rho);
  check_delta("zcdp_to_epsilon", delta);
  const std::vector<double>& orders = rdp_orders();
  std::vector<double> rdp(orders.size());
  for (std::size_t i = 0; i < orders.size(); ++i) rdp[i] = orders[i] * rho;
  return rdp_to_epsilon(orders, rdp, delta);
}

double zcdp_rho(double epsilon, double delta) {
  if (!(epsilon > 0) || !std::isfinite(epsilon)) fail("zcdp_rho", "epsilon must be finite and > 0", epsilon);
  check_delta("zcdp_rho", delta);
  // zcdp_to_epsilon grows with rho; rho <= epsilon always (eps >= rho).
  double lo = 0, hi = epsilon;
  for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (zcdp_to_epsilon(mid, delta) <= epsilon ? lo : hi) = mid;
  }
  return lo;
}

TreeAccount account_tree(double noise_multiplier, const std::vector<std::uint64_t>& phase_lengths, double delta) {
  check_noise_multiplier("account_tree", noise_multiplier);
  check_delta("account_tree", delta);
  if (phase_lengths.empty()) throw Error("privacy::account_tree: phase_lengths must be non-empty, got 0 phases");
  TreeAccount account;
  for (std::uint64_t length : phase_lengths) account.depth = std::max(account.depth, tree_depth(length));
  const double z = noise_multiplier;
  const double depth = account.depth;
  // One record changes its leaf and so the depth nodes above it, each by at
  // most the sensitivity; z = sigma / sensitivity. Gaussian DP composes
  // exactly over those nodes and the trees hold disjoint data.
  account.mu = std::sqrt(depth) / z;
  account.rho = depth / (2 * z * z);
  account.epsilon_gdp = gdp_epsilon(account.mu, delta);
  // dp_accounting's _compute_rdp_single_epoch_tree_aggregation: a * D / (2 z^2).
  const std::vector<double>& orders = rdp_orders();
  std::vector<double> rdp(orders.size());
  for (std::size_t i = 0; i < orders.size(); ++i) rdp[i] = orders[i] * depth / (2 * z * z);
  account.epsilon_rdp = rdp_to_epsilon(orders, rdp, delta);
  return account;
}

double calibrate_tree_sigma(double sensitivity, std::uint64_t max_phase_length, double epsilon, double delta) {
  if (!(sensitivity > 0) || !std::isfinite(sensitivity)) {
    fail("calibrate_tree_sigma", "sensitivity must be finite and > 0", sensitivity);
  }
  if (max_phase_length < 1) fail("calibrate_tree_sigma", "max_phase_length must be >= 1", 0.0);
  check_epsilon("calibrate_tree_sigma", epsilon);
  check_delta("calibrate_tree_sigma", delta);
  const double mu = gdp_mu(epsilon, delta);
  return sensitivity * std::sqrt(static_cast<double>(tree_depth(max_phase_length))) / mu;
}

double poisson_gaussian_rdp(double q, double noise_multiplier, double order) {
  check_sampling_rate("poisson_gaussian_rdp", q);
  check_noise_multiplier("poisson_gaussian_rdp", noise_multiplier);
  if (!(order > 1) || !std::isfinite(order)) fail("poisson_gaussian_rdp", "order must be finite and > 1", order);
  const double z = noise_multiplier;
  if (q == 1) return order / (2 * z * z);
  // dp_accounting treats an order as integer when float(order).is_integer().
  if (std::floor(order) == order && order <= static_cast<double>(std::numeric_limits<int>::max())) {
    return log_a_integer(q, z, static_cast<int>(order)) / (order - 1);
  }
  return log_a_fractional(q, z, order) / (order - 1);
}

double dpsgd_poisson_epsilon(double q, double noise_multiplier, std::uint64_t steps, double delta) {
  check_sampling_rate("dpsgd_poisson_epsilon", q);
  check_noise_multiplier("dpsgd_poisson_epsilon", noise_multiplier);
  check_steps("dpsgd_poisson_epsilon", steps);
  check_delta("dpsgd_poisson_epsilon", delta);
  // Memoized: Poisson runs of the audit and the calibration's bracket ask for the same figures.
  return detail::memoized(std::make_tuple(q, noise_multiplier, steps, delta), [&] {
    const std::vector<double>& orders = rdp_orders();
    std::vector<double> rdp(orders.size());
    for (std::size_t i = 0; i < orders.size(); ++i) {
      rdp[i] = static_cast<double>(steps) * poisson_gaussian_rdp(q, noise_multiplier, orders[i]);
    }
    return rdp_to_epsilon(orders, rdp, delta);
  });
}

double calibrate_dpsgd_noise(double q, std::uint64_t steps, double epsilon, double delta) {
  check_sampling_rate("calibrate_dpsgd_noise", q);
  check_steps("calibrate_dpsgd_noise", steps);
  check_epsilon("calibrate_dpsgd_noise", epsilon);
  check_delta("calibrate_dpsgd_noise", delta);
  const auto eps_at = [&](double z) { return dpsgd_poisson_epsilon(q, z, steps, delta); };
  // eps falls as z grows (every order's RDP does). Bracket, then bisect,
  // keeping hi feasible (eps(hi) <= epsilon) so the answer is conservative.
  double hi = 1.0;
  for (int i = 0; eps_at(hi) > epsilon; ++i) {
    if (i == 60) fail("calibrate_dpsgd_noise", "no noise multiplier below 2^60 reaches epsilon", epsilon);
    hi *= 2;
  }
  double lo = hi / 2;
  for (int i = 0; eps_at(lo) <= epsilon; ++i) {
    if (i == 60) return lo;  // even a vanishing noise multiplier meets the target
    hi = lo;
    lo /= 2;
  }
  while (hi - lo > 1e-10 * hi) {
    const double mid = lo + (hi - lo) / 2;
    (eps_at(mid) > epsilon ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace dpsosp::privacy
