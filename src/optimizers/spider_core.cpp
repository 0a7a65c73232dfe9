// The SpiderBoost core (paper Algorithm 2 with the decisions of SPEC section 2).
#include "optimizers/spider_core.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

#include "data/dataset_layout.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/oracles.hpp"
#include "engine/wide_kernels.hpp"
#include "engine/work_sharing.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::detail {

SpiderConfig spider_config(const RunOptions& o, const SpiderParameters& p, bool is_private) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  SpiderConfig c;
  c.b1 = p.b;
  c.clip_o1 = is_private ? o.constants.G : kInf;
  c.clip_o2 = is_private;
  c.M = o.constants.M;
  c.eta = p.eta;
  c.max_phase_length = p.max_phase_length > 0 ? p.max_phase_length : std::numeric_limits<Index>::max();
  c.perturbation = {true, p.threshold, p.zeta, p.Gamma};
  return c;
}

void report_spider_params(Summary& s, const SpiderParameters& p) {
  s.params["alpha"] = p.alpha;
  s.params["b"] = static_cast<double>(p.b);
  s.params["kappa"] = p.kappa;
  s.params["bt_slope"] = p.bt_slope;
  s.params["sensitivity"] = p.sensitivity;
  s.params["sigma"] = p.sigma;
  s.params["eta"] = p.eta;
  s.params["T"] = static_cast<double>(p.T);
  s.params["Gamma"] = static_cast<double>(p.Gamma);
  s.params["zeta"] = p.zeta;
  s.params["threshold"] = p.threshold;
  s.params["max_phase_length"] = static_cast<double>(p.max_phase_length);
}

std::optional<double> tree_sigma_override(const ParameterOverrides& o, double sensitivity_bound) {
  if (o.sigma) return o.sigma;
  if (o.noise_multiplier) return *o.noise_multiplier * sensitivity_bound;
  return std::nullopt;
}

Index BatchSchedule::o2_batch(double u) const {
  if (!adaptive) return fixed;
  const double b = std::ceil(u * slope);
  if (!(b >= 1.0)) return 1;  // also catches NaN from u = 0 * inf
  if (b > 9.0e18) return std::numeric_limits<Index>::max();
  return static_cast<Index>(b);
}

