// dpsosp: the parameters of the private SOSP finders from the problem constants.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

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

/// How a private run draws its noise (SPEC section 8, docs/noise.md).
enum class NoiseMode {
  /// Continuous Gaussian noise in floating point (Box-Muller on the secret
  /// stream); exact GDP accounting. The released doubles' low-order bits are
  /// not covered by the guarantee (Mironov 2012).
  kFloat,
  /// Every release rounded to a power-of-two grid plus discrete Gaussian noise
  /// drawn exactly on integers (Canonne, Kamath, Steinke 2020); zCDP
  /// accounting with the rounding in the sensitivity.
  kSecure,
};
std::string noise_mode_name(NoiseMode mode);  ///< "float", "secure"

/// The privacy target. epsilon = +infinity means non-private (no noise, no clipping).
struct PrivacyTarget {
  double epsilon = 1.0;
  double delta = 1e-6;
  /// How the noise meets the target (the secure mode adds about 6-8 % noise
  /// for the same epsilon).
  NoiseMode noise = NoiseMode::kFloat;
  bool is_private() const { return epsilon < std::numeric_limits<double>::infinity(); }
  void Validate() const;
};

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
  int depth = 0;           ///< tree depth ceil(log2(L_max + 1))
};

/// alpha of Theorem 3.11 with hidden constants 1 (before alpha_scale).
double theorem_alpha(Index n, Index d, double epsilon, const ProblemConstants& c);

/// Computes every parameter; throws Error naming the problem when the inputs are
/// invalid or n cannot fill one O1 batch (the message says which n would).
/// max_phase_length = 0 chooses L_max automatically: 2^D - 1 with
/// D = ceil(log2(2 kappa/alpha + 1)) (docs/parameters.md).
SpiderParameters spider_tree_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy,
                                                 const ProblemConstants& c, double alpha_scale = 1.0,
                                                 const ParameterOverrides& overrides = {},
                                                 Index max_phase_length = 0);

}  // namespace dpsosp
