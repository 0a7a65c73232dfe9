// DP-SGD (single pass over disjoint batches, or multi-epoch with Poisson
// sampling) and the non-private SGD reference.
#include <cmath>
#include <sstream>

#include "optimizers/baselines.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/oracles.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Index kDefaultBatch = 256;

bool stop_requested(const RunOptions& o, Index step, const Vec& x, Summary& s) {
  if (o.stop_flag != nullptr && o.stop_flag->load()) {
    s.termination = "interrupted";
    return true;
  }
  if (o.on_step && !o.on_step(step, x)) {
    s.termination = "callback";
    return true;
  }
  if (o.max_steps > 0 && step >= o.max_steps) {
    s.termination = "max-steps";
    return true;
  }
  return false;
}

// Poisson sampling by geometric gaps: each record is in the batch with
// probability q independently, in O(q n) time per step.
IndexList poisson_batch(Index n, double q, GaussianStream& stream) {
  IndexList batch;
  if (q >= 1.0) {
    batch.resize(n);
    for (Index i = 0; i < n; ++i) batch[i] = i;
    return batch;
  }
  const double log1mq = std::log1p(-q);
  double position = -1.0;
  for (;;) {
    position += 1.0 + std::floor(std::log(stream.uniform()) / log1mq);
    if (position >= static_cast<double>(n)) break;
    batch.push_back(static_cast<Index>(position));
  }
  return batch;
}

}  // namespace

void run_sgd_family(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const bool is_private = o.algorithm == Algorithm::kDpsgd;
  const Index n = data.rows();
  const Index batch = o.batch_size > 0 ? o.batch_size : kDefaultBatch;
  if (batch > n) {
    throw Error(s.algorithm + ": batch size " + std::to_string(batch) + " exceeds the " + std::to_string(n) +
                " records");
  }
  const double lr = o.learning_rate > 0 ? o.learning_rate : 1.0 / o.constants.M;
  const double clip = is_private ? o.constants.G : kInf;
  const bool poisson = is_private && o.epochs > 0;
  SamplePool pool(data, s.seed);
  GradientOracles oracles(model, data, pool);
  GaussianStream noise_stream(key, StreamPurpose::kGaussianNoise);
  // Which records a Poisson batch holds must stay secret (amplification).
  GaussianStream sampling_stream(key, StreamPurpose::kPoisson);
  const Index d = model.dim();
  Vec noise(d);
  double z = 0, q = 0;
  Index planned_steps = 0;
  if (poisson) {
    q = static_cast<double>(batch) / static_cast<double>(n);
    // Converting a double above 2^64 to an integer is undefined; refuse first.
    if (!(std::ceil(o.epochs / q) <= 1e15))
      throw Error(s.algorithm + ": epochs = " + std::to_string(o.epochs) + " at sampling rate " + std::to_string(q) +
                  " means more than 1e15 steps");
    planned_steps = static_cast<Index>(std::ceil(o.epochs / q));
    z = o.overrides.sigma ? *o.overrides.sigma
                          : privacy::calibrate_dpsgd_noise(q, planned_steps, o.privacy.epsilon, o.privacy.delta);
  } else if (is_private) {
    z = o.overrides.sigma ? *o.overrides.sigma : 1.0 / privacy::gdp_mu(o.privacy.epsilon, o.privacy.delta);
  }
  s.params["batch_size"] = static_cast<double>(batch);
  s.params["learning_rate"] = lr;
  if (is_private) s.params["noise_multiplier"] = z;
  if (poisson) {
    s.params["sampling_rate"] = q;
    s.params["epochs"] = o.epochs;
    s.params["planned_steps"] = static_cast<double>(planned_steps);
  }
  Vec& x = s.x;
  if (o.record_trajectory) s.trajectory.push_back(x);
  Index steps = 0, clipped = 0, nonfinite = 0;
  for (;;) {
    if (stop_requested(o, steps, x, s)) break;
    OracleOutput g;
    if (poisson) {
      if (steps >= planned_steps) {
        s.termination = "planned-steps";
        break;
      }
      const IndexList records = poisson_batch(n, q, sampling_stream);
      if (records.empty()) {
        g.value = Vec::Zero(d);
      } else {
        g = oracles.o1_on(x, records, clip);
        g.value *= static_cast<double>(records.size());  // back to the clipped sum
      }
      // add/remove-one: the clipped sum has sensitivity G; divide by the expected batch.
      noise_stream.fill(noise, z * clip);
      g.value = (g.value + noise) / (q * static_cast<double>(n));
    } else {
      if (pool.remaining() < batch) {
        s.termination = "data-exhausted";
        break;
      }
      g = oracles.o1(x, batch, clip);
      if (is_private) {
        // replace-one: the mean of `batch` clipped gradients has sensitivity 2G/batch.
        noise_stream.fill(noise, z * 2.0 * clip / static_cast<double>(batch));
        g.value += noise;
      }
    }
    clipped += g.clipped;
    nonfinite += g.nonfinite;
    x -= lr * g.value;
    ++steps;
    if (o.record_trajectory) s.trajectory.push_back(x);
    if (!x.allFinite()) throw Error(s.algorithm + ": the iterate became non-finite at step " + std::to_string(steps) +
                                    " (learning rate too large? check M)");
  }
  s.steps = steps;
  s.o1_calls = steps;
  s.samples_used = poisson ? n : pool.used();
  // A Poisson run's gradient count is the sum of its batch sizes, which the
  // secret sampling chose: not part of the release.
  if (!poisson) s.gradient_evaluations = oracles.gradient_evaluations();
  s.diagnostics.gradient_evaluations = oracles.gradient_evaluations();
  s.diagnostics.clipped_o1 = clipped;
  s.diagnostics.nonfinite_o1 = nonfinite;
  s.delta = o.privacy.delta;
  if (!is_private) {
    s.epsilon = kInf;
    s.mu = kInf;
    s.epsilon_rdp = kInf;
    s.zcdp_rho = kInf;
    s.delta = 0;
    s.accounting = "none (non-private)";
    s.adjacency = "none";
  } else if (poisson) {
    s.noise_multiplier = z;
    s.sigma = z * clip;
    s.sensitivity = clip;
    // The guarantee is for the planned steps, fixed before the run.
    s.epsilon_rdp = privacy::dpsgd_poisson_epsilon(q, z, planned_steps, o.privacy.delta);
    s.epsilon = s.epsilon_rdp;
    s.mu = 0;
    s.depth = 1;
    s.accounting = "rdp-poisson";
    // Accounted for add/remove-one (dp_accounting's and Opacus' convention),
    // but the report reveals n: what holds is zero-out adjacency, one record
    // replaced by a null record that contributes nothing (docs/privacy-accounting.md).
    s.adjacency = "zero-out";
  } else {
    s.noise_multiplier = z;
    s.sensitivity = 2.0 * clip / static_cast<double>(batch);
    s.sigma = z * s.sensitivity;
    s.mu = 1.0 / z;
    s.zcdp_rho = s.mu * s.mu / 2.0;
    s.epsilon = privacy::gdp_epsilon(s.mu, o.privacy.delta);
    s.epsilon_rdp = privacy::zcdp_to_epsilon(s.zcdp_rho, o.privacy.delta);
    s.depth = 1;
    s.accounting = "gdp-gaussian";
    s.adjacency = "replace-one";
  }
}

}  // namespace dpsosp::detail
