// dpsosp: the parameters of the private SOSP finders from the problem constants.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "dpsosp/target.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// The constants of Assumption 3.1: every f(.; z) is G-Lipschitz, M-smooth and
/// rho-Hessian-Lipschitz, and F(x0) - inf F <= B.
struct ProblemConstants {
  double G = 1.0;
  double M = 1.0;
  double rho = 1.0;
  double B = 1.0;
  void Validate() const;
};

/// How spider-mf-adaptive's passes draw their records (RunOptions::sampling,
/// docs/parameters.md).
enum class Sampling {
  /// Passes over the public sample order, every record once a pass, one
  /// square-root factorization over all of them: replace-one, no amplification.
  kOrder,
  /// Cyclic Poisson sampling with the banded square-root factorization
  /// (amplified banded MF): the records in `bands` groups, step t samples
  /// group t mod bands with the secret key; zero-out, PLD (or RDP) accounting.
  kPoisson,
};
std::string sampling_name(Sampling s);  ///< "order", "poisson"
/// The sampling a run of `epochs` passes uses: the given one, else poisson
/// beyond one pass and order otherwise (the one place of that default).
inline Sampling sampling_or_default(std::optional<Sampling> given, double epochs) {
  return given.value_or(epochs > 1 ? Sampling::kPoisson : Sampling::kOrder);
}

/// Optional overrides of any computed parameter (unset = computed). Which
/// algorithm reads which is in its row of the algorithm table (algorithm.hpp);
/// RunOptions::Validate refuses the others.
struct ParameterOverrides {
  std::optional<double> alpha, kappa;
  /// The tree algorithms' node noise (per coordinate), instead of calibrating it.
  std::optional<double> sigma;
  /// Every private algorithm's z = sigma / sensitivity, instead of calibrating it.
  std::optional<double> noise_multiplier;
  std::optional<double> eta, zeta, threshold;
  std::optional<Index> b, T, Gamma;
  /// The OverrideBit bits (algorithm.hpp) of the entries that are set.
  unsigned set_bits() const;
};

/// Every parameter of spider-tree-adaptive (paper Theorem 3.11, hidden constants 1,
/// SPEC section 2; docs/parameters.md gives each formula with its source).
struct SpiderParameters {
  double alpha = 0;        ///< target accuracy (times alpha_scale)
  Index b = 0;             ///< O1 batch: ceil(G sqrt(d)/(eps alpha) + G^2/alpha^2)
  double kappa = 0;        ///< drift budget: max(alpha sqrt(d)/eps, (BGM)^(1/3))
  double bt_slope = 0;     ///< b_t = max(ceil(u_t * bt_slope), 1), bt_slope = max(sqrt(d)/(alpha eps), kappa/alpha^2)
  double sensitivity = 0;  ///< s = max(2G/b, 2/bt_slope): every node's L2 sensitivity
  double sigma = 0;        ///< per-coordinate node noise, calibrated by the accountant
  double eta = 0;          ///< step 1/M
  Index T = 0;             ///< theory's step count B M / alpha^2 (reported; the run is data-limited)
  Index Gamma = 0;         ///< frozen steps after a perturbation
  double zeta = 0;         ///< perturbation: g ~ N(0, zeta^2/d I)
  double threshold = 0;    ///< perturb when ||grad~_{t-1}|| <= threshold
  Index max_phase_length = 0;  ///< L_max: a phase that reaches it forces an O1 call
  int depth = 0;               ///< tree depth ceil(log2(L_max + 1))
};

