// dpsosp: privacy mechanisms. A mechanism owns its calibration (the noise for
// a target, a sensitivity bound and a schedule), its releases, and its
// accounting (the guarantee, fixed before the run). SPEC sections 3 and 8.
#pragma once
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/noise.hpp"
#include "dpsosp/target.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

enum class MechanismKind {
  kNone,                 ///< no noise (the non-private references)
  kTree,                 ///< binary tree mechanism, a fresh tree per phase (exact GDP)
  kGaussian,             ///< Gaussian noise on every release, accumulated within a phase (exact GDP)
  kPoissonGaussian,      ///< Poisson-subsampled Gaussian releases of clipped sums (PLD or RDP)
  kMatrixFactorization,  ///< one matrix factorization of the prefix sums over the run (exact GDP)
  /// the banded square-root factorization with cyclic Poisson sampling (PLD or RDP)
  kBandedPoisson,
};
/// "none", "tree", "gaussian", "poisson-gaussian", "matrix-factorization", "banded-mf-poisson".
std::string mechanism_name(MechanismKind kind);

struct PrivacyRecord;
/// A mechanism's row in the mechanism table: what the report and `dpsosp
/// privacy` say of it. Each row is defined beside its mechanism (mechanism.cpp,
/// poisson.cpp, matrix_factorization.cpp); mechanism.cpp lists them.
struct MechanismInfo {
  MechanismKind kind = MechanismKind::kNone;
  std::string name;      ///< the report's "mechanism"
  std::string summary;   ///< one line for the docs
  bool poisson = false;  ///< its records take part by Poisson sampling (PLD or RDP accounting)
  /// The report's "accounting" for a record of it (PrivacyRecord::accounting).
  std::string (*accounting)(const PrivacyRecord& record) = nullptr;
  /// The PrivacyRecord fields its report states besides every mechanism's
  /// ("epsilon_pld", "horizon", "column_norm", "buffers", "bands", "sampling_rate", "cycles").
  std::vector<std::string> fields;
  /// The `dpsosp privacy` form that reproduces its guarantee from the report's
  /// figures ("tree", "mf", "poisson"); empty where none does.
  std::string privacy_form;
};
const std::vector<MechanismInfo>& mechanism_table();
const MechanismInfo& mechanism_info(MechanismKind kind);

/// The guarantee a run states, fixed before it starts: (epsilon, delta)-DP for
/// `adjacency`, with the figures that reproduce it (docs/privacy-accounting.md).
struct PrivacyRecord {
  MechanismKind mechanism = MechanismKind::kNone;
  Adjacency adjacency = Adjacency::kNone;
  double epsilon = 0, delta = 0;
  double mu = 0;           ///< GDP parameter (0 where the accounting is RDP)
  double epsilon_rdp = 0;  ///< the RDP/zCDP figure at delta, for comparison with other tools
  /// Poisson dpsgd: the PLD figure at delta (pessimistic; +inf where the PLD
  /// would pass its size limit); 0 for the other mechanisms.
  double epsilon_pld = 0;
  /// Poisson dpsgd: which accountant made `epsilon` (and calibrated the noise).
  Accountant accountant = Accountant::kPld;
  double zcdp_rho = 0;  ///< zCDP rho (0 where it does not apply)
  /// The guarantee at `delta` under each relation (one of them is `epsilon`):
  /// replace-one and zero-out, so that runs of either kind compare like with
  /// like (docs/privacy-accounting.md section 10); NaN where not stated (no
  /// guarantee), +inf where the other relation's PLD would pass its size limit.
  double epsilon_replace_one = std::numeric_limits<double>::quiet_NaN();
  double epsilon_zero_out = std::numeric_limits<double>::quiet_NaN();
  double sigma = 0;             ///< per-coordinate noise of a release at the sensitivity bound
  double sensitivity = 0;       ///< the calibrated L2 sensitivity bound of a release
  double noise_multiplier = 0;  ///< sigma / sensitivity
  int depth = 0;                ///< tree depth of the guarantee (1 without a tree)
  /// The matrix-factorization mechanism: the releases its noise was
  /// calibrated for, the sensitivity of C u per unit of a release's (its
  /// factorization's largest column norm over them, or with passes over one
  /// order the largest norm of a sum of columns a pass apart:
  /// BltFactorization::cyclic_participation_norm) and its BLT buffers; 0 otherwise.
  Index horizon = 0;
  double column_norm = 0;
  int buffers = 0;
  /// The banded mechanism (kBandedPoisson): its bands (C's band width and the
  /// groups the steps cycle through), the sampling rate q within a group and
  /// the cycles (each record's Poisson steps, which the accounting composes);
  /// horizon = bands * cycles releases; 0 otherwise. The plain Poisson
  /// mechanism (kPoissonGaussian) keeps q and its steps as cycles too (its
  /// report does not state them: the run's params do).
  int bands = 0;
  double sampling_rate = 0;
  std::uint64_t cycles = 0;
  /// Poisson mechanisms: the mu of the prior Gaussian release composed into
  /// their PLD (PrivacyTarget::prior_mu), 0 where none.
  double prior_mu = 0;
  NoiseMode noise = NoiseMode::kFloat;
  /// The secure mode's grid (a power of two; the tree's, or the first
  /// release's for the Gaussian mechanism), 0 in float mode. A release's
  /// sensitivity grows by grid * sqrt(d) by the rounding.
  double grid = 0;
  bool is_private() const { return mechanism != MechanismKind::kNone; }
  /// "gdp-tree", "gdp-gaussian", "gdp-mf", "pld-poisson", "rdp-poisson",
  /// "pld-banded-mf", "rdp-banded-mf", "zcdp-tree-discrete",
  /// "zcdp-gaussian-discrete", "zcdp-mf-discrete" or "none (non-private)".
  std::string accounting() const;
};

