// The matrix-factorization mechanism (include/dpsosp/mechanism.hpp,
// docs/matrix-factorization.md): one factorization A = B C of the prefix sums
// over a whole run of at most `horizon` releases, with C^{-1} a BLT
// (factorization.hpp).
//
// The stream it factorizes is the increments of the caller's exact estimate:
// u_t = exact_t - exact_{t-1} within a phase, and at a restart u_t =
// exact_t - released_{t-1}, the new estimate against the last *released* one
// (public), so that u_t holds only the fresh records of step t. Release t is
// then released_t = sum_{i <= t} u_i + (B z)_t: within a phase the exact
// estimate plus correlated noise, and across phases the noise telescopes
// where the iterates sum the releases.
//
// Privacy: one record is in one u_i, with ||delta u_i|| <= s; C u moves by
// s * (column i of C), of norm at most C's first column's. Gaussian noise
// N(0, sigma^2 I) on C u makes the run (s * max_column_norm / sigma)-GDP, for
// adaptively chosen u (the mechanism is a lower-triangular factorization:
// Denisov, McMahan, Rush, Smith, Thakurta 2022, Thm 2.1), and the releases
// are post-processing of C u + z. With passes over one sample order of
// `period` releases each, a record is in u_i, u_{i + period}, ... for one i,
// and C u moves by at most s * cyclic_participation_norm (docs/privacy-accounting.md).
//
// Secure mode: w_t = round((C u)_t / grid) + N_Z(0, scale^2), exact integers,
// and released = grid * B-filter of w (post-processing of the integers). A
// record moves the rounded values of the horizon's R = horizon steps, so the
// rounding adds grid sqrt(d R) to the sensitivity (discrete_noise).
#include <omp.h>

#include <cmath>
#include <limits>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/mechanism.hpp"
#include "dpsosp/privacy.hpp"
#include "mechanisms/checks.hpp"
#include "mechanisms/mechanism_rows.hpp"
#include "mechanisms/relations.hpp"
#include "mechanisms/secure.hpp"

namespace dpsosp {
namespace {

int team_size() { return omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads()); }

void check_release(double sensitivity, double bound, std::uint64_t t, Index horizon) {
  detail::check_sensitivity("matrix-factorization mechanism", sensitivity, bound);
  if (t >= horizon)
    throw Error("matrix-factorization mechanism: release " + std::to_string(t + 1) + " is past the horizon of " +
                std::to_string(horizon) + " releases the noise was calibrated for");
}

// The increment u_t of the exact estimate (see the top of the file).
class Increments {
 public:
  explicit Increments(Index dim)
      : last_exact_(Vec::Zero(static_cast<Eigen::Index>(dim))),
        last_released_(Vec::Zero(static_cast<Eigen::Index>(dim))) {}
  const Vec& next(const Vec& exact, bool restart) {
    u_ = exact - (restart ? last_released_ : last_exact_);
    last_exact_ = exact;
    return u_;
  }
  void released(const Vec& r) { last_released_ = r; }

