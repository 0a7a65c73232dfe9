// Internal: the algorithm table's rows (include/dpsosp/algorithm.hpp gives
// their public part). A row holds what the library needs to run an algorithm
// and what the audit needs to set it up; each algorithm's file defines its
// row, and registry.cpp lists them.
#pragma once
#include <chrono>
#include <limits>

#include "dpsosp/optimizer.hpp"

namespace dpsosp::detail {

/// f(), its wall time added to `seconds` (Diagnostics::accounting_seconds:
/// the run's parameter rules, the noise calibration, the stated guarantee).
template <class F>
auto timed(double& seconds, F&& f) -> decltype(f()) {
  struct Add {
    double& total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Add() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  } add{seconds};
  return f();
}

/// Runs the algorithm from summary.x (x0) on the records and fills the
/// summary: the privacy noise (and Poisson sampling) keyed by `key`, the
/// public streams by summary.seed. options are valid (RunOptions::Validate).
using RunFunction = void (*)(const Model& model, const Dataset& data, const RunOptions& options, const NoiseKey& key,
                             Summary& summary);

/// The audit's quadratic-o2 canary (src/audit): what a configuration gets, and
/// what it gives back.
struct QuadraticAudit {
  Index batch = 0, dim = 0;
  double G = 1, M = 1;
  double raise = 1;  ///< the factor by which unclipped-o2 would raise M
  PrivacyTarget target;
};
struct QuadraticAuditSetup {
  Index n = 0;                                                ///< records the two steps need
  double max_step = std::numeric_limits<double>::infinity();  ///< the O2 step bound, if any
  double kappa = 0;                                           ///< the drift budget set (for unclipped-o2)
  /// The canary's quadratic k z (x - m)^2 / 2 (src/audit/canaries.hpp): its
  /// centre m and curvature k. k = 1, m = 0 but where the O2 differences are
  /// of clipped gradients (spider-mf-adaptive), which reach the clip only
  /// where the canary's clipped gradient flips sign between x_0 and x_1.
  double centre = 0, curvature = 1;
};

/// How the audit (docs/privacy.md) configures the algorithm; null where a
/// canary does not apply to it.
struct AuditHooks {
  /// Linear canary: every node's (release's) sensitivity 2G/b, one O1 on `batch`
  /// records per step, or phases of one O1 and phase_length - 1 O2 steps on
  /// 2 batch records each where the algorithm reads `period`. Where the
  /// algorithm reads `epochs` as passes over the sample order
  /// (spider-mf-adaptive), the audit sets them after this.
  void (*linear)(RunOptions& o, Index batch, double G, Index phase_length) = nullptr;
  /// Quadratic-o2 canary: step 1 an O1 on `batch` records, step 2 an O2 whose
  /// batch starts with the canary, its difference at the O2 sensitivity bound.
  QuadraticAuditSetup (*quadratic)(RunOptions& o, const QuadraticAudit& q) = nullptr;
  /// The unclipped-o2 tampering of a quadratic setup: the O2 clip raised above
  /// the canary, b_t, the step and the noise (`sigma`) as honest.
  void (*unclipped_o2)(RunOptions& o, const QuadraticAudit& q, const QuadraticAuditSetup& s, double sigma) = nullptr;
};

struct AlgorithmRow {
  AlgorithmInfo info;
  RunFunction run = nullptr;
  AuditHooks audit;
};

/// The row of an algorithm; throws Error for an unknown id.
const AlgorithmRow& algorithm_row(Algorithm a);
/// Adds an algorithm to the table (an extension, or a test's toy): its id is
/// the one given back, its name must be new. The table reads it like the
/// built-in ones.
Algorithm register_algorithm(AlgorithmRow row);

// The built-in rows, each defined in its algorithm's file (registry.cpp gives
// them their ids).
AlgorithmRow spider_tree_adaptive_row();  // spider_tree_adaptive.cpp
AlgorithmRow spider_row();                // spider_tree_adaptive.cpp
AlgorithmRow spider_gauss_fixed_row();    // spider_gauss_fixed.cpp
AlgorithmRow spider_tree_periodic_row();  // spider_tree_periodic.cpp
AlgorithmRow dpsgd_row();                 // sgd.cpp
AlgorithmRow sgd_row();                   // sgd.cpp
AlgorithmRow spider_mf_adaptive_row();    // spider_mf_adaptive.cpp

/// Whether a run stops before its next step, and why: max_steps reached, a
/// stop flag set (a signal), or the callback, shown the step just done (step
/// 0: the start), returning false. Every algorithm's loop asks this.
inline bool stop_requested(const RunOptions& o, Index steps_done, const Iteration& last, Termination& why) {
  if (o.max_steps > 0 && steps_done >= o.max_steps) {
    why = Termination::kMaxSteps;
    return true;
  }
  if (o.stop_flag != nullptr && o.stop_flag->load()) {
    why = Termination::kInterrupted;
    return true;
  }
  if (o.on_step && !o.on_step(last)) {
    why = Termination::kCallback;
    return true;
  }
  return false;
}

/// max(1, ceil(v)) as a batch size; throws Error when v is not finite or above 9e18.
Index batch_count(double v);

}  // namespace dpsosp::detail
