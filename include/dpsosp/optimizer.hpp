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
  /// add/remove-one); 0 = single pass over disjoint batches (exact GDP).
  double epochs = 0;
  /// Step size of sgd / dpsgd (0 = 1/M).
  double learning_rate = 0;
  /// Seed of every random stream of the run; unset = drawn from the OS and reported.
  std::optional<std::uint64_t> seed;
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

/// What a run did and what it spent.
struct Summary {
  Vec x;                              ///< the last iterate
  std::vector<Vec> trajectory;        ///< every iterate, when requested
  std::string algorithm;
  std::uint64_t seed = 0;
  // Privacy actually spent (eps = inf for the references).
  double epsilon = 0, delta = 0, mu = 0, sigma = 0, sensitivity = 0, noise_multiplier = 0;
  double epsilon_rdp = 0, zcdp_rho = 0;
  int depth = 0;                      ///< largest tree depth used by the accountant
  std::string accounting;             ///< e.g. "gdp-tree", "gdp-gaussian", "rdp-poisson"
  std::string adjacency;              ///< "replace-one" or "add/remove-one"
  // Work.
  Index samples_used = 0, gradient_evaluations = 0, steps = 0, o1_calls = 0, perturbations = 0;
  Index clipped_o1 = 0, clipped_o2 = 0;
  std::vector<std::uint64_t> phase_lengths;
  std::map<std::string, double> params;
  double seconds = 0;
  std::string termination;            ///< "max-steps", "data-exhausted", "interrupted", "callback"
  bool interrupted = false;
};

/// Runs the chosen algorithm from x0 on the records of `data`.
Summary minimize(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options);

}  // namespace dpsosp
