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

#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp::detail {
namespace {

MfChoices choices_of(const RunOptions& o) {
  MfChoices c;
  c.b1 = o.batch_size;
  c.max_phase_length = o.max_phase_length;
  c.o2 = o.o2;
  c.learning_rate = o.learning_rate;
  c.tail = o.tail;
  c.alpha_scale = o.alpha_scale_or_default();
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
  const MfParameters p = spider_mf_adaptive_parameters(n, model.dim(), *o.privacy, o.constants, choices_of(o),
                                                       o.overrides);
  const std::unique_ptr<Mechanism> noise = make_mf_mechanism(model.dim(), key, p.sensitivity, p.horizon, *o.privacy,
                                                             p.sigma);
  report(s, p);
  SpiderConfig c;
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
  c.tail_from = p.tail > 0 ? s.reserved_records + static_cast<Index>(std::floor((1.0 - p.tail) * static_cast<double>(n)))
                           : std::numeric_limits<Index>::max();
  run_spider(model, data, c, *noise, o, s);
  s.privacy = noise->account();
}

constexpr unsigned kMfOverrides = kSetAlpha | kSetKappa | kSetSigma | kSetNoiseMultiplier | kSetZeta |
                                  kSetThreshold | kSetGamma;

}  // namespace

AlgorithmRow spider_mf_adaptive_row() {
  AlgorithmRow r;
  r.info = {Algorithm{}, "spider-mf-adaptive",
            "SpiderBoost with matrix-factorization noise over the run, consistent O2, O2 only where it pays, and "
            "a tail average (the default)",
            /*is_private=*/true, /*allows_infinite_epsilon=*/false, MechanismKind::kMatrixFactorization,
            kKnobAlphaScale | kKnobMaxPhaseLength | kKnobBatchSize | kKnobLearningRate | kKnobTail | kKnobO2,
            kMfOverrides};
  r.run = run;
  return r;
}

}  // namespace dpsosp::detail
