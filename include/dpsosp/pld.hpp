// dpsosp: privacy-loss-distribution (PLD) accounting (docs/privacy-accounting.md,
// section "PLD accountant"). The design follows Google's dp_accounting `pld`
// package: a mechanism's privacy loss is discretized to multiples of an
// interval h with rounding that can only overstate every delta (pessimistic;
// Doroshenko et al. 2022, "Connect the dots"), composed by FFT convolution
// (Koskela et al. 2020), and read off as delta(eps) or eps(delta).
//
// A composite mechanism is accounted by composing the PLDs of its parts:
// a (Poisson-subsampled) Gaussian release with noise sigma and sensitivity s
// is poisson_gaussian_pld / gaussian_pld, repeated releases self_compose,
// different releases compose. Under add/remove the PLD has two directions
// (a record added, a record removed), both kept and the worse one reported.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace dpsosp::privacy {

namespace detail {
struct PldPmf;
}

/// How a PLD is discretized and truncated. The defaults are dp_accounting's.
struct PldOptions {
  /// The value discretization interval h: every privacy loss is a multiple of h.
  double discretization = 1e-4;
  /// ln of the noise mass outside the range a single mechanism is discretized
  /// over (its loss there is counted as +infinity, pessimistically).
  double log_mass_truncation = -50;
  /// Mass a composition may cut from the tails of its result: the upper tail
  /// is moved to +infinity and the lower tail onto the lowest kept loss
  /// (pessimistic), so every delta can only grow.
  double tail_mass_truncation = 1e-15;
  /// true: every delta(eps) is at least the mechanism's (a guarantee); false:
  /// at most it (privacy buckets rounded down; a lower bound, for bracketing
  /// the discretization error).
  bool pessimistic = true;
  /// The most bins (FFT length) a distribution may take; beyond it the
  /// construction throws Error (use a coarser discretization).
  std::size_t max_bins = std::size_t{1} << 23;
  /// Calibrations (calibrate_dpsgd_noise_pld) stop once their bracket is this
  /// narrow, relative to its feasible end (the one returned): 1e-6 for a run's
  /// noise, 1e-3 where calibrations only rank candidates (the automatic bands).
  double calibration_tolerance = 1e-6;
  /// Throws Error "PldOptions: FIELD = VALUE: RULE".
  void Validate() const;
};

/// The neighbouring relation of a subsampled PLD.
enum class Neighbouring {
  kAddRemove,   ///< one record added or removed (both directions); zero-out with n public
  kReplaceOne,  ///< one record replaced by another
};

/// A discretized privacy-loss distribution (immutable; copies share the data).
class PrivacyLossDistribution {
 public:
  /// The PLD of a release that reveals nothing (loss 0 with probability 1).
  static PrivacyLossDistribution identity(const PldOptions& options = {});

  /// The PLD of running this mechanism and then `other` (adaptively); both
  /// must have the same discretization and rounding.
  PrivacyLossDistribution compose(const PrivacyLossDistribution& other) const;
  /// The PLD of `times` >= 1 runs of this mechanism.
  PrivacyLossDistribution self_compose(std::uint64_t times) const;

  /// The hockey-stick divergence at eps >= 0: the smallest delta for which the
  /// mechanism is (eps, delta)-DP (pessimistic: an upper bound on it).
  double delta(double epsilon) const;
  /// The smallest eps >= 0 with delta(eps) <= delta (+inf where none is).
  double epsilon(double delta) const;

  /// Whether one distribution serves both directions (replace-one, or q = 1).
  bool symmetric() const { return add_ == nullptr; }
  /// Whether delta(eps) >= other.delta(eps) at every eps >= 0 (to a relative
  /// 1e-9 of rounding), so that this distribution may stand for `other` in a
  /// composition. Both must be symmetric, with the same discretization and
  /// rounding: their losses lie on one grid, between whose points each delta
  /// is a - b e^eps, so comparing at the grid points decides it.
  bool dominates(const PrivacyLossDistribution& other) const;
  /// Bins of the larger direction.
  std::size_t bins() const;
  /// Mass at +infinity of the larger direction.
  double infinity_mass() const;
  const PldOptions& options() const { return options_; }

  /// Internal: built by the factories below.
  PrivacyLossDistribution(const PldOptions& options, std::shared_ptr<const detail::PldPmf> remove,
                          std::shared_ptr<const detail::PldPmf> add);