 private:
  Vec last_exact_, last_released_, u_;
};

// The sensitivity of C u per unit of a release's: one participation, or one
// a pass when passes of `period` releases cover the horizon.
double participation_norm(const BltFactorization& f, Index horizon, Index period) {
  return period > 0 && period < horizon ? f.cyclic_participation_norm(horizon, period) : f.max_column_norm(horizon);
}

PrivacyRecord base_record(const BltFactorization& f, Index horizon, Index period, double bound, double delta) {
  PrivacyRecord r;
  r.mechanism = MechanismKind::kMatrixFactorization;
  r.adjacency = Adjacency::kReplaceOne;
  r.delta = delta;
  r.depth = 1;
  r.horizon = horizon;
  r.column_norm = participation_norm(f, horizon, period);
  r.buffers = static_cast<int>(f.buffers());
  r.sensitivity = bound;
  return r;
}

class MatrixFactorizationMechanism final : public Mechanism {
 public:
  MatrixFactorizationMechanism(Index dim, const NoiseKey& key, double bound, Index horizon, Index period,
                               const PrivacyTarget& target, std::optional<double> sigma)
      : bound_(bound),
        horizon_(horizon),
        period_(period),
        delta_(target.delta),
        factorization_(BltFactorization::square_root(horizon)),
        sigma_(sigma ? *sigma : mf_noise_sigma(bound, horizon, target, dim, period)),
        increments_(dim),
        prefix_(Vec::Zero(static_cast<Eigen::Index>(dim))),
        noise_filter_(factorization_, dim),
        stream_(key, StreamPurpose::kMatrixNoise),
        z_(static_cast<Eigen::Index>(dim)) {
    if (!(sigma_ > 0) || !std::isfinite(sigma_))
      throw Error("matrix-factorization mechanism: sigma must be finite and > 0");
  }
  MechanismKind kind() const override { return MechanismKind::kMatrixFactorization; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    check_release(sensitivity, bound_, t_, horizon_);
    ++t_;
    prefix_ += increments_.next(exact, restart);
    stream_.fill(z_, sigma_);
    released = prefix_ + noise_filter_.next(z_);
    increments_.released(released);
  }
  PrivacyRecord account() const override {
    PrivacyRecord r = base_record(factorization_, horizon_, period_, bound_, delta_);
    r.sigma = sigma_;
    r.noise_multiplier = sigma_ / bound_;
    r.mu = bound_ * r.column_norm / sigma_;
    r.epsilon = privacy::gdp_epsilon(r.mu, delta_);
    r.zcdp_rho = r.mu * r.mu / 2;
    r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, delta_);
    detail::state_relations_of_replace_one(r);
    return r;
  }

 private:
  double bound_;
  Index horizon_, period_;
  double delta_;
  BltFactorization factorization_;
  double sigma_;
  Increments increments_;
  Vec prefix_;
  BltNoiseFilter noise_filter_;
  GaussianStream stream_;
  Vec z_;
  std::uint64_t t_ = 0;
};

class SecureMatrixFactorizationMechanism final : public Mechanism {
 public:
  SecureMatrixFactorizationMechanism(Index dim, const NoiseKey& key, double bound, Index horizon, Index period,
                                     const PrivacyTarget& target, std::optional<double> sigma)
      : dim_(dim),
        key_(key),
        bound_(bound),
        horizon_(horizon),
        period_(period),
        delta_(target.delta),
        factorization_(BltFactorization::square_root(horizon)),
        increments_(dim),
        exact_filter_(factorization_, dim),
        noise_filter_(factorization_, dim),
        noise_(static_cast<Eigen::Index>(dim)) {
    const double column = participation_norm(factorization_, horizon, period);
    // z: the multiplier of the rounded sequence's sensitivity; sigma, if given,
    // is the noise per coordinate.
    const double z =
        sigma ? *sigma / (bound * column) : 1.0 / std::sqrt(2.0 * privacy::zcdp_rho(target.epsilon, target.delta));
    noise_ = Vec::Zero(static_cast<Eigen::Index>(dim));
    discrete_ = discrete_noise(bound * column, dim, z, horizon);
  }
  MechanismKind kind() const override { return MechanismKind::kMatrixFactorization; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    check_release(sensitivity, bound_, t_, horizon_);
    // This release's noise, drawn before the data of the step are touched.
    fill_discrete_gaussian(key_, StreamPurpose::kDiscreteNoise, static_cast<std::uint32_t>(t_), discrete_.scale,
                           noise_.data(), dim_, team_size());
    ++t_;
    const Vec& cu = exact_filter_.next(increments_.next(exact, restart));
    round_and_add(cu, discrete_.grid, noise_, w_);
    released = discrete_.grid * noise_filter_.next(w_);  // post-processing of the integers w
    increments_.released(released);
  }
  PrivacyRecord account() const override {
    PrivacyRecord r = base_record(factorization_, horizon_, period_, bound_, delta_);
    r.noise = NoiseMode::kSecure;
    const double scale = static_cast<double>(discrete_.scale);
    r.zcdp_rho = discrete_.integer_sensitivity * discrete_.integer_sensitivity / (2 * scale * scale);
    r.epsilon = r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, delta_);
    r.grid = discrete_.grid;
    r.sigma = discrete_.grid * scale;
    r.noise_multiplier = scale / discrete_.integer_sensitivity;
    detail::state_relations_of_replace_one(r);
    return r;
  }

 private:
  Index dim_;
  NoiseKey key_;
  double bound_;
  Index horizon_, period_;
  double delta_;
  BltFactorization factorization_;
  Increments increments_;
  BltInverseFilter exact_filter_;
  BltNoiseFilter noise_filter_;
  DiscreteNoise discrete_;
  Vec noise_, w_;
  std::uint64_t t_ = 0;
};

}  // namespace