/// A mechanism over releases of d-vectors. release() adds noise to an exact
/// value whose L2 sensitivity (under the mechanism's adjacency) is
/// `sensitivity`; a release above the calibrated bound is refused with an
/// Error (it would be a bug in the caller, never an effect of the data: the
/// bound follows from clip norms and batch sizes). account() states the
/// guarantee, fixed at calibration.
class Mechanism {
 public:
  virtual ~Mechanism() = default;
  virtual MechanismKind kind() const = 0;
  /// released = exact + noise. `restart` starts a new phase (the tree: a
  /// fresh tree; the Gaussian mechanism: the accumulated noise is dropped).
  virtual void release(const Vec& exact, bool restart, double sensitivity, Vec& released) = 0;
  virtual PrivacyRecord account() const = 0;
  /// Draws `count` of the noise's numbers now (on up to `threads` threads),
  /// and later ones `refill` at a time: the same noise, earlier (the tree only).
  virtual bool draws_ahead() const { return false; }
  virtual void draw_ahead(std::size_t /*count*/, std::size_t /*refill*/, int /*threads*/) {}
};

/// No noise, no guarantee.
std::unique_ptr<Mechanism> make_no_mechanism();

/// The secure mode's rounding and noise for a release of L2 sensitivity s in
/// dimension d (docs/noise.md), or for R = `rounded_releases` rounded
/// d-vectors that one record moves by s in all (the matrix-factorization
/// mechanism's C u over its horizon): values are rounded to the grid
/// 2^floor(log2(s / (1024 sqrt(d R)))) (coarser where the scale would pass
/// 2^27), which adds at most grid * sqrt(d R) to the sensitivity; the noise is
/// grid * N_Z(0, scale^2) with scale = ceil(z * (s / grid + sqrt(d R))), z the
/// noise multiplier of the rounded release. Throws Error where the scale
/// would pass exact::kMaxDiscreteSigma.
struct DiscreteNoise {
  double grid = 0;                 ///< a power of two
  std::uint64_t scale = 0;         ///< the discrete Gaussian's sigma, in grid units
  double integer_sensitivity = 0;  ///< s / grid + sqrt(d), in grid units
};
DiscreteNoise discrete_noise(double sensitivity, Index dim, double noise_multiplier, Index rounded_releases = 1);

// Calibration, one rule per mechanism (the makers below use them; parameter
// reports call them for their sigma).
/// The tree's node noise: s sqrt(depth(max_phase_length)) / gdp_mu(eps, delta);
/// secure mode (target.noise): grid * scale of discrete_noise(s, dim,
/// sqrt(depth / (2 zcdp_rho(eps, delta)))).
double tree_noise_sigma(double sensitivity_bound, Index max_phase_length, const PrivacyTarget& target, Index dim);
/// The Gaussian mechanism's z with one release per record: 1 / gdp_mu(eps,
/// delta); secure mode: 1 / sqrt(2 zcdp_rho(eps, delta)), the multiplier of
/// the rounded sensitivity.
double gaussian_noise_multiplier(const PrivacyTarget& target);

/// The tree mechanism (SPEC 2.4, 3): every release a leaf of its phase's tree,
/// every node N(0, sigma^2 I), sensitivity at most `sensitivity_bound`, phases
/// of at most `max_phase_length` steps. sigma is calibrated so that the run is
/// (target.epsilon, target.delta)-DP for replace-one with depth(max_phase_length),
/// unless `sigma` (the node noise) is given. target.noise = kSecure: nodes
/// are rounded node sums plus discrete Gaussian noise (discrete_noise), drawn
/// a node ahead, and the guarantee is zCDP's.
std::unique_ptr<Mechanism> make_tree_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound,
                                               Index max_phase_length, const PrivacyTarget& target,
                                               std::optional<double> sigma = std::nullopt);

