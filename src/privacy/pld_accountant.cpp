// Poisson DP-SGD and tree figures by PLD, and the calibration of the noise
// multiplier to a target (docs/privacy-accounting.md, "PLD accountant").
// Results are memoized (privacy/memo.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include "dpsosp/error.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "privacy/memo.hpp"
#include "privacy/pld_pmf.hpp"

namespace dpsosp::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void fail(const char* function, const char* rule, double got) {
  std::ostringstream msg;
  msg.precision(17);
  msg << "privacy::" << function << ": " << rule << ", got " << got;
  throw Error(msg.str());
}

void check_common(const char* function, double q, std::uint64_t steps, const PldOptions& options) {
  if (!(q > 0 && q <= 1)) fail(function, "sampling rate q must be in (0, 1]", q);
  if (steps < 1) fail(function, "steps must be >= 1", 0.0);
  options.Validate();
}
void check_z(const char* function, double z) {
  if (!(z > 0) || !std::isfinite(z)) fail(function, "noise_multiplier must be finite and > 0", z);
}
void check_delta(const char* function, double delta) {
  if (!(delta > 0 && delta < 1)) fail(function, "delta must be in (0, 1)", delta);
}
void check_prior(const char* function, double prior_mu) {
  if (!(prior_mu >= 0) || !std::isfinite(prior_mu)) fail(function, "prior_mu must be finite and >= 0", prior_mu);
}

// The composed PLD of `steps` steps at noise multiplier z = sigma / s:
// add/remove s = C, replace-one s = 2C (C = 1 here).
// A prior Gaussian release of mu-GDP: noise 1, sensitivity mu.
PrivacyLossDistribution composed(double q, double z, std::uint64_t steps, Neighbouring n, const PldOptions& o,
                                 double prior_mu) {
  const double record_bound = n == Neighbouring::kAddRemove ? 1.0 : 0.5;
  PrivacyLossDistribution steps_pld = poisson_gaussian_pld(q, z, record_bound, n, o).self_compose(steps);
  return prior_mu > 0 ? gaussian_pld(1.0, prior_mu, o).compose(steps_pld) : steps_pld;
}

enum class Query { kEpsilon, kDelta, kCalibration };
using Key = std::tuple<int, double, double, std::uint64_t, double, int, double, double, double, bool, std::size_t,
                       double, double, double>;

Key key(Query query, double q, double z, std::uint64_t steps, double value, Neighbouring n, const PldOptions& o,
        double prior_mu, double start = 0) {
  return Key{static_cast<int>(query),
             q,
             z,
             steps,
             value,
             static_cast<int>(n),
             o.discretization,
             o.log_mass_truncation,
             o.tail_mass_truncation,
             o.pessimistic,
             o.max_bins,
             prior_mu,
             o.calibration_tolerance,
             start};
}

// eps at z, +inf where the PLD would pass max_bins (more noise is needed).
double epsilon_or_inf(double q, double z, std::uint64_t steps, double delta, Neighbouring n, const PldOptions& o,
                      double prior_mu) {
  try {
    return dpsgd_pld_epsilon(q, z, steps, delta, n, o, prior_mu);
  } catch (const detail::TooManyBins&) {
    return kInf;
  }
}

}  // namespace

PrivacyLossDistribution dpsgd_pld(double q, double z, std::uint64_t steps, Neighbouring n, const PldOptions& o,
                                  double prior_mu) {
  check_common("dpsgd_pld", q, steps, o);
  check_z("dpsgd_pld", z);
  check_prior("dpsgd_pld", prior_mu);
  return composed(q, z, steps, n, o, prior_mu);
}

double dpsgd_pld_epsilon(double q, double z, std::uint64_t steps, double delta, Neighbouring n, const PldOptions& o,
                         double prior_mu) {
  check_common("dpsgd_pld_epsilon", q, steps, o);
  check_z("dpsgd_pld_epsilon", z);
  check_delta("dpsgd_pld_epsilon", delta);
  check_prior("dpsgd_pld_epsilon", prior_mu);
  return detail::memoized(key(Query::kEpsilon, q, z, steps, delta, n, o, prior_mu),
                          [&] { return composed(q, z, steps, n, o, prior_mu).epsilon(delta); });
}

