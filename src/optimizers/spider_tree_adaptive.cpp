// spider-tree-adaptive (Liu & Talwar, paper Algorithm 2, SPEC section 2) and
// its non-private reference spider: the SpiderBoost core with the drift
// restart rule, adaptive O2 batches b_t = max(ceil(M ||dx|| bt_slope), 1) and
// the tree mechanism. Parameters: params.cpp, docs/parameters.md.
#include <cmath>
#include <limits>

#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void run(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const bool is_private = o.is_private_run();
  const PrivacyTarget target = is_private ? *o.privacy : PrivacyTarget{kInf, 1e-6};
  double& accounting = s.diagnostics.accounting_seconds;
  SpiderParameters p = timed(accounting, [&] {
    return spider_tree_adaptive_parameters(data.rows() - s.reserved_records, model.dim(), target, o.constants,
                                           o.alpha_scale_or_default(), o.overrides, o.max_phase_length.value_or(0));
  });
  SpiderConfig c = spider_config(o, p, is_private);
  c.restart = {RestartRule::Kind::kDriftNorm, p.kappa, 0};
  if (is_private || !o.batch_size) {
    c.batch.adaptive = true;  // b_t = max(ceil(u_t * bt_slope), 1), u_t = M ||x_t - x_{t-1}||
    c.batch.slope = p.bt_slope;
  } else {  // the non-private reference may use a fixed O2 batch
    c.batch.adaptive = false;
    c.batch.fixed = *o.batch_size;
  }
  // Every node's sensitivity is at most s = max(2G/b, 2/bt_slope) (SPEC 2.3);
  // the mechanism checks each release against it.
  const std::unique_ptr<Mechanism> noise = timed(accounting, [&] {
    return is_private ? make_tree_mechanism(model.dim(), key, p.sensitivity, p.max_phase_length, target,
                                            tree_sigma_override(o.overrides, p.sensitivity))
                      : make_no_mechanism();
  });
  report_spider_params(s, p);
  run_spider(model, data, c, *noise, o, s);
  s.privacy = timed(accounting, [&] { return noise->account(); });
}

// The audit's linear canary: one O1 per step, s = max(2G/b, 2/bt_slope) = 2G/b
// with bt_slope >= kappa/alpha^2 = 2b/G.
void audit_linear(RunOptions& o, Index batch, double G, Index phase_length) {
  o.max_phase_length = phase_length;
  o.overrides.b = batch;
  o.overrides.alpha = G;
  o.overrides.kappa = 2.0 * static_cast<double>(batch) * G;
}

// The audit's quadratic-o2 canary. bt_slope S = kappa/alpha^2 = b/G: the O2
// term 2/S of the node sensitivity s equals the O1 term 2G/b, and b_t =
// ceil(M |x_1| S) is about b (M |x_1| = |G + node noise| with eta = 1/M), large
// enough that 2 M |x_1| / b_t is close to s. kappa (the drift |released_1|
// that forces an O1) exceeds G + 20 node noises even after unclipped-o2
// divides it by `raise`, and alpha is large enough that kappa/alpha^2 stays
// the larger term of bt_slope then.
QuadraticAuditSetup audit_quadratic(RunOptions& o, const QuadraticAudit& q) {
  const double S = static_cast<double>(q.batch) / q.G;
  const double mu = privacy::gdp_mu(q.target.epsilon, q.target.delta);
  const double sigma_estimate = (2.0 / S) * std::sqrt(2.0) / mu;
  const double alpha = std::max(std::sqrt(q.raise * (q.G + 20.0 * sigma_estimate) / S),
                                2.0 * q.raise * std::sqrt(static_cast<double>(q.dim)) / (S * q.target.epsilon));
  QuadraticAuditSetup setup;
  setup.kappa = S * alpha * alpha;
  o.overrides.alpha = alpha;
  o.overrides.kappa = setup.kappa;
  o.overrides.threshold = 0.0;  // no saddle perturbation
  // Room for b_t up to ceil((G + 8 node noises) S).
  const SpiderParameters p =
      spider_tree_adaptive_parameters(q.batch + 1, q.dim, q.target, o.constants, 1.0, o.overrides, 2);
  setup.n = q.batch + static_cast<Index>(std::ceil((q.G + 8.0 * p.sigma) * p.bt_slope)) + 1;
  return setup;
}

// M' = raise * M: the O2 clip M' |dx| is above the canary's c M |dx|. kappa /
// raise keeps b_t = ceil(M' |dx| kappa / (raise alpha^2)) as honest, eta = 1/M
// the step, and sigma the honest node noise.
void audit_unclipped_o2(RunOptions& o, const QuadraticAudit& q, const QuadraticAuditSetup& s, double sigma) {
  o.constants.M = q.raise * q.M;
  o.overrides.kappa = s.kappa / q.raise;
  o.overrides.eta = 1.0 / q.M;
  o.overrides.sigma = sigma;
  o.overrides.noise_multiplier.reset();
}

constexpr unsigned kSpiderOverrides =
    kSetAlpha | kSetKappa | kSetEta | kSetZeta | kSetThreshold | kSetB | kSetT | kSetGamma;

}  // namespace

AlgorithmRow spider_tree_adaptive_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "spider-tree-adaptive",
            "Liu & Talwar: SpiderBoost with the tree mechanism and adaptive O2 batches (the paper's algorithm)",
            /*is_private=*/true,
            /*allows_infinite_epsilon=*/true,
            MechanismKind::kTree,
            kKnobAlphaScale | kKnobMaxPhaseLength,
            kSpiderOverrides | kSetSigma | kSetNoiseMultiplier};
  r.run = run;
  r.audit = {audit_linear, audit_quadratic, audit_unclipped_o2};
  return r;
}

AlgorithmRow spider_row() {
  AlgorithmRow r;
  r.info = {Algorithm{},
            "spider",
            "the non-private SpiderBoost reference (spider-tree-adaptive with eps = inf, no clipping; "
            "batch_size fixes its O2 batch)",
            /*is_private=*/false,
            /*allows_infinite_epsilon=*/true,
            MechanismKind::kNone,
            kKnobAlphaScale | kKnobMaxPhaseLength | kKnobBatchSize,
            kSpiderOverrides};
  r.run = run;
  return r;
}

}  // namespace dpsosp::detail