/// The Gaussian mechanism of spider-gauss-fixed and single-pass dpsgd: each
/// release gets N(0, (z * its sensitivity)^2 I), accumulated until a restart;
/// every record is in one release, so the run is (1/z)-GDP for replace-one
/// whatever each release's sensitivity. z is calibrated to the target unless
/// given; `reported_sensitivity` (the first release's, e.g. 2G/b) only sets the
/// record's sigma and sensitivity.
std::unique_ptr<Mechanism> make_gaussian_mechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target,
                                                   double reported_sensitivity,
                                                   std::optional<double> noise_multiplier = std::nullopt);

/// The matrix-factorization mechanism (docs/matrix-factorization.md): the
/// square-root factorization of the prefix sums over at most `horizon`
/// releases, as a BLT (factorization.hpp). It factorizes the increments of the
/// caller's estimate: within a phase exact_t - exact_{t-1}, at a restart
/// exact_t - released_{t-1} (the last release, public), so each increment
/// holds one step's records and has L2 sensitivity at most
/// `sensitivity_bound`; release t is the sum of the increments plus (B z)_t.
/// The run is (s * column_norm / sigma)-GDP for replace-one, column_norm the
/// factorization's largest column norm over the horizon; sigma is calibrated
/// to the target unless given. A release past the horizon is refused (the
/// caller stops at it). Secure mode: C u rounded to a grid plus discrete
/// Gaussian noise, zCDP accounting (discrete_noise with R = horizon).
/// `period` > 0: every record is in the releases i, i + period, i + 2 period,
/// ... for one i < period (passes over one sample order, `period` releases
/// each), and column_norm is cyclic_participation_norm(horizon, period).
std::unique_ptr<Mechanism> make_mf_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound, Index horizon,
                                             const PrivacyTarget& target, std::optional<double> sigma = std::nullopt,
                                             Index period = 0);
/// Its noise per coordinate for a target: s * column_norm(horizon, period) /
/// gdp_mu(eps, delta); secure mode: grid * scale of discrete_noise(s *
/// column_norm, dim, 1 / sqrt(2 zcdp_rho(eps, delta)), horizon).
double mf_noise_sigma(double sensitivity_bound, Index horizon, const PrivacyTarget& target, Index dim,
                      Index period = 0);

/// Poisson-subsampled Gaussian (multi-epoch dpsgd): `steps` releases of
/// clipped sums (sensitivity at most the clip C under add/remove), each
/// sampled at rate q, noise N(0, (z C)^2 I); accounted under add/remove by
/// `accountant` (PLD by default, or RDP), zero-out with n public. z is
/// calibrated by that accountant to the target over `steps` unless given;
/// the record's epsilon is that accountant's figure at z (at most the
/// target), and it shows both figures. Float noise only: both bounds are for
/// continuous noise, so target.noise = kSecure is refused.
/// The mechanism also draws the batches: sample(n) gives the records of the
/// next step among the caller's n (positions 0 .. n - 1), each with
/// probability q, from the secret key's kPoisson stream (amplification needs
/// the batch secret).
///
/// bands >= 1: the amplified banded matrix factorization (Choquette-Choo et
/// al. 2023; docs/privacy-accounting.md section 9). The n records form
/// `bands` groups of m = floor(n / bands) consecutive positions (the rest is
/// never sampled); release t samples group t mod bands at rate q and adds
/// z * clip * ||C e|| * (C^{-1} xi)_t, C the banded square root
/// (BandedFactorization) and xi standard normal. Each record is then in at
/// most `steps` (the cycles) releases, bands apart, and the guarantee is that
/// of `steps` Poisson-subsampled Gaussian steps at rate q and multiplier z
/// (dpsosp privacy's Poisson form reproduces it); at most bands * steps
/// releases (a later one is refused). The record's mechanism is
/// kBandedPoisson, with bands, sampling_rate, cycles, horizon and column_norm.
/// One band is Poisson DP-SGD's noise on groups of all n records, recorded as
/// banded; bands = 0 (dpsgd's): plain kPoissonGaussian, no horizon.
class PoissonGaussianMechanism : public Mechanism {
 public:
  virtual IndexList sample(Index n) = 0;
};
std::unique_ptr<PoissonGaussianMechanism> make_poisson_gaussian_mechanism(
    Index dim, const NoiseKey& key, double clip, double sampling_rate, std::uint64_t steps, const PrivacyTarget& target,
    std::optional<double> noise_multiplier = std::nullopt, Accountant accountant = Accountant::kPld, Index bands = 0);

}  // namespace dpsosp
