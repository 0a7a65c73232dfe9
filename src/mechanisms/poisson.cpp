// The Poisson-subsampled Gaussian mechanism and its banded form
// (include/dpsosp/mechanism.hpp), with their rows in the mechanism table.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/mechanism.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "mechanisms/checks.hpp"
#include "mechanisms/mechanism_rows.hpp"

namespace dpsosp {
namespace {

using detail::check_sensitivity;
using detail::check_target;
using detail::kInf;

// Poisson-subsampled Gaussian over clipped sums: add/remove sensitivity C,
// composed over the planned steps by PLD or RDP. The record is fixed at
// construction (the PLD takes tens of milliseconds).
//
// With bands >= 1, the amplified banded matrix factorization (Choquette-Choo
// et al. 2023, arXiv 2306.08153; docs/privacy-accounting.md section 9): step
// t samples from group t mod bands of the caller's records (positions
// [g m, (g + 1) m), m = floor(n / bands)), and the release is the exact sum
// plus z C (C^{-1} xi)_t, xi standard normal, C the banded square root scaled
// by its column norm: post-processing of C' u + z C xi with C' = C / ||C e||
// of unit column norm. A record's participations are bands steps apart and
// C is bands-banded, so they move disjoint rows of C' u, each by at most C:
// the run is `steps` Poisson-subsampled Gaussian steps at multiplier z (the
// cycles), and makes at most bands * steps releases (refused past them).
class PoissonMechanism final : public PoissonGaussianMechanism {
 public:
  PoissonMechanism(Index dim, const NoiseKey& key, double clip, double q, std::uint64_t steps,
                   const PrivacyTarget& target, std::optional<double> z, Accountant accountant, Index bands)
      : clip_(clip),
        q_(q),
        replace_one_(target.adjacency == Adjacency::kReplaceOne),
        prior_(target.prior_mu),
        z_(z ? *z : calibrate(q, steps, target, accountant, replace_one_)),
        banded_(bands > 0),
        bands_(std::max<Index>(1, bands)),
        horizon_(static_cast<std::uint64_t>(bands_) * steps),
        factorization_(BandedFactorization::square_root(bands_)),
        noise_stream_(key, StreamPurpose::kGaussianNoise),
        sampling_stream_(key, StreamPurpose::kPoisson),
        noise_(static_cast<Eigen::Index>(dim)) {
    if (!(z_ > 0) || !std::isfinite(z_)) throw Error("Poisson mechanism: the noise multiplier must be finite and > 0");
    if (bands_ > 1) filter_.emplace(factorization_, dim);
    record_.mechanism = banded_ ? MechanismKind::kBandedPoisson : MechanismKind::kPoissonGaussian;
    record_.adjacency = Adjacency::kZeroOut;
    record_.accountant = accountant;
    record_.delta = target.delta;
    record_.noise_multiplier = z_;
    record_.sensitivity = clip_;
    record_.sigma = z_ * clip_ * factorization_.column_norm();
    if (prior_ > 0 && accountant != Accountant::kPld)
      throw Error(
          "Poisson mechanism: a prior release (the private scale estimate) is composed by PLD only; use "
          "accountant = pld");
    // With a prior release the RDP figure here would leave it out: none is stated.
    record_.epsilon_rdp = prior_ > 0 ? kInf : privacy::dpsgd_poisson_epsilon(q, z_, steps, target.delta);
    if (accountant == Accountant::kPld) {
      record_.epsilon_pld =
          privacy::dpsgd_pld_epsilon(q, z_, steps, target.delta, privacy::Neighbouring::kAddRemove, {}, prior_);
    } else {
      try {  // shown for comparison; a PLD too large to build does not stop an RDP run
        record_.epsilon_pld = privacy::dpsgd_pld_epsilon(q, z_, steps, target.delta);
      } catch (const Error&) {
        record_.epsilon_pld = kInf;
      }
    }
    record_.epsilon_zero_out = accountant == Accountant::kPld ? record_.epsilon_pld : record_.epsilon_rdp;
    record_.epsilon_replace_one = replace_one_epsilon(q, z_, steps, target.delta, prior_);
    if (replace_one_) {
      // The target was replace-one: that is the guarantee, by PLD (epsilon_pld
      // its figure; RDP has no replace-one form here, so epsilon_rdp is none),
      // the zero-out figure beside it.
      record_.adjacency = Adjacency::kReplaceOne;
      record_.epsilon = record_.epsilon_pld = record_.epsilon_replace_one;
      record_.epsilon_rdp = kInf;
    } else {
      record_.epsilon = record_.epsilon_zero_out;
    }
    record_.depth = 1;
    record_.sampling_rate = q_;
    record_.cycles = steps;
    record_.prior_mu = prior_;
    if (banded_) {
      record_.column_norm = factorization_.column_norm();
      record_.bands = static_cast<int>(bands_);
      record_.horizon = horizon_;
    }
  }
  MechanismKind kind() const override { return record_.mechanism; }
  void release(const Vec& exact, bool, double sensitivity, Vec& released) override {
    check_sensitivity("Poisson mechanism", sensitivity, clip_);
    if (banded_ && released_ >= horizon_)
      throw Error("Poisson mechanism: release " + std::to_string(released_ + 1) + " is past the " +
                  std::to_string(horizon_) + " releases (bands x cycles) the noise was calibrated for");
    if (bands_ > 1) {
      noise_stream_.fill(noise_, 1.0);
      released = exact + record_.sigma * filter_->next(noise_);
    } else {
      noise_stream_.fill(noise_, z_ * clip_);
      released = exact + noise_;
    }
    ++released_;
  }
  // Each record of the step's group with probability q, by geometric gaps:
  // O(q m). Records are positions in [0, n): the group of the next release
  // (all n with one band).
  IndexList sample(Index n) override {
    const Index m = n / bands_;
    const Index first = (released_ % bands_) * m;
    IndexList batch;
    if (q_ >= 1.0) {
      batch.resize(m);
      for (Index i = 0; i < m; ++i) batch[i] = first + i;
      return batch;
    }
    const double log1mq = std::log1p(-q_);
    double position = -1.0;
    for (;;) {
      position += 1.0 + std::floor(std::log(sampling_stream_.uniform()) / log1mq);
      if (position >= static_cast<double>(m)) break;
      batch.push_back(first + static_cast<Index>(position));
    }
    return batch;
  }
  PrivacyRecord account() const override { return record_; }

