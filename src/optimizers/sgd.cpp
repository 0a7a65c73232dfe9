// dpsgd (single pass over disjoint batches with the Gaussian mechanism, or
// multi-epoch with Poisson sampling and the Poisson-subsampled Gaussian) and
// the non-private SGD reference.
#include <cmath>
#include <limits>

#include "dpsosp/error.hpp"
#include "dpsosp/oracles.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void run(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const bool is_private = o.is_private_run();
  // The records the optimizer may use: all but those a private estimate of G
  // or M took (the first of the sample order, clip_estimate.hpp).
  const Index n = data.rows() - s.reserved_records;
  const Index batch = o.sgd_batch_size(n);
  if (batch > n) {
    throw Error(s.algorithm + ": batch size " + std::to_string(batch) + " exceeds the " + std::to_string(n) +
                " records");
  }
  const double lr = o.learning_rate.value_or(1.0 / o.constants.M);
  const double clip = is_private ? o.constants.G : kInf;
  const bool poisson = o.poisson();
  const Index d = model.dim();
  std::unique_ptr<Mechanism> noise;
  PoissonGaussianMechanism* sampler = nullptr;
  double q = 0;
  Index planned_steps = 0;
  const PrivacyRecord record = timed(s.diagnostics.accounting_seconds, [&] {
    if (poisson) {
      q = static_cast<double>(batch) / static_cast<double>(n);
      // Converting a double above 2^64 to an integer is undefined; refuse first.
      if (!(std::ceil(*o.epochs / q) <= 1e15))
        throw Error(s.algorithm + ": epochs = " + std::to_string(*o.epochs) + " at sampling rate " + std::to_string(q) +
                    " means more than 1e15 steps");
      planned_steps = static_cast<Index>(std::ceil(*o.epochs / q));
      auto poisson_mechanism =
          make_poisson_gaussian_mechanism(d, key, clip, q, planned_steps, *o.privacy, o.overrides.noise_multiplier,
                                          o.accountant.value_or(Accountant::kPld));
      sampler = poisson_mechanism.get();
      noise = std::move(poisson_mechanism);
    } else if (is_private) {
      // replace-one: the mean of `batch` clipped gradients has sensitivity 2G/batch.
      noise = make_gaussian_mechanism(d, key, *o.privacy, 2.0 * clip / static_cast<double>(batch),
                                      o.overrides.noise_multiplier);
    } else {
      noise = make_no_mechanism();
    }
    return noise->account();
  });
  s.params["batch_size"] = static_cast<double>(batch);
  s.params["learning_rate"] = lr;
  if (is_private) s.params["noise_multiplier"] = record.noise_multiplier;
  if (poisson) {
    s.params["sampling_rate"] = q;
    s.params["epochs"] = *o.epochs;
    s.params["planned_steps"] = static_cast<double>(planned_steps);
  }
  SamplePool pool(data, s.seed);
  GradientOracles oracles(model, data, pool);
  // Poisson sampling picks among the optimizer's records: index k of a batch
  // is the record at position reserved + k of the sample order.
  IndexList optimizer_records;
  if (s.reserved_records > 0) {
    pool.draw(s.reserved_records);
    if (poisson) optimizer_records = pool.draw(n);
  }
  Vec& x = s.x;
  if (o.record_trajectory) s.trajectory.push_back(x);
  Index steps = 0;
  Iteration last;
  last.x = &x;
  last.planned_steps = planned_steps;
  Vec released(d);
  for (;;) {
    if (stop_requested(o, steps, last, s.termination)) break;
    OracleOutput g;
    if (poisson) {
      if (steps >= planned_steps) {
        s.termination = Termination::kPlannedSteps;
        break;
      }
      IndexList records = sampler->sample(n);
      if (!optimizer_records.empty())
        for (Index& r : records) r = optimizer_records[r];
      if (records.empty()) {
        g.value = Vec::Zero(static_cast<Eigen::Index>(d));
      } else {
        g = oracles.o1_on(x, records, clip);
        g.value *= static_cast<double>(records.size());  // back to the clipped sum
      }
      g.batch = records.size();
      // add/remove-one: the clipped sum has sensitivity G; divide by the expected batch.
      noise->release(g.value, true, clip, released);
      g.value = released / (q * static_cast<double>(n));
    } else {
      if (pool.remaining() < batch) {
        s.termination = Termination::kDataExhausted;
        break;
      }
      g = oracles.o1(x, batch, clip);
      if (is_private) {
        noise->release(g.value, true, 2.0 * clip / static_cast<double>(batch), released);
        g.value = released;
      }
    }
    s.diagnostics.clipped_o1 += g.clipped;
    s.diagnostics.checked_o1 += g.batch;
    s.diagnostics.nonfinite_o1 += g.nonfinite;
    x -= lr * g.value;
    ++steps;
    if (o.record_trajectory) s.trajectory.push_back(x);
    if (!all_finite(x))
      throw Error(s.algorithm + ": the iterate became non-finite at step " + std::to_string(steps) +
                  " (learning rate too large? check M)");
    // (the batch size of a Poisson step is secret: not in the record)
    last = Iteration{steps, &x, true, poisson ? 0 : g.batch, g.value.norm(), false, planned_steps};
  }
  s.steps = steps;
  s.o1_calls = steps;
  s.samples_used = poisson ? data.rows() : pool.used();
  // A Poisson run's gradient count is the sum of its batch sizes, which the
  // secret sampling chose: not part of the release.
  if (!poisson) s.gradient_evaluations = oracles.gradient_evaluations();
  s.diagnostics.gradient_evaluations = oracles.gradient_evaluations();
  s.privacy = record;
}

// The audit's linear canary: one step on `batch` records.
void audit_linear(RunOptions& o, Index batch, double, Index) { o.batch_size = batch; }

}  // namespace

AlgorithmRow dpsgd_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "dpsgd",
            "DP-SGD: clipped per-example gradients plus Gaussian noise; single pass, or epochs > 0 for Poisson "
            "sampling",
            /*is_private=*/true,
            /*allows_infinite_epsilon=*/false,
            MechanismKind::kGaussian,
            kKnobBatchSize | kKnobEpochs | kKnobLearningRate | kKnobAccountant,
            kSetNoiseMultiplier};
  r.run = run;
  r.audit = {audit_linear, nullptr, nullptr};
  return r;
}

AlgorithmRow sgd_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "sgd",
            "the non-private SGD reference (single pass, no clipping)",
            /*is_private=*/false,
            /*allows_infinite_epsilon=*/true,
            MechanismKind::kNone,
            kKnobBatchSize | kKnobLearningRate,
            0};
  r.run = run;
  return r;
}

}  // namespace dpsosp::detail
