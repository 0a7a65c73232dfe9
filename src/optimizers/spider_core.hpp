// Internal: the one SpiderBoost core that spider-tree-adaptive, spider-gauss-fixed,
// spider-tree-periodic and the non-private spider reference share. Each algorithm
// is a SpiderConfig: a restart rule, a batch schedule, a release-noise strategy
// and a perturbation rule.
#pragma once
#include <limits>
#include <memory>

#include "dpsosp/optimizer.hpp"
#include "mechanisms/release_noise.hpp"

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
  Index b1 = 0;                 ///< O1 batch
  double clip_o1 = std::numeric_limits<double>::infinity();  ///< G, or inf (non-private)
  bool clip_o2 = false;         ///< clip O2 rows to M * min(||dx||, max_step)
  double max_step = std::numeric_limits<double>::infinity();
  double M = 1;
  double eta = 1;
  RestartRule restart;
  BatchSchedule batch;
  PerturbationRule perturbation;
  Index max_phase_length = 1024;
  Index max_steps = 0;          ///< 0 = until the data run out
};

/// What the core did; the caller turns it (with its mechanism) into a Summary.
struct SpiderTrace {
  Index steps = 0, o1_calls = 0, perturbations = 0, clipped_o1 = 0, clipped_o2 = 0;
  Index nonfinite_o1 = 0, nonfinite_o2 = 0;
  Index samples_used = 0, gradient_evaluations = 0;
  double max_o2_sensitivity = 0;  ///< largest 2*clip/b_t seen (for the report)
  std::vector<std::uint64_t> phase_lengths;
  std::string termination;
};

SpiderTrace run_spider(const Model& model, const Dataset& data, const SpiderConfig& config, ReleaseNoise& noise,
                       std::uint64_t seed, const RunOptions& options, Summary& summary);

}  // namespace dpsosp::detail