double mf_noise_sigma(double sensitivity_bound, Index horizon, const PrivacyTarget& target, Index dim, Index period) {
  target.Validate();
  if (!target.is_private()) throw Error("matrix-factorization mechanism: needs a finite epsilon (a private target)");
  if (!(sensitivity_bound > 0) || !std::isfinite(sensitivity_bound))
    throw Error("matrix-factorization mechanism: the sensitivity bound must be finite and > 0");
  if (horizon == 0) throw Error("matrix-factorization mechanism: the horizon must be at least 1 release");
  const double column = participation_norm(BltFactorization::square_root(horizon), horizon, period);
  if (target.noise == NoiseMode::kSecure) {
    const DiscreteNoise n =
        discrete_noise(sensitivity_bound * column, dim,
                       1.0 / std::sqrt(2.0 * privacy::zcdp_rho(target.epsilon, target.delta)), horizon);
    return n.grid * static_cast<double>(n.scale);
  }
  return sensitivity_bound * column / privacy::gdp_mu(target.epsilon, target.delta);
}

std::unique_ptr<Mechanism> make_mf_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound, Index horizon,
                                             const PrivacyTarget& target, std::optional<double> sigma, Index period) {
  target.Validate();
  if (!target.is_private()) throw Error("matrix-factorization mechanism: needs a finite epsilon (a private target)");
  if (!(sensitivity_bound > 0) || !std::isfinite(sensitivity_bound))
    throw Error("matrix-factorization mechanism: the sensitivity bound must be finite and > 0");
  if (horizon == 0) throw Error("matrix-factorization mechanism: the horizon must be at least 1 release");
  if (horizon > std::numeric_limits<std::uint32_t>::max())
    throw Error("matrix-factorization mechanism: a horizon above 2^32 - 1 releases");
  if (dim == 0) throw Error("matrix-factorization mechanism: dim must be > 0");
  if (target.noise == NoiseMode::kSecure)
    return std::make_unique<SecureMatrixFactorizationMechanism>(dim, key, sensitivity_bound, horizon, period, target,
                                                                sigma);
  return std::make_unique<MatrixFactorizationMechanism>(dim, key, sensitivity_bound, horizon, period, target, sigma);
}

MechanismInfo mf_mechanism_row() {
  MechanismInfo r;
  r.kind = MechanismKind::kMatrixFactorization;
  r.name = "matrix-factorization";
  r.summary = "one square-root (BLT) factorization of the prefix sums over the run (exact GDP; zCDP with secure noise)";
  r.accounting = [](const PrivacyRecord& p) {
    return std::string(p.noise == NoiseMode::kSecure ? "zcdp-mf-discrete" : "gdp-mf");
  };
  r.fields = {"horizon", "column_norm", "buffers"};
  r.privacy_form = "mf";
  return r;
}

}  // namespace dpsosp
