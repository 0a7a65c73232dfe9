// The PLD of the (Poisson-subsampled) Gaussian mechanism: its privacy loss as
// a monotone function of the noisy output, and its discretization (formulas:
// docs/privacy-accounting.md, "PLD accountant"; dp_accounting's
// privacy_loss_mechanism.py GaussianPrivacyLoss and
// privacy_loss_distribution.py _create_pld_pmf_from_monotone_privacy_loss).
//
// With mu = N(0, sigma^2), s the record bound and q the sampling rate, the
// worst pair of output distributions (upper, lower) is
//   remove:  upper = (1-q) mu + q mu(. + s),  lower = mu
//   add:     upper = mu,                      lower = (1-q) mu + q mu(. - s)
//   replace: upper = (1-q) mu + q mu(. + s),  lower = (1-q) mu + q mu(. - s)
// and the privacy loss log(upper(x) / lower(x)) decreases in x.
#include <cmath>
#include <memory>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/pld.hpp"
#include "privacy/normal.hpp"
#include "privacy/pld_pmf.hpp"

namespace dpsosp::privacy {
namespace {

using detail::kInf;
using detail::log_add;
using detail::log_ndtr;
using detail::ndtr;
using detail::PldPmf;

enum class Direction { kAdd, kRemove, kReplace };

// log(1 + (e^t - 1) / q) for t > log(1 - q): the loss without subsampling
// whose subsampled loss is t (remove).
double unsubsampled_loss(double t, double q) {
  if (t > 30) return t - std::log(q) + std::log1p((q - 1) * std::exp(-t));
  return std::log1p(std::expm1(t) / q);
}

// log(sinh(a)), a > 0.
double log_sinh(double a) { return a + std::log1p(-std::exp(-2 * a)) - detail::kLn2; }
// asinh(e^a), without overflow.
double asinh_exp(double a) {
  return a > 20 ? a + std::log1p(std::sqrt(1 + std::exp(-2 * a))) : std::asinh(std::exp(a));
}

class SubsampledGaussianLoss {
 public:
  SubsampledGaussianLoss(double sigma, double s, double q, Direction d, double log_mass_truncation)
      : sigma_(sigma), s_(s), q_(q), d_(d) {
    // Each tail of mu beyond the range holds 0.5 e^(log_mass_truncation).
    lower_x_ = sigma * detail::ndtr_inverse_log(log_mass_truncation - detail::kLn2);
    upper_x_ = -lower_x_;
    if (d == Direction::kAdd)
      upper_x_ += s;
    else
      lower_x_ -= s;
  }
  double lower_x() const { return lower_x_; }
  double upper_x() const { return upper_x_; }

  double loss(double x) const {
    switch (d_) {
      case Direction::kRemove: return loss_remove(x);
      case Direction::kAdd: return -loss_remove(-x);
      case Direction::kReplace: return loss_remove(x) - loss_remove(-x);
    }
    return 0;
  }

  // The largest x with loss(x) >= eps.
  double inverse_loss(double eps) const {
    const double v = sigma_ * sigma_ / s_;
    switch (d_) {
      case Direction::kRemove:
        if (q_ == 1) return -s_ / 2 - eps * v;
        if (eps <= std::log1p(-q_)) return kInf;
        return -s_ / 2 - unsubsampled_loss(eps, q_) * v;
      case Direction::kAdd:
        if (q_ == 1) return s_ / 2 - eps * v;
        if (eps >= -std::log1p(-q_)) return -kInf;
        return s_ / 2 + unsubsampled_loss(-eps, q_) * v;
      case Direction::kReplace: {
        if (q_ == 1) return -eps * v / 2;
        if (eps == 0) return 0;
        // x = v (asinh(-sinh(eps/2) alpha) - eps/2), alpha = e^(s^2/(2 sigma^2)) (1-q)/q.
        const double log_alpha = 0.5 * (s_ / sigma_) * (s_ / sigma_) + std::log1p(-q_) - std::log(q_);
        const double a = asinh_exp(log_alpha + log_sinh(std::abs(eps) / 2));
        return v * ((eps > 0 ? -a : a) - eps / 2);
      }
    }
    return 0;
  }

