// dpsosp: one entry point for every optimizer (SPEC sections 2 and 4).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

enum class Algorithm {
  kSpiderTreeAdaptive,  ///< Liu & Talwar: tree noise, adaptive O2 batches (the default)
  kSpiderGaussFixed,    ///< Ganesh et al. 2023: Gaussian noise per release, fixed batches
  kSpiderTreePeriodic,  ///< Arora et al. 2023: O1 every q steps, tree noise, no perturbation
  kDpsgd,               ///< clipped per-example gradients plus Gaussian noise
  kSpider,              ///< non-private SpiderBoost reference
  kSgd,                 ///< non-private SGD reference
};
Algorithm parse_algorithm(const std::string& name);
std::string algorithm_name(Algorithm a);
std::vector<std::string> algorithm_names();
bool is_private_algorithm(Algorithm a);

struct RunOptions {
  Algorithm algorithm = Algorithm::kSpiderTreeAdaptive;
  PrivacyTarget privacy;             ///< ignored (eps = inf) by spider and sgd
  ProblemConstants constants;
  double alpha_scale = 1.0;          ///< multiplies the theory's alpha
  ParameterOverrides overrides;
  /// Fixed batch of the fixed-batch algorithms (O2 batch for spider-gauss-fixed and
  /// spider-tree-periodic, the batch of dpsgd and sgd). 0 = the algorithm's default.
  Index batch_size = 0;
  /// spider-tree-periodic: O1 every q steps (0 = default).
  Index period = 0;
  /// dpsgd: epochs > 0 selects multi-epoch Poisson sampling (RDP accounting,
  /// add/remove-one, so zero-out with n public); 0 = single pass over disjoint
  /// batches (exact GDP, replace-one).
  double epochs = 0;
  /// Step size of sgd / dpsgd (0 = 1/M).
  double learning_rate = 0;
  /// Seed of the public random streams: the single-pass sample order and the
  /// saddle perturbations (privacy holds for any fixed order, and the
  /// perturbation is post-processing). Unset = drawn from the OS; reported.
  std::optional<std::uint64_t> seed;
  /// Secret key of the privacy noise and of Poisson sampling (SPEC section 8).
  /// Unset = 128 fresh bits from the OS for this run, kept nowhere. Set it
  /// (NoiseKey::from_file) only for a reproducible run whose key you keep as
  /// secret as the data: the same (seed, noise_key) gives the same bits.
  std::optional<NoiseKey> noise_key;
  Index max_steps = 0;               ///< 0 = until the data run out
  Index max_phase_length = 0;        ///< L_max of the tree phases; 0 = automatic (docs/parameters.md)
  int threads = 0;                   ///< 0 = all cores; never changes results
  bool record_trajectory = false;
  /// Set by a signal handler to stop early; the summary then says interrupted.
  const std::atomic<bool>* stop_flag = nullptr;
  /// Called every step with (step, x); return false to stop.
  std::function<bool(Index, const Vec&)> on_step;
  void Validate() const;
};

/// What a run computed from the private data that its (eps, delta) guarantee
/// does not cover (SPEC section 8): exact counts and timings. A report keeps
/// them apart from the release (`diagnostics`); publish them only where the
/// data need no protection.
struct Diagnostics {
  /// Per-example gradients (O1) and gradient differences (O2) that clipping
  /// changed, the non-finite ones included.
  Index clipped_o1 = 0, clipped_o2 = 0;
  /// Of those, the vectors with a NaN or infinite entry (an overflow inside
  /// the model), which contributed zero.
  Index nonfinite_o1 = 0, nonfinite_o2 = 0;
  /// Per-example gradients computed (also where the release leaves the count
  /// out, as for Poisson sampling, whose batch sizes are secret).
  Index gradient_evaluations = 0;
  double seconds = 0;  ///< wall time of the optimization
};

/// What a run released, what it guarantees, and apart from both its diagnostics.
/// Every field but `diagnostics` is covered by the privacy guarantee: the
/// iterates, and what is computed from them and from public quantities.
struct Summary {
  Vec x;                              ///< the last iterate
  std::vector<Vec> trajectory;        ///< every iterate, when requested
  std::string algorithm;
  std::uint64_t seed = 0;             ///< the public seed (sample order, perturbations)
  /// Where the secret noise key came from: "generated" (fresh from the OS,
  /// kept nowhere) or "supplied" (RunOptions::noise_key). Never the key.
  std::string noise_key_source;
  // The guarantee, fixed before the run (eps = inf for the references):
  // (epsilon, delta)-DP for `adjacency`.
  double epsilon = 0, delta = 0, mu = 0, sigma = 0, sensitivity = 0, noise_multiplier = 0;
  double epsilon_rdp = 0, zcdp_rho = 0;
  int depth = 0;                      ///< tree depth of the guarantee: depth(L_max), 1 without a tree
  std::string accounting;             ///< e.g. "gdp-tree", "gdp-gaussian", "rdp-poisson"
  std::string adjacency;              ///< "replace-one", or "zero-out" (Poisson dpsgd; n public)
  // Work, all of it a function of the released iterates and public sizes.
  Index samples_used = 0, steps = 0, o1_calls = 0, perturbations = 0;
  /// Per-example gradients computed; unset where the count is not public
  /// (Poisson sampling: Diagnostics::gradient_evaluations has it).
  std::optional<Index> gradient_evaluations;
  std::vector<std::uint64_t> phase_lengths;
  std::map<std::string, double> params;
  std::string termination;            ///< "max-steps", "data-exhausted", "planned-steps", "interrupted", "callback"
  bool interrupted = false;
  Diagnostics diagnostics;            ///< not covered by the guarantee
};

/// Runs the chosen algorithm from x0 on the records of `data`.
Summary minimize(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options);

}  // namespace dpsosp