namespace {

// The sample order (a shuffle of n, about 5 ns a record on the development
// machine) and the first of the release noise (about 14 ns a number) are
// independent: with two threads the noise's first n / 4 numbers are drawn on
// one while the other shuffles, then `kRefill` at a time on all of them. The
// second thread first runs the engine's one-time checks (wide::enabled), which
// a process's first batch would otherwise wait for. Nothing else changes: the
// same order, the same noise (TreeNoise::draw_ahead). A run uses at most
// n * d noise numbers (one node of d a step, at most one step a record), which
// bounds both amounts for small problems.
constexpr std::size_t kAheadCap = std::size_t{1} << 20;  // 8 MiB of doubles
constexpr std::size_t kRefill = std::size_t{1} << 15;    // 256 KiB

SamplePool& order_and_noise(std::optional<SamplePool>& pool, const Dataset& data, Index d, std::uint64_t seed,
                            Mechanism& noise) {
  const Index n = data.rows();
  const int threads = available_threads();
  if (threads < 2 || !noise.draws_ahead()) {
    pool.emplace(data, seed);
    return *pool;
  }
  const std::size_t most = d > 0 && n > kAheadCap / d ? kAheadCap : n * d;  // min(n d, cap), no overflow
  const std::size_t first = std::min(n / 4, most);
  const std::size_t refill = std::min(kRefill, most);
  const bool stored = detail::DatasetLayout::sample_order_seed(data) == seed;
  std::exception_ptr error[2];
#pragma omp parallel num_threads(2)
  {
    const int t = omp_get_thread_num();
    try {
      if (t == 0) {
        pool.emplace(data, seed);
        // With the records stored in this order there is nothing to shuffle,
        // and this thread draws the noise; likewise when no second thread came.
        if (stored || omp_get_num_threads() == 1) noise.draw_ahead(stored ? first : 0, refill, threads);
      } else {
        wide::enabled();  // the engine's one-time checks (2 to 4 ms), if still to do
        if (!stored) noise.draw_ahead(first, refill, threads);
      }
    } catch (...) {
      error[t] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : error) {
    if (e) std::rethrow_exception(e);
  }
  return *pool;
}

}  // namespace

void run_spider(const Model& model, const Dataset& data, const SpiderConfig& config, Mechanism& noise,
                const RunOptions& options, Summary& summary) {
  const std::uint64_t seed = summary.seed;
  Diagnostics& diag = summary.diagnostics;
  if (config.epochs > 1 && !(config.restart.kind == RestartRule::Kind::kPeriodic && config.restart.period == 1))
    throw Error("run_spider: several passes over the records need O1 steps only (a fixed batch every step)");
  std::optional<SamplePool> pool_storage;
  SamplePool& pool = order_and_noise(pool_storage, data, model.dim(), seed, noise);
  if (summary.reserved_records > 0) pool.draw(summary.reserved_records);  // the estimate's (clip_estimate.hpp)
  // Poisson steps sample positions among the optimizer's records, in the sample order.
  const IndexList optimizer_records = config.sampler ? pool.draw(pool.remaining()) : IndexList();
  if (config.sampler && !(config.restart.kind == RestartRule::Kind::kPeriodic && config.restart.period == 1))
    throw Error("run_spider: Poisson-sampled steps need O1 steps only");
  GradientOracles oracles(model, data, pool);
  GaussianStream perturbation_stream(seed, StreamPurpose::kPerturbation);
  const Index d = model.dim();
  Vec& x = summary.x;
  Vec x_prev = x, nabla = Vec::Zero(d), released = Vec::Zero(d), g(d);
  double drift = 0, last_release_norm = std::numeric_limits<double>::infinity();
  Index phase_length = 0;
  long long frozen = 1;  // frozen_{-1} = 1 (Algorithm 2 line 2)
  if (options.record_trajectory) summary.trajectory.push_back(x);

  Index steps = 0;
  Iteration record;
  record.x = &x;
  record.planned_steps = config.horizon;
  Vec tail_sum = Vec::Zero(d);
  Index tail_count = 0;
  Index drawn = 0, passes = 1, most_used = 0;  // the optimizer's records over all passes
  for (;;) {
    if (stop_requested(options, steps, record, summary.termination)) break;
    if (config.horizon > 0 && steps >= config.horizon) {
      summary.termination = Termination::kPlannedSteps;
      break;
    }
    bool restart = steps == 0 || phase_length >= config.max_phase_length;
    switch (config.restart.kind) {
      case RestartRule::Kind::kDriftNorm:
      case RestartRule::Kind::kDriftSquared: restart = restart || drift >= config.restart.kappa; break;
      case RestartRule::Kind::kPeriodic: restart = restart || phase_length >= config.restart.period; break;
    }
    double sensitivity = 0;
    Index batch = 0;
    if (restart && config.sampler) {
      IndexList records = config.sampler->sample(static_cast<Index>(optimizer_records.size()));
      for (Index& r : records) r = optimizer_records[r];
      nabla.setZero();
      if (!records.empty()) {
        const OracleOutput o = oracles.o1_on(x, records, config.clip_o1);
        nabla = o.value * static_cast<double>(records.size());  // back to the clipped sum
        diag.clipped_o1 += o.clipped;
        diag.checked_o1 += o.batch;
        diag.nonfinite_o1 += o.nonfinite;
      }
      batch = config.b1;  // the expected batch: the sample's size is secret
      sensitivity = config.clip_o1;
      if (phase_length > 0) summary.phase_lengths.push_back(phase_length);
      phase_length = 0;
      drift = 0;
      ++summary.o1_calls;
    } else if (restart) {
      batch = config.b1;
      if (pool.remaining() < batch && passes < config.epochs) {
        // The next pass: the same order from its start (the estimate's records left out).
        most_used = std::max(most_used, pool.used());
        pool = SamplePool(data, seed);
        if (summary.reserved_records > 0) pool.draw(summary.reserved_records);
        ++passes;
      }
      if (pool.remaining() < batch) {
        summary.termination = Termination::kDataExhausted;
        break;
      }
      const OracleOutput o = oracles.o1(x, batch, config.clip_o1);
      nabla = o.value;
      diag.clipped_o1 += o.clipped;
      diag.checked_o1 += o.batch;
      diag.nonfinite_o1 += o.nonfinite;
      sensitivity = 2.0 * config.clip_o1 / static_cast<double>(batch);
      if (phase_length > 0) summary.phase_lengths.push_back(phase_length);
      phase_length = 0;
      drift = 0;
      ++summary.o1_calls;
    } else {
      const double step = (x - x_prev).norm();
      const double u = config.M * step;
      batch = config.batch.o2_batch(u);
      if (pool.remaining() < batch) {
        summary.termination = Termination::kDataExhausted;
        break;
      }
      const double clip =
          config.clip_o2 ? config.M * std::min(step, config.max_step) : std::numeric_limits<double>::infinity();
      const OracleOutput o = config.inner_clip < std::numeric_limits<double>::infinity()
                                 ? oracles.o2_consistent(x, x_prev, batch, config.inner_clip, clip)
                                 : oracles.o2(x, x_prev, batch, clip);
      nabla += o.value;
      diag.clipped_o2 += o.clipped;
      diag.checked_o2 += o.batch;
      diag.nonfinite_o2 += o.nonfinite;
      sensitivity = 2.0 * clip / static_cast<double>(batch);
    }
    ++phase_length;
    drawn += batch;
    noise.release(nabla, restart, sensitivity, released);
    if (config.sampler) released /= static_cast<double>(config.b1);

    // Lines 9-11: perturb near a possible saddle, then stay frozen for Gamma steps.
    // drift is NOT reset here (SPEC 2.5).
    const long long frozen_prev = frozen;
    frozen = frozen_prev - 1;
    bool perturbed = false;
    if (config.perturbation.enabled && last_release_norm <= config.perturbation.threshold && frozen_prev <= 0) {
      perturbation_stream.fill(g, config.perturbation.zeta / std::sqrt(static_cast<double>(d)));
      released += g;
      frozen = static_cast<long long>(config.perturbation.Gamma);
      ++summary.perturbations;
      perturbed = true;
    }

    x_prev = x;
    x -= config.eta * released;
    const double release_norm = released.norm();
    if (config.restart.kind == RestartRule::Kind::kDriftSquared) {
      drift += (x - x_prev).squaredNorm();
    } else {
      drift += release_norm;
    }
    last_release_norm = release_norm;
    ++steps;
    if (options.record_trajectory) summary.trajectory.push_back(x);
    if (!all_finite(x))
      throw Error("the iterate became non-finite at step " + std::to_string(steps) +
                  " (step size too large for the data? check M)");
    if (drawn > config.tail_from) {
      tail_sum += x;
      ++tail_count;
    }
    record = Iteration{steps, &x, restart, batch, release_norm, perturbed, config.horizon};
  }
  if (phase_length > 0) summary.phase_lengths.push_back(phase_length);
  // The tail average (post-processing of the released iterates).
  if (tail_count > 0) x = tail_sum / static_cast<double>(tail_count);
  summary.steps = steps;
  summary.samples_used = std::max(most_used, pool.used());  // distinct records (passes repeat them)
  if (config.sampler) {
    // Every record of the groups may be sampled; how many gradients were
    // computed is the secret sampling's (diagnostics only).
    const Index bands = static_cast<Index>(std::max(1, config.sampler->account().bands));
    const Index records = static_cast<Index>(optimizer_records.size());
    summary.samples_used = summary.reserved_records + records / bands * bands;
  } else {
    summary.gradient_evaluations = oracles.gradient_evaluations();  // a function of the released step lengths
  }
  diag.gradient_evaluations = oracles.gradient_evaluations();
}

}  // namespace dpsosp::detail