  double upper_cdf(double x) const {
    if (d_ == Direction::kAdd) return ndtr(x / sigma_);
    if (q_ == 1) return ndtr((x + s_) / sigma_);
    return (1 - q_) * ndtr(x / sigma_) + q_ * ndtr((x + s_) / sigma_);
  }
  double lower_log_cdf(double x) const {
    if (d_ == Direction::kRemove) return log_ndtr(x / sigma_);
    if (q_ == 1) return log_ndtr((x - s_) / sigma_);
    return log_add(std::log1p(-q_) + log_ndtr(x / sigma_), std::log(q_) + log_ndtr((x - s_) / sigma_));
  }

  // The hockey-stick divergence of the pair at eps: upper(x <= x*) - e^eps
  // lower(x <= x*), x* = inverse_loss(eps) (the loss is >= eps exactly there).
  double delta_for_epsilon(double eps) const {
    if (q_ < 1 && d_ == Direction::kAdd && eps >= -std::log1p(-q_)) return 0;
    if (q_ < 1 && d_ == Direction::kRemove && eps <= std::log1p(-q_)) return -std::expm1(eps);
    const double x = inverse_loss(eps);
    const double delta = upper_cdf(x) - std::exp(eps + lower_log_cdf(x));
    return std::min(1.0, std::max(0.0, delta));
  }

 private:
  double loss_remove(double x) const {
    const double l = s_ * (-0.5 * s_ - x) / (sigma_ * sigma_);
    if (q_ == 1) return l;
    return log_add(std::log(q_) + l, std::log1p(-q_));
  }