double dpsgd_pld_epsilon_optimistic(double q, double z, std::uint64_t steps, double delta, Neighbouring n, PldOptions o,
                                    double prior_mu) {
  o.pessimistic = false;
  return dpsgd_pld_epsilon(q, z, steps, delta, n, o, prior_mu);
}

double dpsgd_pld_delta(double q, double z, std::uint64_t steps, double epsilon, Neighbouring n, const PldOptions& o,
                       double prior_mu) {
  check_common("dpsgd_pld_delta", q, steps, o);
  check_z("dpsgd_pld_delta", z);
  check_prior("dpsgd_pld_delta", prior_mu);
  if (!(epsilon >= 0) || !std::isfinite(epsilon)) fail("dpsgd_pld_delta", "epsilon must be finite and >= 0", epsilon);
  return detail::memoized(key(Query::kDelta, q, z, steps, epsilon, n, o, prior_mu),
                          [&] { return composed(q, z, steps, n, o, prior_mu).delta(epsilon); });
}

double calibrate_dpsgd_noise_pld(double q, std::uint64_t steps, double epsilon, double delta, Neighbouring n,
                                 const PldOptions& o, double prior_mu, double start) {
  check_common("calibrate_dpsgd_noise_pld", q, steps, o);
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    fail("calibrate_dpsgd_noise_pld", "epsilon must be finite and > 0", epsilon);
  check_delta("calibrate_dpsgd_noise_pld", delta);
  check_prior("calibrate_dpsgd_noise_pld", prior_mu);
  // The prior alone must leave room: its epsilon at delta below the target's.
  if (prior_mu > 0 && !(gdp_epsilon(prior_mu, delta) < epsilon))
    fail("calibrate_dpsgd_noise_pld", "prior_mu spends the whole epsilon", prior_mu);
  if (!(start >= 0) || !std::isfinite(start)) fail("calibrate_dpsgd_noise_pld", "start must be finite and >= 0", start);
  // The start is in the key: the answer (within the tolerance) depends on it,
  // and a run's bits must not depend on which calibrations ran before it.
  return detail::memoized(key(Query::kCalibration, q, epsilon, steps, delta, n, o, prior_mu, start), [&] {
    const auto feasible = [&](double z, double& g) {
      const double e = epsilon_or_inf(q, z, steps, delta, n, o, prior_mu);
      g = e > 0 ? std::log(e / epsilon) : -kInf;
      return e <= epsilon;
    };
    // Bracket around the RDP calibration (PLD's eps is lower, so its z is too).
    // Replace-one: z = sigma / (2C), and a replaced record moves a sampled
    // release by 2C where add/remove moves it by C, so the add/remove z is a
    // start there too (measured: the answer 0.6 to 0.9 of it).
    // A start (a coarser calibration's answer) is bracketed by relative steps
    // of w = min(0.5%, 100 x the tolerance) that square as they go (to the
    // 1.25 of the search without one): a fine calibration from a coarse
    // answer (often within 1e-4 of it) then takes three or four PLDs, not six.
    const double w = std::min(0.005, 100 * o.calibration_tolerance);
    double hi = start > 0 ? start * (1 + w) : calibrate_dpsgd_noise(q, steps, epsilon, delta), lo = 0, g_hi = 0,
           g_lo = 0;
    double step = start > 0 ? 1 + w : 1.25;
    // Once two probes on one side are known, the next jumps to their secant's
    // root in log z (g is nearly linear in log z), half the tolerance past it,
    // at most a factor 2 (the secant method: a probe that falls short gives a
    // closer secant); where the secant cannot be used (g not finite, or not
    // falling), the squaring steps.
    const double past = 0.5 * std::log1p(o.calibration_tolerance);
    const auto jump = [&](double z_a, double g_a, double z_b, double g_b, double fallback) {
      const double d = std::log(z_b) - std::log(z_a);
      if (!std::isfinite(g_a) || !std::isfinite(g_b) || d == 0) return fallback;
      const double slope = (g_b - g_a) / d;
      if (!(slope < 0)) return fallback;
      const double to_root = -g_b / slope;  // from log z_b, the direction's sign
      const double sign = d > 0 ? 1.0 : -1.0;
      if (!(to_root * sign > 0)) return fallback;
      return std::exp(std::log(z_b) + sign * std::min(std::abs(to_root) + past, std::log(2.0)));
    };
    // A PLD too large to build at the start is an error, not "more noise": the
    // caller should coarsen the discretization or use RDP. (Below the start,
    // a PLD too large counts as infeasible, which can only raise z.)
    dpsgd_pld_epsilon(q, hi, steps, delta, n, o, prior_mu);
    double prev = 0, g_prev = 0;
    for (int i = 0; !feasible(hi, g_hi); ++i) {
      if (i == 400) fail("calibrate_dpsgd_noise_pld", "no noise multiplier reaches epsilon", epsilon);
      prev = lo;
      g_prev = g_lo;
      lo = hi;
      g_lo = g_hi;
      hi = prev > 0 ? jump(prev, g_prev, lo, g_lo, hi * step) : hi * step;
      step = std::min(step * step, 1.25);
    }
    if (lo == 0) {
      step = start > 0 ? 1 + 2 * w : 1.25;
      lo = hi / step;
      for (int i = 0; feasible(lo, g_lo); ++i) {
        if (i == 400) return lo;  // even a vanishing noise multiplier meets the target
        prev = hi;
        g_prev = g_hi;
        hi = lo;
        g_hi = g_lo;
        step = std::min(step * step, 1.25);
        lo = jump(prev, g_prev, hi, g_hi, lo / step);
      }
    }
    // Illinois (regula falsi in log z with the stale end's value halved);
    // bisection where g is infinite. hi stays feasible throughout. Near the
    // root g is nearly linear in log z and the secant far more accurate than
    // the tolerance, so each secant point is moved: 0.05 of the tolerance up
    // (it lands just feasible: hi within that of the smallest z), or, once hi
    // is that close and lo is the stale end, 0.9 of it down (it lands just
    // infeasible and the bracket closes), where regula falsi alone would creep
    // toward the root from one side.
    const double nudge = std::log1p(o.calibration_tolerance);
    int stale_side = 0;
    for (int i = 0; i < 200 && hi - lo > o.calibration_tolerance * hi; ++i) {
      double u = 0.5 * (std::log(lo) + std::log(hi));
      if (std::isfinite(g_lo) && std::isfinite(g_hi) && g_lo > g_hi) {
        u = std::log(lo) + (std::log(hi) - std::log(lo)) * g_lo / (g_lo - g_hi);
        u += stale_side == -1 ? -0.9 * nudge : 0.05 * nudge;
        const double width = std::log(hi) - std::log(lo);
        u = std::min(std::max(u, std::log(lo) + 1e-3 * width), std::log(hi) - 1e-3 * width);
      }
      const double mid = std::exp(u);
      double g = 0;
      if (feasible(mid, g)) {
        hi = mid;
        g_hi = g;
        if (stale_side == -1) g_lo /= 2;
        stale_side = -1;
      } else {
        lo = mid;
        g_lo = g;
        if (stale_side == 1) g_hi /= 2;
        stale_side = 1;
      }
    }
    return hi;
  });
}

double tree_pld_epsilon(double z, int depth, double delta, const PldOptions& o) {
  check_z("tree_pld_epsilon", z);
  check_delta("tree_pld_epsilon", delta);
  if (depth < 0) fail("tree_pld_epsilon", "depth must be >= 0", depth);
  if (depth == 0) return 0.0;
  return gaussian_pld(z, std::sqrt(static_cast<double>(depth)), o).epsilon(delta);
}

}  // namespace dpsosp::privacy