 private:
  PldOptions options_;
  std::shared_ptr<const detail::PldPmf> remove_;  ///< the record removed (or the only direction)
  std::shared_ptr<const detail::PldPmf> add_;     ///< the record added; null when symmetric
};

/// The Gaussian mechanism: noise N(0, sigma^2) per coordinate on a release of
/// L2 sensitivity `sensitivity` (any adjacency; the PLD of (s / sigma)-GDP).
PrivacyLossDistribution gaussian_pld(double sigma, double sensitivity, const PldOptions& options = {});

/// The Poisson-subsampled Gaussian: each record enters the release with
/// probability `sampling_rate`, the release gets N(0, sigma^2) per coordinate,
/// and one record's contribution has L2 norm at most `record_bound` (the clip
/// norm C). Add/remove: the release moves by at most C, both directions are
/// kept; replace-one: the two neighbours' contributions are at most 2C apart
/// (mixtures centred at -C and +C, as dp_accounting's REPLACE).
PrivacyLossDistribution poisson_gaussian_pld(double sampling_rate, double sigma, double record_bound,
                                             Neighbouring neighbouring, const PldOptions& options = {});

// Poisson DP-SGD by PLD. The noise multiplier is z = sigma / s with s the
// sensitivity of the relation in use (C for add/remove, 2C for replace-one),
// as everywhere in dpsosp; at q = 1 both relations give (1/z)-GDP.
// prior_mu > 0: the steps follow a Gaussian release of mu-GDP on the same
// records (gaussian_pld(1, prior_mu), composed exactly): the figures and the
// calibration are the whole's. 0: none.

/// The PLD behind dpsgd_pld_epsilon and the others below: `steps`
/// Poisson-subsampled Gaussian steps at noise multiplier z (relative to the
/// relation's sensitivity), after the prior release if prior_mu > 0.
PrivacyLossDistribution dpsgd_pld(double sampling_rate, double noise_multiplier, std::uint64_t steps,
                                  Neighbouring neighbouring = Neighbouring::kAddRemove, const PldOptions& options = {},
                                  double prior_mu = 0);

/// eps of `steps` Poisson-subsampled Gaussian steps at delta (pessimistic:
/// a guarantee). Results are memoized (the same arguments give the same bits).
double dpsgd_pld_epsilon(double sampling_rate, double noise_multiplier, std::uint64_t steps, double delta,
                         Neighbouring neighbouring = Neighbouring::kAddRemove, const PldOptions& options = {},
                         double prior_mu = 0);
/// The same with optimistic rounding: a lower bound on the exact eps, so the
/// exact value lies in [dpsgd_pld_epsilon_optimistic, dpsgd_pld_epsilon].
double dpsgd_pld_epsilon_optimistic(double sampling_rate, double noise_multiplier, std::uint64_t steps, double delta,
                                    Neighbouring neighbouring = Neighbouring::kAddRemove, PldOptions options = {},
                                    double prior_mu = 0);
/// delta of `steps` steps at eps (pessimistic).
double dpsgd_pld_delta(double sampling_rate, double noise_multiplier, std::uint64_t steps, double epsilon,
                       Neighbouring neighbouring = Neighbouring::kAddRemove, const PldOptions& options = {},
                       double prior_mu = 0);
/// The noise multiplier z with dpsgd_pld_epsilon(q, z, steps, delta) <= epsilon,
/// within a relative options.calibration_tolerance (1e-6) of the smallest such
/// z (the feasible end of the bracket is returned). `start`: a z near the
/// answer (a coarser calibration's) to bracket it from, 0 for the RDP
/// calibration's. Memoized.
double calibrate_dpsgd_noise_pld(double sampling_rate, std::uint64_t steps, double epsilon, double delta,
                                 Neighbouring neighbouring = Neighbouring::kAddRemove, const PldOptions& options = {},
                                 double prior_mu = 0, double start = 0);

/// eps of tree-aggregated Gaussian releases (noise multiplier z, the longest
/// tree of `depth` levels) by PLD: a Gaussian of sensitivity sqrt(depth) / z;
/// agrees with the exact GDP figure to the discretization.
double tree_pld_epsilon(double noise_multiplier, int depth, double delta, const PldOptions& options = {});

}  // namespace dpsosp::privacy