 private:
  // The same steps under replace-one (docs/privacy-accounting.md section 10):
  // the replaced record's position is sampled with probability q and moves
  // the release from g to g', ||g - g'|| <= 2C; by PLD whichever accountant
  // calibrated (RDP has no replace-one form for Poisson sampling here). Its
  // noise multiplier is sigma / (2C) = z / 2. +inf where the PLD would pass
  // its size limit.
  static double replace_one_epsilon(double q, double z, std::uint64_t steps, double delta, double prior_mu) {
    try {
      return privacy::dpsgd_pld_epsilon(q, z / 2, steps, delta, privacy::Neighbouring::kReplaceOne, {}, prior_mu);
    } catch (const Error&) {
      return kInf;
    }
  }
  // z of the zero-out form (sigma = z C). replace-one: the multiplier of the
  // sensitivity-2C release, sigma / (2C), is calibrated; z is twice it.
  static double calibrate(double q, std::uint64_t steps, const PrivacyTarget& t, Accountant a, bool replace_one) {
    if (replace_one) {
      if (a != Accountant::kPld)
        throw Error(
            "Poisson mechanism: a replace-one target is accounted by PLD only (the RDP bound here is for "
            "add/remove); use accountant = pld, or adjacency = zero-out");
      return 2 * privacy::calibrate_dpsgd_noise_pld(q, steps, t.epsilon, t.delta, privacy::Neighbouring::kReplaceOne,
                                                    {}, t.prior_mu);
    }
    // A prior under RDP is refused by the constructor, after this.
    return a == Accountant::kPld ? privacy::calibrate_dpsgd_noise_pld(q, steps, t.epsilon, t.delta,
                                                                      privacy::Neighbouring::kAddRemove, {}, t.prior_mu)
                                 : privacy::calibrate_dpsgd_noise(q, steps, t.epsilon, t.delta);
  }

  double clip_, q_;
  bool replace_one_;
  double prior_;  // the prior release's mu (PrivacyTarget::prior_mu), composed by PLD
  double z_;
  bool banded_;  // the cyclic groups and the banded record, even with one band
  Index bands_;
  std::uint64_t horizon_, released_ = 0;
  BandedFactorization factorization_;
  std::optional<BandedInverseFilter> filter_;
  GaussianStream noise_stream_, sampling_stream_;
  Vec noise_;
  PrivacyRecord record_;
};

}  // namespace

std::unique_ptr<PoissonGaussianMechanism> make_poisson_gaussian_mechanism(Index dim, const NoiseKey& key, double clip,
                                                                          double sampling_rate, std::uint64_t steps,
                                                                          const PrivacyTarget& target,
                                                                          std::optional<double> noise_multiplier,
                                                                          Accountant accountant, Index bands) {
  check_target("Poisson mechanism", target);
  if (target.noise == NoiseMode::kSecure)
    throw Error(
        "Poisson mechanism: secure noise is not available for Poisson sampling (its PLD and RDP bounds are "
        "for continuous Gaussian noise); use float noise or single-pass dpsgd");
  if (!(clip > 0) || !std::isfinite(clip)) throw Error("Poisson mechanism: the clip norm must be finite and > 0");
  if (!(sampling_rate > 0 && sampling_rate <= 1)) throw Error("Poisson mechanism: the sampling rate must be in (0, 1]");
  if (steps < 1) throw Error("Poisson mechanism: at least one step");
  return std::make_unique<PoissonMechanism>(dim, key, clip, sampling_rate, steps, target, noise_multiplier, accountant,
                                            bands);
}

std::vector<MechanismInfo> poisson_mechanism_rows() {
  MechanismInfo plain;
  plain.kind = MechanismKind::kPoissonGaussian;
  plain.name = "poisson-gaussian";
  plain.summary = "Poisson-subsampled Gaussian releases of clipped sums (PLD or RDP)";
  plain.poisson = true;
  plain.accounting = [](const PrivacyRecord& r) {
    return std::string(r.accountant == Accountant::kPld ? "pld-poisson" : "rdp-poisson");
  };
  plain.fields = {"epsilon_pld"};
  plain.privacy_form = "poisson";
  MechanismInfo banded = plain;
  banded.kind = MechanismKind::kBandedPoisson;
  banded.name = "banded-mf-poisson";
  banded.summary = "the banded square-root factorization with cyclic Poisson sampling (PLD or RDP of its cycles)";
  banded.accounting = [](const PrivacyRecord& r) {
    return std::string(r.accountant == Accountant::kPld ? "pld-banded-mf" : "rdp-banded-mf");
  };
  banded.fields = {"epsilon_pld", "horizon", "column_norm", "bands", "sampling_rate", "cycles"};
  return {plain, banded};
}

}  // namespace dpsosp
