// spider-mf-adaptive: the practical private SOSP finder (docs/parameters.md,
// "spider-mf-adaptive"; docs/matrix-factorization.md). The SpiderBoost core
// with
//  * one matrix factorization of the noise over the whole run (square root,
//    as a BLT), so that the noise of successive releases cancels where the
//    iterates sum them, instead of a fresh tree per phase;
//  * O1 on gradients clipped at G and the consistent O2: differences of the
//    same clipped gradients, clipped at min(M ||dx||, 2G), so both track one
//    objective; O2 batches b_t = ceil(M ||dx|| b1 / G), so every release has
//    the O1's sensitivity 2G/b1;
//  * O2 steps only where sampling, not privacy noise, limits an O1 step, and
//    short phases (both from public quantities: mf_params.cpp);
//  * the tail average of the iterates as the output (post-processing);
//  * the saddle perturbation of Algorithm 2.
#include <cmath>
#include <limits>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp::detail {
namespace {

MfChoices choices_of(const RunOptions& o, Index records) {
  MfChoices c;
  c.b1 = o.batch_size;
  c.max_phase_length = o.max_phase_length;
  c.o2 = o.o2;
  c.learning_rate = o.learning_rate;
  c.tail = o.tail;
  c.alpha_scale = o.alpha_scale_or_default();
  c.sampling = o.sampling;
  c.bands = o.bands;
  c.accountant = o.accountant.value_or(Accountant::kPld);
  const double epochs = o.epochs.value_or(0.0);
  const bool poisson = sampling_or_default(o.sampling, epochs) == Sampling::kPoisson;
  if (!poisson && !(epochs == std::floor(epochs) && epochs <= 1e6)) {
    std::ostringstream os;
    os << "spider-mf-adaptive: epochs = " << epochs
       << ": passes over the sample order (sampling = order) are whole; give a whole number of epochs (at most "
          "1e6), or sampling = poisson";
    throw Error(os.str());
  }
  c.epochs = epochs > 0          ? epochs
             : !o.default_passes ? 1.0
             : o.default_epochs  ? *o.default_epochs
                                 : static_cast<double>(default_passes(records));
  return c;
}

void report(Summary& s, const MfParameters& p) {
  s.params["alpha"] = p.alpha;
  s.params["b1"] = static_cast<double>(p.b1);
  s.params["o2"] = p.o2 ? 1.0 : 0.0;
  s.params["M2"] = p.M2;
  s.params["bt_slope"] = p.bt_slope;
  s.params["b2_min"] = static_cast<double>(p.b2_min);
  s.params["kappa"] = p.kappa;
  s.params["max_phase_length"] = static_cast<double>(p.max_phase_length);
  s.params["horizon"] = static_cast<double>(p.horizon);
  s.params["epochs"] = p.epochs;
  if (p.sampling == Sampling::kPoisson) {
    s.params["bands"] = static_cast<double>(p.bands);
    s.params["group_size"] = static_cast<double>(p.group_size);
    s.params["sampling_rate"] = p.sampling_rate;
    s.params["cycles"] = static_cast<double>(p.cycles);
    s.params["noise_multiplier"] = p.noise_multiplier;
  } else {
    s.params["steps_per_epoch"] = static_cast<double>(p.steps_per_epoch);
  }
  s.params["sensitivity"] = p.sensitivity;
  s.params["sigma"] = p.sigma;
  s.params["column_norm"] = p.column_norm;
  s.params["step_noise"] = p.step_noise;
  s.params["eta"] = p.eta;
  s.params["tail"] = p.tail;
  s.params["Gamma"] = static_cast<double>(p.Gamma);
  s.params["zeta"] = p.zeta;
  s.params["threshold"] = p.threshold;
}

void run(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const Index n = data.rows() - s.reserved_records;  // those the optimizer may use
  double& accounting = s.diagnostics.accounting_seconds;
  const MfParameters p = timed(accounting, [&] {
    return spider_mf_adaptive_parameters(n, model.dim(), *o.privacy, o.constants, choices_of(o, data.rows()),
                                         o.overrides);
  });
  std::unique_ptr<Mechanism> noise;
  SpiderConfig c;
  if (p.sampling == Sampling::kPoisson) {
    // The clipped sums of the sampled records, sensitivity G (zero-out); the
    // core divides each release by the expected batch b1.
    auto banded = timed(accounting, [&] {
      return make_poisson_gaussian_mechanism(model.dim(), key, o.constants.G, p.sampling_rate, p.cycles, *o.privacy,
                                             p.noise_multiplier, p.accountant, p.bands);
    });
    c.sampler = banded.get();
    noise = std::move(banded);
  } else {
    noise = timed(accounting, [&] {
      return make_mf_mechanism(model.dim(), key, p.sensitivity, p.horizon, *o.privacy, p.sigma,
                               p.epochs > 1 ? p.steps_per_epoch : 0);
    });
  }
  report(s, p);
  c.b1 = p.b1;
  c.clip_o1 = o.constants.G;
  c.clip_o2 = true;
  c.inner_clip = o.constants.G;
  c.M = p.M2;
  c.max_step = 2.0 * o.constants.G / p.M2;  // the O2 clip min(M2 ||dx||, 2G)
  c.eta = p.eta;
  c.max_phase_length = p.max_phase_length;
  if (p.o2) {
    c.restart = {RestartRule::Kind::kDriftNorm, p.kappa, 0};
  } else {
    c.restart = {RestartRule::Kind::kPeriodic, 0, 1};
  }
  c.batch.adaptive = true;
  c.batch.slope = p.bt_slope;
  c.perturbation = {true, p.threshold, p.zeta, p.Gamma};
  c.horizon = p.horizon;
  c.epochs = p.sampling == Sampling::kPoisson ? 1 : static_cast<Index>(p.epochs);
  // The tail: the iterates after the records drawn, over all passes, pass
  // (1 - tail) of the run's (n a pass; Poisson steps count b1 each).
  const double records = p.sampling == Sampling::kPoisson ? static_cast<double>(p.horizon) * static_cast<double>(p.b1)
                                                          : p.epochs * static_cast<double>(n);
  c.tail_from =
      p.tail > 0 ? static_cast<Index>(std::floor((1.0 - p.tail) * records)) : std::numeric_limits<Index>::max();
  run_spider(model, data, c, *noise, o, s);
  s.privacy = timed(accounting, [&] { return noise->account(); });
}

// The audit's linear canary (docs/privacy.md): every step an O1 on `batch`
// records, each release's sensitivity 2G/b1, no saddle perturbation (public
// noise the attacker would only have to subtract).
void audit_linear(RunOptions& o, Index batch, double, Index) {
  o.batch_size = batch;
  o.o2 = false;
  o.overrides.threshold = 0.0;
}

// The audit's quadratic-o2 canary: step 1 an O1 at x_0 = 0 (every record's
// gradient the drift G e1), step 2 the consistent O2 (phases of 2, no drift
// restart, no perturbation). eta = 1/M makes M |x_1| = |G + noise|, mostly
// below 2G, so the O2 clip is M |x_1| and b_t = ceil(M |x_1| b1 / G) puts the
// release's sensitivity 2 M |x_1| / b_t at about the bound 2G/b1. The
// canary's steep quadratic centred at m = -0.02 G/M flips its G-clipped
// gradient between x_0 and x_1 whenever x_1 < m - 2G/(k c M) (rel_1 > 0.04 G
// at c >= 1): its difference, 2G before the O2 clip, saturates that clip.
// n leaves room for b_t up to ceil((G + 5 sigma) b1 / G); sigma grows with
// the horizon n - b1 + 1 (O2 batches of one record at least), hence the loop.
QuadraticAuditSetup audit_quadratic(RunOptions& o, const QuadraticAudit& q) {
  o.batch_size = q.batch;
  o.o2 = true;
  o.overrides.kappa = std::numeric_limits<double>::max();
  o.overrides.threshold = 0.0;
  QuadraticAuditSetup s;
  s.max_step = 2.0 * q.G / q.M;
  s.centre = -0.02 * q.G / q.M;
  s.curvature = 100.0;
  const double b = static_cast<double>(q.batch);
  s.n = q.batch + 2;
  for (int pass = 0; pass < 64; ++pass) {
    const MfParameters p =
        spider_mf_adaptive_parameters(s.n, q.dim, q.target, o.constants, choices_of(o, s.n), o.overrides);
    const Index want = q.batch + static_cast<Index>(std::ceil((q.G + 5.0 * p.sigma) * b / q.G)) + 1;
    if (want <= s.n) break;
    s.n = want;
  }
  return s;
}

// unclipped-o2: G and M raised `raise`-fold, so the inner clip and the O2
// clip min(M ||dx||, 2G) are that many times the honest ones and the canary's
// difference passes at `raise` times the honest clip; b_t = ceil(M ||dx|| b1 /
// G), the step (learning rate 1/M) and the noise (sigma) stay the honest ones.
void audit_unclipped_o2(RunOptions& o, const QuadraticAudit& q, const QuadraticAuditSetup&, double sigma) {
  o.constants.G = q.raise * q.G;
  o.constants.M = q.raise * q.M;
  o.learning_rate = 1.0 / q.M;
  o.overrides.sigma = sigma;
  o.overrides.noise_multiplier.reset();
}

constexpr unsigned kMfOverrides =
    kSetAlpha | kSetKappa | kSetSigma | kSetNoiseMultiplier | kSetZeta | kSetThreshold | kSetGamma;

}  // namespace

AlgorithmRow spider_mf_adaptive_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "spider-mf-adaptive",
            "SpiderBoost with matrix-factorization noise over the run, O1 steps (consistent O2 on request) and "
            "a tail average (the default)",
            /*is_private=*/true,
            /*allows_infinite_epsilon=*/false,
            MechanismKind::kMatrixFactorization,
            kKnobAlphaScale | kKnobMaxPhaseLength | kKnobBatchSize | kKnobLearningRate | kKnobTail | kKnobO2 |
                kKnobEpochs | kKnobSampling | kKnobBands | kKnobAccountant,
            kMfOverrides};
  r.run = run;
  r.audit = {audit_linear, audit_quadratic, audit_unclipped_o2};
  return r;
}

}  // namespace dpsosp::detail
