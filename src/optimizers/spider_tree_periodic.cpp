// spider-tree-periodic (Arora et al. 2023, the FOSP method): the SpiderBoost
// core with an O1 every q steps, a fixed O2 batch, the tree mechanism per
// phase and no saddle perturbation. Steps are bounded by max_step = 2G/M for
// the O2 clip, so every node has sensitivity <= max(2G/b1, 2 M max_step / b2).
#include <algorithm>
#include <cmath>

#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp::detail {
namespace {

void run(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const ProblemConstants& k = o.constants;
  const PrivacyTarget& target = *o.privacy;
  const double sd = std::sqrt(static_cast<double>(model.dim()));
  const double eps = target.epsilon;
  double& accounting = s.diagnostics.accounting_seconds;
  SpiderParameters p = timed(accounting, [&] {
    return spider_tree_adaptive_parameters(data.rows() - s.reserved_records, model.dim(), target, k,
                                           o.alpha_scale_or_default(), o.overrides, o.max_phase_length.value_or(0));
  });
  const double a = p.alpha;
  const double max_step = 2.0 * k.G / k.M;
  const Index q = o.period ? *o.period : batch_count(std::sqrt(static_cast<double>(p.b)) * a / (2.0 * k.G));
  p.max_phase_length = q;  // the phase is exactly q steps: the tree needs depth ceil(log2(q + 1))
  p.depth = privacy::tree_depth(q);
  const Index b2 = o.batch_size
                       ? *o.batch_size
                       : batch_count(4.0 * k.G * sd / (a * eps) + 4.0 * static_cast<double>(q) * k.G * k.G / (a * a));
  p.sensitivity = std::max(2.0 * k.G / static_cast<double>(p.b), 2.0 * k.M * max_step / static_cast<double>(b2));
  const std::unique_ptr<Mechanism> noise = timed(accounting, [&] {
    return make_tree_mechanism(model.dim(), key, p.sensitivity, q, target,
                               tree_sigma_override(o.overrides, p.sensitivity));
  });
  p.sigma = timed(accounting, [&] { return noise->account().sigma; });
  report_spider_params(s, p);
  s.params["q"] = static_cast<double>(q);
  s.params["b2"] = static_cast<double>(b2);
  SpiderConfig c = spider_config(o, p, true);
  c.max_step = max_step;
  c.restart = {RestartRule::Kind::kPeriodic, 0, q};
  c.batch.adaptive = false;
  c.batch.fixed = b2;
  c.perturbation.enabled = false;
  run_spider(model, data, c, *noise, o, s);
  s.privacy = timed(accounting, [&] { return noise->account(); });
}

// s = max(2G/b1, 4G/b2) = 2G/b1 with b2 = 2 b1; O1 every phase_length steps.
void audit_linear(RunOptions& o, Index batch, double, Index phase_length) {
  o.overrides.b = batch;
  o.batch_size = 2 * batch;
  o.period = phase_length;
}

// O2 batch 2: s = max(2G/b, 2 M max_step / 2) = 2G. The O2 clip is
// M min(|x_1|, max_step) = min(M |x_1|, 2G): eta = 4/M makes M |x_1| =
// 4 |G + noise|, mostly above 2G, so the clip is mostly 2G and the canary's
// shift 2G = s.
QuadraticAuditSetup audit_quadratic(RunOptions& o, const QuadraticAudit& q) {
  o.batch_size = 2;
  o.period = 2;
  o.overrides.eta = 4.0 / q.M;
  QuadraticAuditSetup setup;
  setup.max_step = 2.0 * q.G / q.M;
  setup.n = q.batch + 2;
  return setup;
}

}  // namespace

AlgorithmRow spider_tree_periodic_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "spider-tree-periodic",
            "Arora et al. 2023: SpiderBoost with an O1 every q steps, tree noise, fixed O2 batch, no perturbation",
            /*is_private=*/true,
            /*allows_infinite_epsilon=*/false,
            MechanismKind::kTree,
            kKnobAlphaScale | kKnobBatchSize | kKnobPeriod,
            kSetAlpha | kSetSigma | kSetNoiseMultiplier | kSetEta | kSetB | kSetT};
  r.run = run;
  r.audit = {audit_linear, audit_quadratic, nullptr};
  return r;
}

}  // namespace dpsosp::detail
