// Composition and (eps, delta) of one direction of a discretized PLD. The
// algorithms are those of dp_accounting's pld_pmf.py and common.py
// (docs/privacy-accounting.md, "PLD accountant"): FFT convolution, tails cut
// by Chernoff bounds and moved where they can only raise delta, and the
// hockey-stick divergence summed from the top loss down.
#include "privacy/pld_pmf.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "privacy/fft.hpp"

namespace dpsosp::privacy::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The Chernoff window of `times` copies of p: indices [lo, hi] of the sum
// (each copy's index in [0, n-1]) outside of which at most tail/2 lies on
// each side: P(S >= a) <= exp(times K(l) - l a) for l > 0, K the cumulant
// generating function, and the same with l < 0 below. The orders l n run over
// +-2^(k/2), k = -10..30; K is summed with a running product (no exp per bin),
// shifted so that no term exceeds 1.
void chernoff_window(const std::vector<double>& p, std::uint64_t times, double tail, double& lo, double& hi) {
  const std::size_t n = p.size();
  const double t = static_cast<double>(times);
  hi = t * static_cast<double>(n - 1);
  lo = 0;
  if (tail <= 0 || n == 1) return;
  const double log_two_over_tail = std::log(2.0 / tail);
  // The running products and sums err by at most about n units of roundoff
  // (relative); K is raised by that, so each bound stays a bound.
  const double roundoff = 4.0 * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
  for (int k = -10; k <= 30; ++k) {
    const double mu = std::exp2(0.5 * k) / static_cast<double>(n);  // |order|
    const double step = std::exp(-mu);
    // Upper tail, order +mu: K = mu (n-1) + log sum_i p_i e^{-mu (n-1-i)}.
    double sum = 0, r = 1;
    for (std::size_t i = n; i-- > 0;) {
      sum += p[i] * r;
      r *= step;
      if (r < 1e-290) {  // the rest adds at most r (masses sum to <= 1); stop before subnormals
        sum += r;
        break;
      }
    }
    if (sum > 0) {
      const double k_up = mu * static_cast<double>(n - 1) + std::log(sum) + roundoff;
      const double bound = (t * k_up + log_two_over_tail) / mu;
      if (std::isfinite(bound)) hi = std::min(hi, std::ceil(bound) + 1);
    }
    // Lower tail, order -mu: K = log sum_i p_i e^{-mu i}.
    sum = 0;
    r = 1;
    for (std::size_t i = 0; i < n; ++i) {
      sum += p[i] * r;
      r *= step;
      if (r < 1e-290) {
        sum += r;
        break;
      }
    }
    if (sum > 0) {
      const double bound = (t * (std::log(sum) + roundoff) + log_two_over_tail) / -mu;
      if (std::isfinite(bound)) lo = std::max(lo, std::floor(bound) - 1);
    }
  }
  lo = std::max(0.0, lo);
  hi = std::max(lo, hi);
}

// Cuts the tails of mass <= tail/2 each (dp_accounting's _truncate_tails).
void truncate_tails(PldPmf& p, double tail) {
  if (tail <= 0 || p.probs.empty()) return;
  const std::size_t n = p.probs.size();
  std::size_t left = 0;
  for (double s = 0; left < n; ++left) {
    s += p.probs[left];
    if (s > tail / 2) break;
  }
  std::size_t right = n;  // one past the last kept
  for (double s = 0; right > 0; --right) {
    s += p.probs[right - 1];
    if (s > tail / 2) break;
  }
  right = std::max(right, left + 1);
  if (right > n) {  // everything fits in the tails: keep one bin
    left = n - 1;
    right = n;
  }
  double left_mass = 0, right_mass = 0;
  for (std::size_t i = 0; i < left; ++i) left_mass += p.probs[i];
  for (std::size_t i = right; i < n; ++i) right_mass += p.probs[i];
  std::vector<double> kept(p.probs.begin() + static_cast<std::ptrdiff_t>(left),
                           p.probs.begin() + static_cast<std::ptrdiff_t>(right));
  if (p.pessimistic) {
    kept.front() += left_mass;
    p.infinity_mass += right_mass;
  } else {
    kept.back() += right_mass;
  }
  p.lower += static_cast<std::int64_t>(left);
  p.probs = std::move(kept);
}

void clamp_negative(std::vector<double>& probs) {
  for (double& v : probs) v = std::max(v, 0.0);  // FFT round-off; raising a mass only raises delta
}

}  // namespace

void too_many_bins(std::size_t needed, std::size_t max_bins, double interval) {
  std::ostringstream os;
  os << "the privacy-loss distribution needs " << needed << " bins at discretization " << interval
     << ", more than max_bins = " << max_bins << " (use a coarser value discretization, or the RDP accountant)";
  throw TooManyBins(os.str());
}

