// spider-gauss-fixed (Ganesh et al. 2023, with hidden constants 1): the
// SpiderBoost core with the squared-drift restart rule, fixed O2 batches and
// the Gaussian mechanism on every O1/O2 output (the noise accumulates until
// the next O1). alpha follows their (sqrt(d)/(n eps))^(3/7) rate; kappa
// balances O1 against O2 sample use (derived here, docs/parameters.md).
#include <cmath>
#include <limits>
#include <sstream>

#include "dpsosp/error.hpp"
#include "optimizers/registry.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void run(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  const ProblemConstants& k = o.constants;
  const PrivacyTarget& target = *o.privacy;
  const Index rows = data.rows() - s.reserved_records;
  const double n = static_cast<double>(rows), d = static_cast<double>(model.dim()), sd = std::sqrt(d);
  const double eps = target.epsilon;
  SpiderParameters p;  // the same structure, for the report
  const double stat = theorem_alpha(rows, model.dim(), kInf, k);
  const double priv = std::pow(k.B * k.M * std::cbrt(k.G) * sd / (n * eps), 3.0 / 7.0);
  p.alpha = o.overrides.alpha ? *o.overrides.alpha : o.alpha_scale_or_default() * (priv + stat);
  const double a = p.alpha;
  p.kappa = o.overrides.kappa ? *o.overrides.kappa
                              : std::max(std::pow(k.G / (k.M * k.M * k.M), 2.0 / 3.0) * std::pow(a, 4.0 / 3.0),
                                         k.G * a / (k.M * k.M));
  p.b = o.overrides.b ? *o.overrides.b : batch_count(k.G * sd / (eps * a) + k.G * k.G / (a * a));
  const Index b2 = o.batch_size ? *o.batch_size
                                : batch_count(k.M * std::sqrt(d * p.kappa) / (eps * a) + k.M * k.M * p.kappa / (a * a));
  p.eta = o.overrides.eta ? *o.overrides.eta : 1.0 / k.M;
  p.T = o.overrides.T ? *o.overrides.T : batch_count(k.B * k.M / (a * a));
  p.Gamma = o.overrides.Gamma ? *o.overrides.Gamma : batch_count(k.M / std::sqrt(k.rho * a));
  p.zeta = o.overrides.zeta ? *o.overrides.zeta : a;
  p.threshold = o.overrides.threshold ? *o.overrides.threshold : a;
  p.max_phase_length = o.max_phase_length.value_or(0);  // 0: no cap (no tree here)
  if (p.b > rows) {
    std::ostringstream os;
    os << "spider-gauss-fixed: n = " << rows << " records cannot fill one O1 batch of b1 = " << p.b
       << " records (raise epsilon or alpha_scale, or give more data)";
    throw Error(os.str());
  }
  // Reported at the O1 release's sensitivity 2G/b; O2 noise scales with the step.
  const double o1_sensitivity = 2.0 * k.G / static_cast<double>(p.b);
  const std::unique_ptr<Mechanism> noise = timed(s.diagnostics.accounting_seconds, [&] {
    return make_gaussian_mechanism(model.dim(), key, target, o1_sensitivity, o.overrides.noise_multiplier);
  });
  const PrivacyRecord record = timed(s.diagnostics.accounting_seconds, [&] { return noise->account(); });
  p.sensitivity = record.sensitivity;
  p.sigma = record.sigma;
  report_spider_params(s, p);
  s.params["b2"] = static_cast<double>(b2);
  s.params["noise_multiplier"] = record.noise_multiplier;
  SpiderConfig c = spider_config(o, p, true);
  c.restart = {RestartRule::Kind::kDriftSquared, p.kappa, 0};
  c.batch.adaptive = false;
  c.batch.fixed = b2;
  run_spider(model, data, c, *noise, o, s);
  s.privacy = record;
}

void audit_linear(RunOptions& o, Index batch, double, Index phase_length) {
  o.max_phase_length = phase_length;
  o.overrides.b = batch;
}

// O2 batch 2, with its own Gaussian noise z * 2 M |x_1| / 2; no restart, no perturbation.
QuadraticAuditSetup audit_quadratic(RunOptions& o, const QuadraticAudit& q) {
  o.batch_size = 2;
  o.overrides.kappa = std::numeric_limits<double>::max();
  o.overrides.threshold = 0.0;
  QuadraticAuditSetup setup;
  setup.n = q.batch + 2;
  return setup;
}

}  // namespace

AlgorithmRow spider_gauss_fixed_row() {
  AlgorithmRow r;
  r.info = {
      Algorithm{},
      "spider-gauss-fixed",
      "Ganesh et al. 2023: SpiderBoost with the Gaussian mechanism on every release, fixed batches",
      /*is_private=*/true,
      /*allows_infinite_epsilon=*/false,
      MechanismKind::kGaussian,
      kKnobAlphaScale | kKnobBatchSize | kKnobMaxPhaseLength,
      kSetAlpha | kSetKappa | kSetNoiseMultiplier | kSetEta | kSetZeta | kSetThreshold | kSetB | kSetT | kSetGamma};
  r.run = run;
  r.audit = {audit_linear, audit_quadratic, nullptr};
  return r;
}

}  // namespace dpsosp::detail
