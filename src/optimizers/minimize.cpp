// The one entry point: validates the options against the algorithm table,
// checks the records (with a process group: agreed by every process), plans
// how the batches come, draws the run's keys, and runs the algorithm's row.
#include "optimizers/minimize.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>

#include "data/dataset_layout.hpp"
#include "dpsosp/clip_estimate.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/privacy.hpp"
#include "optimizers/process_group.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp {
namespace detail {

namespace {

// The share of the estimated medians that G and M take in an averaged classifier run (run_checked).
constexpr double kEstimateFraction = 0.25;

// What a user should hear of a finished run (Summary::warnings).
std::vector<std::string> run_warnings(const Summary& s, Index n, const RunOptions& o) {
  std::vector<std::string> warnings;
  // A run the user cut short (max_steps, a signal, the callback) is as asked.
  if (s.termination != Termination::kDataExhausted && s.termination != Termination::kPlannedSteps) return warnings;
  const std::string hint = o.batch_size ? " (more records, a larger epsilon or a smaller batch size give more steps)"
                                        : " (more records or a larger epsilon give more steps)";
  if (s.steps < 10)
    warnings.push_back(s.algorithm + " took " + std::to_string(s.steps) + (s.steps == 1 ? " step" : " steps") +
                       ", fewer than 10: its batches are large for " + std::to_string(n) + " records" + hint);
  if (2 * s.samples_used < n)
    warnings.push_back(s.algorithm + " used " + std::to_string(s.samples_used) + " of the " + std::to_string(n) +
                       " records, under half: the next batch did not fit in the rest" + hint);
  return warnings;
}

// The estimate of G and M is a set of Gaussian counts of sensitivity 1 under
// both relations (a record replaced, or replaced by a null record, moves a
// count by at most 1), on records the run leaves unused: under each relation
// the whole is the worse of the estimate and the run (parallel composition).
// Secure mode states no estimate mu: its zCDP figure is the run's target.
// A prior release (PrivacyTarget::prior_mu) saw the estimate's records too:
// GDP composition with it (the run's own figure has it already).
void state_estimate_relations(const ConstantsEstimate& e, double prior_mu, PrivacyRecord& p) {
  const double estimate_epsilon =
      e.mu > 0 ? privacy::gdp_epsilon(std::sqrt(e.mu * e.mu + prior_mu * prior_mu), p.delta) : p.epsilon;
  p.epsilon_replace_one = std::max(p.epsilon_replace_one, estimate_epsilon);
  p.epsilon_zero_out = std::max(p.epsilon_zero_out, estimate_epsilon);
  // The guarantee is the whole run's: a calibration that landed just below the
  // target (PLD, within 1e-6) is raised to the estimate's figure.
  p.epsilon = p.adjacency == Adjacency::kZeroOut ? p.epsilon_zero_out : p.epsilon_replace_one;
}

}  // namespace

void check_start(const Model& model, const Vec& x0) {
  if (static_cast<Index>(x0.size()) != model.dim()) {
    throw Error("x0: has " + std::to_string(x0.size()) + " entries, the model " + model.name() + " has dimension " +
                std::to_string(model.dim()));
  }
  if (!all_finite(x0)) throw Error("x0: has a non-finite entry");
}

Summary run_checked(const Model& model, const Dataset& records, const Vec& x0, const RunOptions& options,
                    const std::function<Dataset(Index)>& first_records) {
  const int previous_threads = omp_get_max_threads();
  if (options.threads > 0) omp_set_num_threads(options.threads);
  struct RestoreThreads {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{previous_threads};

  Summary summary;
  summary.algorithm = algorithm_name(options.algorithm);
  summary.seed = options.seed ? *options.seed : secure_random_seed();
  bool supplied = options.noise_key.has_value();
  // The key lives in this frame (and the generators) for the run, and nowhere else.
  NoiseKey key = options.noise_key ? *options.noise_key : NoiseKey::generate();
  if (options.process_group) {
    std::array<std::uint8_t, 16> bytes = key.bytes();
    share_keys(*options.process_group, summary.seed, bytes, supplied);
    key = NoiseKey::from_bytes(bytes);
    bytes.fill(0);
  }
  summary.noise_key_source = supplied ? "supplied" : "generated";
  if (options.single_pass()) summary.sample_order = sample_order_name(options.sample_order_or_default());
  summary.processes = options.process_group ? options.process_group->size() : 1;
  summary.x = x0;
  const auto start = std::chrono::steady_clock::now();
  // --G auto / --M auto: a private estimate on the first records of the
  // public sample order, which the run then leaves unused (clip_estimate.hpp).
  RunOptions o = options;
  if (options.estimate.any()) {
    // Shared (clip_estimate.hpp): where the run composes a prior release
    // into its PLD, the estimate counts more records and the run keeps them.
    const Index reserved = estimate_records(records.rows());
    const bool shared = options.composes_prior() && !first_records && kSharedAbove * reserved > records.rows();
    const Index m = shared ? std::min(records.rows(), kSharedRecords * reserved) : reserved;
    if (m == 0)
      throw Error("G, M auto: " + std::to_string(records.rows()) +
                  " records are too few to estimate G or M "
                  "privately (the estimate takes min(20000, max(min(500, n/10), n/50)) of them, at least one); give G "
                  "and M");
    // A regression's G: a higher quantile of the gradient norms where the
    // noise is small (public: n, d, the target; regression_clip_quantile).
    ConstantsEstimateOptions what = options.estimate;
    if (const ModelInfo* info = find_model_info(model.name()); info && info->regression)
      what.g_quantile = regression_clip_quantile(records.rows(), model.dim(),
                                                 privacy::gdp_mu(options.privacy->epsilon, options.privacy->delta));
    ConstantsEstimate e;
    if (first_records) {  // streamed: the file's first m records
      const Dataset first = first_records(m);
      IndexList idx(m);
      std::iota(idx.begin(), idx.end(), Index{0});
      e = estimate_constants(model, first, idx, x0, what, *options.privacy, key, summary.seed);
    } else {
      SamplePool pool(records, summary.seed);
      if (shared) what.mu = options.privacy->run_gdp_mu() / static_cast<double>(kSharedRecords);
      e = estimate_constants(model, records, pool.draw(m), x0, what, *options.privacy, key, summary.seed);
    }
    // A classifier fitted by an algorithm whose output is the mean of its last
    // iterates (it reads tail) runs at a quarter of each median: most
    // per-example gradients are clipped and the noise, which scales with G, is
    // four times smaller, while the step's length bound G / M is the medians';
    // the mean damps what the larger steps on small gradients add. A last
    // iterate, and a regression (whose residual gradients the larger steps
    // overshoot), keep the medians (docs/parameters.md, "Why a quarter").
    // Post-processing of the estimate and public facts.
    const bool quarter = (algorithm_info(options.algorithm).knobs & kKnobTail) && model.classes() > 0;
    const double fraction = quarter ? kEstimateFraction : 1.0;
    if (e.G) o.constants.G = std::min(fraction * *e.G, options.estimate.G_cap);
    // The step 1/M: at most the one that moves the iterate by max(1, ||x0||)
    // when the gradient is at the clip norm. The curvature at x0 can be far
    // below what the steps meet later (a network at zero weights curves only
    // along its output biases); this is post-processing of G and the estimate.
    if (e.M)
      o.constants.M =
          std::min(std::max(fraction * *e.M, o.constants.G / std::max(1.0, x0.norm())), options.estimate.M_cap);
    summary.estimate = e;
    if (e.shared)
      o.privacy->prior_mu = std::hypot(o.privacy->prior_mu, e.mu);
    else
      summary.reserved_records = m;
  }
  summary.constants = o.constants;
  algorithm_row(options.algorithm).run(model, records, o, key, summary);
  if (summary.estimate && !summary.estimate->shared && summary.privacy.is_private())
    timed(summary.diagnostics.accounting_seconds,
          [&] { state_estimate_relations(*summary.estimate, options.privacy->prior_mu, summary.privacy); });
  summary.diagnostics.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Safe to say (SPEC section 8): whether a run took a step, and what the
  // warnings say, are functions of steps, samples_used and termination, which
  // the release holds (covered by the guarantee), and of the public n; a
  // single-pass run takes its first step exactly when its first batch, a
  // function of n and the parameters, fits in the n records.
  if (summary.steps == 0 && summary.termination == Termination::kDataExhausted)
    throw Error(summary.algorithm + " could not take one step: its first batch does not fit in the " +
                std::to_string(records.rows()) + " records (give more records, a smaller batch or a larger epsilon)");
  summary.warnings = run_warnings(summary, records.rows(), options);
  return summary;
}

}  // namespace detail

Summary minimize(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options) {
  detail::agreed_checks(options.process_group.get(), options, x0, [&] {
    options.Validate();
    model.validate(data);
    detail::check_start(model, x0);
    if (data.rows() == 0) throw Error("data: no records");
    // Not numbers are refused before any noise is drawn (SPEC section 8); every
    // finite record, however extreme, runs to the end.
    check_finite(data, "data");
    return options.process_group ? record_fingerprint(data) : 0;
  });
  const bool file_order = options.single_pass() && options.sample_order_or_default() == SampleOrder::kFile;
  if (!file_order && !options.process_group) return detail::run_checked(model, data, x0, options);
  // The algorithm reads its records through a plan: the file's order, and a
  // group's shares with the stop flag the processes agree on.
  auto plan = std::make_shared<detail::BatchPlan>();
  plan->file_order = file_order;
  plan->group = options.process_group;
  std::atomic<bool> agreed_stop{false};
  RunOptions planned = options;
  if (options.process_group) {
    plan->local_stop = options.stop_flag;
    plan->agreed_stop = &agreed_stop;
    planned.stop_flag = &agreed_stop;
  }
  return detail::run_checked(model, detail::DatasetLayout::planned(data, plan), x0, planned);
}

}  // namespace dpsosp