PldPmf compose(const PldPmf& a, const PldPmf& b, double tail_mass_truncation, std::size_t max_bins) {
  const std::size_t out = a.probs.size() + b.probs.size() - 1;
  const std::size_t needed = std::min(a.probs.size(), b.probs.size()) <= 64 ? out : fft_length(out);
  if (needed > max_bins) too_many_bins(needed, max_bins, a.interval);
  PldPmf c;
  c.interval = a.interval;
  c.pessimistic = a.pessimistic;
  c.lower = a.lower + b.lower;
  c.probs = convolve(a.probs, b.probs);
  clamp_negative(c.probs);
  c.infinity_mass = a.infinity_mass + b.infinity_mass - a.infinity_mass * b.infinity_mass;
  truncate_tails(c, tail_mass_truncation);
  return c;
}

PldPmf self_compose(const PldPmf& p, std::uint64_t times, double tail_mass_truncation, std::size_t max_bins) {
  if (times == 1) return p;
  const double t = static_cast<double>(times);
  double lo = 0, hi = 0;
  chernoff_window(p.probs, times, tail_mass_truncation, lo, hi);
  const double window = hi - lo + 1;
  if (!(window <= static_cast<double>(max_bins)) || !(std::abs(static_cast<double>(p.lower)) * t + hi < 4e18)) {
    too_many_bins(window < 1e18 ? static_cast<std::size_t>(window) : 0, max_bins, p.interval);
  }
  const auto window_length = static_cast<std::size_t>(window);
  const std::size_t length = fft_length(std::max(window_length, p.probs.size()));
  if (length > max_bins) too_many_bins(length, max_bins, p.interval);
  PldPmf c;
  c.interval = p.interval;
  c.pessimistic = p.pessimistic;
  c.lower = p.lower * static_cast<std::int64_t>(times) + static_cast<std::int64_t>(lo);
  c.probs = self_convolve(p.probs, times, static_cast<std::int64_t>(lo), window_length, length);
  clamp_negative(c.probs);
  // 1 - (1 - inf)^times, stably; plus the cut tails where pessimistic.
  c.infinity_mass = -std::expm1(t * std::log1p(-p.infinity_mass));
  if (p.pessimistic) c.infinity_mass += tail_mass_truncation;
  c.infinity_mass = std::min(c.infinity_mass, 1.0);
  return c;
}

double delta_for_epsilon(const PldPmf& p, double epsilon) {
  double delta = p.infinity_mass;
  for (std::size_t i = p.probs.size(); i-- > 0;) {
    const double loss = p.loss(i);
    if (!(loss > epsilon)) break;
    delta += -std::expm1(epsilon - loss) * p.probs[i];
  }
  return std::min(1.0, std::max(0.0, delta));
}

// From the top loss down, without cancellation: with S(e) the mass of the
// losses above e and D(e) = sum over them of mass (1 - e^(e - loss)),
// D(e - h) = (1 - e^-h) S(e - h) + e^-h D(e), every term >= 0.
bool profile_dominates(const PldPmf& a, const PldPmf& b) {
  const double h = a.interval;
  const std::int64_t top = std::max(a.lower + static_cast<std::int64_t>(a.probs.size()),
                                    b.lower + static_cast<std::int64_t>(b.probs.size()));
  auto mass = [](const PldPmf& p, std::int64_t k) {
    const std::int64_t i = k - p.lower;
    return i >= 0 && i < static_cast<std::int64_t>(p.probs.size()) ? p.probs[static_cast<std::size_t>(i)] : 0.0;
  };
  const double keep = std::exp(-h), gain = -std::expm1(-h);
  double sa = 0, sb = 0, da = 0, db = 0;  // S and D at eps = k h, for losses above it
  for (std::int64_t k = top; k >= 0; --k) {
    if (a.infinity_mass + da < (b.infinity_mass + db) * (1 - 1e-9)) return false;
    sa += mass(a, k);
    sb += mass(b, k);
    da = gain * sa + keep * da;
    db = gain * sb + keep * db;
  }
  return true;
}

double epsilon_for_delta(const PldPmf& p, double delta) {
  if (p.infinity_mass > delta) return kInf;
  // From the top loss down: delta(eps) = upper - e^eps lower over the losses
  // above eps, with upper = inf + sum mass and lower = sum mass e^-loss.
  double upper = p.infinity_mass, lower = 0;
  for (std::size_t i = p.probs.size(); i-- > 0;) {
    const double loss = p.loss(i);
    if (upper > delta && lower > 0 && std::log((upper - delta) / lower) >= loss) break;
    upper += p.probs[i];
    lower += std::exp(-loss) * p.probs[i];
    if (upper >= delta && lower == 0) return std::max(0.0, loss);
  }
  if (upper <= lower + delta) return 0.0;
  return std::log((upper - delta) / lower);
}

}  // namespace dpsosp::privacy::detail