  double sigma_, s_, q_;
  Direction d_;
  double lower_x_ = 0, upper_x_ = 0;
};

void check_bins(double count, std::size_t max_bins, double interval) {
  if (!(count <= static_cast<double>(max_bins)))
    detail::too_many_bins(count < 1e18 ? static_cast<std::size_t>(count) : 0, max_bins, interval);
}

// Pessimistic connect-the-dots on the grid eps_k = k h, k from
// floor(loss(upper_x)/h) to ceil(loss(lower_x)/h) (Doroshenko et al. 2022,
// Algorithm 1 with a fixed gap): the masses whose hockey-stick curve is the
// piecewise-linear (in e^eps) interpolation of the exact delta(eps_k); the
// mass at +inf is delta at the top loss.
PldPmf connect_the_dots(const SubsampledGaussianLoss& m, double h, std::size_t max_bins) {
  const double k_lo = std::floor(m.loss(m.upper_x()) / h), k_hi = std::ceil(m.loss(m.lower_x()) / h);
  check_bins(k_hi - k_lo + 1, max_bins, h);
  const auto count = static_cast<std::size_t>(k_hi - k_lo + 1);
  std::vector<double> deltas(count);
  for (std::size_t i = 0; i < count; ++i) {
    deltas[i] = m.delta_for_epsilon((k_lo + static_cast<double>(i)) * h);
    if (i > 0) deltas[i] = std::min(deltas[i], deltas[i - 1]);  // non-increasing, against roundoff
  }
  PldPmf p;
  p.interval = h;
  p.pessimistic = true;
  p.lower = static_cast<std::int64_t>(k_lo);
  p.infinity_mass = deltas.back();
  p.probs.assign(count, 0.0);
  if (count == 1) {
    p.probs[0] = 1 - deltas[0];
    return p;
  }
  const double em1 = std::expm1(h), e = std::exp(h);
  p.probs[0] = 1 - deltas[0] + (deltas[1] - deltas[0]) / em1;
  for (std::size_t i = 1; i + 1 < count; ++i)
    p.probs[i] = ((deltas[i + 1] - deltas[i]) - (deltas[i] - deltas[i - 1]) * e) / em1;
  p.probs[count - 1] = (deltas[count - 1] - deltas[count - 2]) / std::expm1(-h);
  for (double& v : p.probs) v = std::max(0.0, v);
  return p;
}

// Privacy buckets (Meiser & Mohammadi 2018; dp_accounting's default for
// optimistic estimates): the outputs between the points where the loss
// crosses k h get the loss rounded down (optimistic) or up (pessimistic);
// the tails beyond [lower_x, upper_x]: optimistic, the lower one at
// loss(lower_x) rounded down and the upper one dropped; pessimistic, the lower
// one at +inf and the upper one at loss(upper_x) rounded up.
PldPmf privacy_buckets(const SubsampledGaussianLoss& m, double h, bool pessimistic, std::size_t max_bins) {
  const double lower_x = m.lower_x(), upper_x = m.upper_x();
  const double top = m.loss(lower_x), bottom = m.loss(upper_x);
  double k = std::floor(top / h);
  const double k_bottom = std::floor(bottom / h);
  check_bins(k - k_bottom + 2, max_bins, h);
  PldPmf p;
  p.interval = h;
  p.pessimistic = pessimistic;
  p.lower = static_cast<std::int64_t>(k_bottom) - 1;
  p.probs.assign(static_cast<std::size_t>(k - k_bottom + 3), 0.0);
  const auto add = [&](double index, double mass) {
    p.probs[static_cast<std::size_t>(static_cast<std::int64_t>(index) - p.lower)] += mass;
  };
  if (pessimistic) {
    p.infinity_mass = m.upper_cdf(lower_x);
    add(std::ceil(bottom / h), 1 - m.upper_cdf(upper_x));
  } else {
    add(std::floor(top / h), m.upper_cdf(lower_x));
  }
  double x = lower_x, cdf = m.upper_cdf(lower_x);
  while (x < upper_x) {
    // Over [x, next] the loss lies in [k h, (k + 1) h].
    const double next = k * h <= bottom ? upper_x : std::min(upper_x, m.inverse_loss(k * h));
    const double next_cdf = m.upper_cdf(next);
    add(pessimistic ? k + 1 : k, std::max(0.0, next_cdf - cdf));
    x = next;
    cdf = next_cdf;
    k -= 1;
  }
  return p;
}

PldPmf discretize(const SubsampledGaussianLoss& m, const PldOptions& o) {
  return o.pessimistic ? connect_the_dots(m, o.discretization, o.max_bins)
                       : privacy_buckets(m, o.discretization, false, o.max_bins);
}

[[noreturn]] void fail(const char* function, const char* rule, double got) {
  std::ostringstream msg;
  msg.precision(17);
  msg << "privacy::" << function << ": " << rule << ", got " << got;
  throw Error(msg.str());
}

void check_positive(const char* function, const char* name, double v) {
  if (!(v > 0) || !std::isfinite(v)) fail(function, (std::string(name) + " must be finite and > 0").c_str(), v);
}

}  // namespace

PrivacyLossDistribution gaussian_pld(double sigma, double sensitivity, const PldOptions& options) {
  check_positive("gaussian_pld", "sigma", sigma);
  check_positive("gaussian_pld", "sensitivity", sensitivity);
  options.Validate();
  const SubsampledGaussianLoss m(sigma, sensitivity, 1.0, Direction::kRemove, options.log_mass_truncation);
  return PrivacyLossDistribution(options, std::make_shared<PldPmf>(discretize(m, options)), nullptr);
}

PrivacyLossDistribution poisson_gaussian_pld(double sampling_rate, double sigma, double record_bound,
                                             Neighbouring neighbouring, const PldOptions& options) {
  const double q = sampling_rate;
  if (!(q > 0 && q <= 1)) fail("poisson_gaussian_pld", "sampling_rate must be in (0, 1]", q);
  check_positive("poisson_gaussian_pld", "sigma", sigma);
  check_positive("poisson_gaussian_pld", "record_bound", record_bound);
  options.Validate();
  const double lmt = options.log_mass_truncation;
  if (neighbouring == Neighbouring::kReplaceOne) {
    const SubsampledGaussianLoss m(sigma, record_bound, q, Direction::kReplace, lmt);
    return PrivacyLossDistribution(options, std::make_shared<PldPmf>(discretize(m, options)), nullptr);
  }
  const SubsampledGaussianLoss remove(sigma, record_bound, q, Direction::kRemove, lmt);
  auto remove_pmf = std::make_shared<PldPmf>(discretize(remove, options));
  if (q == 1) return PrivacyLossDistribution(options, std::move(remove_pmf), nullptr);
  const SubsampledGaussianLoss add(sigma, record_bound, q, Direction::kAdd, lmt);
  return PrivacyLossDistribution(options, std::move(remove_pmf), std::make_shared<PldPmf>(discretize(add, options)));
}

}  // namespace dpsosp::privacy