/// Every parameter of spider-mf-adaptive (docs/parameters.md, "spider-mf-adaptive"):
/// SpiderBoost with one matrix factorization of the noise over the run, O1 on
/// clipped gradients and the consistent O2 (differences of the clipped
/// gradients), all chosen from public quantities: n, d, the target, the
/// constants (G, M: given or privately estimated) and the options.
struct MfParameters {
  double alpha = 0;            ///< theorem_alpha times alpha_scale: the saddle perturbation's scale
  Index b1 = 0;                ///< O1 batch
  bool o2 = false;             ///< whether phases take O2 steps (else every step is an O1)
  double M2 = 0;               ///< O2 rows are clipped at min(M2 ||dx||, 2G)
  double bt_slope = 0;         ///< O2 batch b_t = max(ceil(M2 ||dx|| bt_slope), b2_min); b1 / G
  Index b2_min = 1;            ///< smallest O2 batch
  double kappa = 0;            ///< a phase ends when the sum of ||released|| in it reaches kappa
  Index max_phase_length = 0;  ///< and at most at this many steps
  Index horizon = 0;           ///< the releases the noise is calibrated for (the run stops there)
  double epochs = 1;           ///< passes over the records (> 1: O1 steps only); sampling = poisson: expected passes
  Index steps_per_epoch = 0;   ///< the releases of one pass (= horizon / epochs when epochs > 1 and sampling = order)
  /// How the passes draw records; the rest of this block is sampling =
  /// poisson's (zeros otherwise): the expected batch is b1.
  Sampling sampling = Sampling::kOrder;
  Index bands = 0;              ///< groups the steps cycle through, and C's band width
  Index group_size = 0;         ///< m = floor(n / bands) records a group (the n mod bands left never sampled)
  double sampling_rate = 0;     ///< q = b1 / m
  Index cycles = 0;             ///< each record's Poisson steps, ceil(epochs / q); horizon = bands * cycles
  double noise_multiplier = 0;  ///< z of the cycles' Poisson-subsampled Gaussian, from the accountant
  Accountant accountant = Accountant::kPld;
  /// every release's L2 sensitivity bound: max(2G/b1, 2/bt_slope) (replace-one);
  /// sampling = poisson: G/b1 (zero-out: a record's clipped gradient over the expected batch)
  double sensitivity = 0;
  double sigma = 0;  ///< noise per coordinate in C's domain
  /// The sensitivity of C u per unit of a release's: the factorization's largest
  /// column norm over the horizon, or with epochs > 1 its largest norm of a sum of
  /// columns a pass apart (BltFactorization::cyclic_participation_norm)
  double column_norm = 0;
  /// The noise per coordinate of an O1 step's estimate, sigma * ||row of C^{-1}|| (public: the O1/O2 rule reads it)
  double step_noise = 0;
  double eta = 0;        ///< step size (learning_rate, default 1/M)
  double tail = 0;       ///< x is the mean of the iterates over the last `tail` of the records (0: the last)
  Index Gamma = 0;       ///< frozen steps after a perturbation
  double zeta = 0;       ///< perturbation g ~ N(0, zeta^2/d I)
  double threshold = 0;  ///< perturb when ||grad~_{t-1}|| <= threshold
};

/// The choices behind MfParameters, as RunOptions gives them (unset = automatic).
struct MfChoices {
  std::optional<Index> b1, max_phase_length;
  std::optional<bool> o2;
  std::optional<double> learning_rate, tail;
  double alpha_scale = 1.0;
  /// Passes over the records (RunOptions::epochs): with sampling = order a
  /// whole number, each record once a pass; with poisson, expected passes
  /// (any number > 0). > 1 takes O1 steps only (o2 = on is refused).
  double epochs = 1;
  /// Default: poisson when epochs > 1, else order.
  std::optional<Sampling> sampling;
  /// sampling = poisson: the bands (default: the rule of docs/parameters.md).
  std::optional<Index> bands;
  Accountant accountant = Accountant::kPld;
};

/// Computes spider-mf-adaptive's parameters for `n` records (those the run may
/// use); throws Error naming the problem when n cannot fill one O1 batch.
MfParameters spider_mf_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy, const ProblemConstants& c,
                                           const MfChoices& choices = {}, const ParameterOverrides& overrides = {});

/// spider-mf-adaptive's default O1 batch b1 for n records at GDP parameter mu
/// (public): ceil(0.25 sqrt(n / mu)), with Poisson sampling at least
/// 16 sqrt(epochs) / mu, within [16, n / 10] (docs/parameters.md).
Index default_o1_batch(Index n, double mu, double epochs, bool poisson);

/// alpha of Theorem 3.11 with hidden constants 1 (before alpha_scale).
double theorem_alpha(Index n, Index d, double epsilon, const ProblemConstants& c);

/// Computes every parameter; throws Error naming the problem when the inputs are
/// invalid or n cannot fill one O1 batch (the message says which n would).
/// max_phase_length = 0 chooses L_max automatically: 2^D - 1 with
/// D = ceil(log2(2 kappa/alpha + 1)) (docs/parameters.md).
SpiderParameters spider_tree_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy,
                                                 const ProblemConstants& c, double alpha_scale = 1.0,
                                                 const ParameterOverrides& overrides = {}, Index max_phase_length = 0);

}  // namespace dpsosp
