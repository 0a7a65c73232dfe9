// Internal: the one SpiderBoost core that spider-tree-adaptive, spider-gauss-fixed,
// spider-tree-periodic and the non-private spider reference share. Each algorithm
// is a SpiderConfig (a restart rule, a batch schedule, a perturbation rule) and
// a Mechanism (mechanism.hpp) that privatises the running estimate.
#pragma once
#include <limits>
#include <memory>

#include "dpsosp/mechanism.hpp"
#include "dpsosp/optimizer.hpp"

namespace dpsosp::detail {

/// When to call O1 again (besides the first step and the L_max cap).
struct RestartRule {
  enum class Kind {
    kDriftNorm,     ///< Liu & Talwar: sum of ||grad~_i|| since the last O1 reaches kappa
    kDriftSquared,  ///< Ganesh et al.: sum of ||x_i - x_{i-1}||^2 since the last O1 reaches kappa
    kPeriodic,      ///< Arora et al.: every q steps
  };
  Kind kind = Kind::kDriftNorm;
  double kappa = 0;
  Index period = 0;
};

/// The O2 batch for a step of length ||x_t - x_{t-1}||.
struct BatchSchedule {
  bool adaptive = true;  ///< b_t = max(ceil(M ||dx|| * slope), 1); else fixed
  double slope = 0;
  Index fixed = 0;
  Index o2_batch(double u) const;
};

/// Saddle perturbation of Algorithm 2 lines 9-11 (post-processing).
struct PerturbationRule {
  bool enabled = false;
  double threshold = 0;
  double zeta = 0;
  Index Gamma = 0;
};

struct SpiderConfig {
  Index b1 = 0;                                              ///< O1 batch
  double clip_o1 = std::numeric_limits<double>::infinity();  ///< G, or inf (non-private)
  bool clip_o2 = false;                                      ///< clip O2 rows to M * min(||dx||, max_step)
  double max_step = std::numeric_limits<double>::infinity();
  double M = 1;
  double eta = 1;
  RestartRule restart;
  BatchSchedule batch;
  PerturbationRule perturbation;
  Index max_phase_length = 1024;
  /// The consistent O2 (spider-mf-adaptive): O2 rows are differences of
  /// gradients clipped at this norm (O1's clip), then clipped at M min(||dx||,
  /// max_step); +inf: differences of raw gradients (the paper's O2).
  double inner_clip = std::numeric_limits<double>::infinity();
  /// The releases the mechanism was calibrated for: the run ends (planned
  /// steps) when it has made them. 0: no such bound.
  Index horizon = 0;
  /// x is the mean of the iterates after every step that ends with more than
  /// tail_from records drawn by the optimizer, over all passes
  /// (post-processing); tail_from = max: the last iterate.
  Index tail_from = std::numeric_limits<Index>::max();
  /// Passes over the sample order (O1 steps only, every step on b1 records):
  /// when the unused records cannot fill the next batch and passes remain,
  /// the next pass reads the same order again from its first record after
  /// the reserved ones, so every record is in the steps i, i + T, i + 2T, ...
  /// (T = the steps of a pass).
  Index epochs = 1;
  /// Poisson-sampled O1 steps (spider-mf-adaptive's sampling = poisson): every
  /// step an O1 on the records this mechanism samples among the optimizer's
  /// (positions in the public sample order), released as their clipped sum
  /// (sensitivity clip_o1, zero-out) and divided by b1, the expected batch.
  /// The batch sizes are secret: the iteration records and the release hold
  /// b1 instead. Null: batches of the sample order.
  PoissonGaussianMechanism* sampler = nullptr;
};

/// The configuration every SPIDER algorithm starts from: O1 batch b, clip G
/// (and the O2 clip) when private, step eta, L_max, the perturbation rule.
SpiderConfig spider_config(const RunOptions& options, const SpiderParameters& p, bool is_private);
/// Puts p's figures into the summary's parameter table.
void report_spider_params(Summary& summary, const SpiderParameters& p);
/// The override of the tree's node noise, if the options give one: sigma
/// itself, or noise_multiplier times the sensitivity bound.
std::optional<double> tree_sigma_override(const ParameterOverrides& o, double sensitivity_bound);

/// Runs the core from summary.x (x0) and fills the summary's work, its
/// termination and its diagnostics; the caller adds the parameters and the
/// guarantee (mechanism.account()). The sample order and the perturbations
/// come from the public summary.seed.
void run_spider(const Model& model, const Dataset& data, const SpiderConfig& config, Mechanism& mechanism,
                const RunOptions& options, Summary& summary);

}  // namespace dpsosp::detail
