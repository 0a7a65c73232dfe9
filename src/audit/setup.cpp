// One audit's setup (src/audit/setup.hpp, docs/privacy.md).
#include "audit/setup.hpp"

#include <algorithm>
#include <cmath>

#include "audit/canaries.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::audit::detail {
using dpsosp::detail::algorithm_row;

bool same_release(const Summary& a, const Summary& b) {
  auto same = [](const Vec& u, const Vec& v) { return u.size() == v.size() && (u.array() == v.array()).all(); };
  if (!same(a.x, b.x) || a.trajectory.size() != b.trajectory.size()) return false;
  for (std::size_t t = 0; t < a.trajectory.size(); ++t)
    if (!same(a.trajectory[t], b.trajectory[t])) return false;
  return true;
}

MfScore::MfScore(Index horizon, const std::vector<Index>& canary_steps)
    : factorization_(BltFactorization::square_root(horizon)), direction_(horizon, 0.0) {
  const std::vector<double> c = factorization_.c_coefficients(horizon);
  for (Index t : canary_steps)
    for (Index j = t - 1; j < horizon; ++j) direction_[j] += c[j - (t - 1)];
}

double MfScore::operator()(const std::vector<double>& y) const {
  if (direction_.empty()) return 0.0;
  const std::size_t T = std::min(y.size(), direction_.size());
  BltInverseFilter to_c(factorization_, 1);
  Vec in(1);
  double dot = 0, norm2 = 0;
  for (std::size_t j = 0; j < T; ++j) {
    in[0] = y[j];
    dot += direction_[j] * to_c.next(in)[0];
    norm2 += direction_[j] * direction_[j];
  }
  return norm2 > 0 ? dot / std::sqrt(norm2) : 0.0;
}

Index resolved_steps(const AuditOptions& a) {
  if (a.steps > 0) return a.steps;
  if (a.canary == Canary::kQuadraticO2) return 2;
  if (a.epochs > 0) return 10;
  return 1;
}

bool poisson_path(const AuditOptions& a) {
  return a.epochs > 0 && (algorithm_info(a.algorithm).mechanism != MechanismKind::kMatrixFactorization ||
                          sampling_or_default(a.sampling, a.epochs) == Sampling::kPoisson);
}

Index resolved_canaries(const AuditOptions& a) {
  if (a.canaries > 0) return a.canaries;
  if (!poisson_path(a)) return 1;
  // Poisson passes: the canaries must all be in group 0 (n / bands records).
  const bool passes = algorithm_info(a.algorithm).mechanism == MechanismKind::kMatrixFactorization;
  if (passes && a.bands) return std::max<Index>(1, std::min<Index>(64, a.batch * resolved_steps(a) / *a.bands));
  return 64;
}

// The linear canary's configuration, from the algorithm's row: one O1 per
// step on its own batch (or phases of one O1 and q - 1 O2 steps where the
// algorithm reads a period), every node's sensitivity 2G/b.
void configure_linear(const AuditOptions& a, RunOptions& o, double G) {
  dpsosp::detail::algorithm_row(a.algorithm).audit.linear(o, a.batch, G, a.phase_length);
}

Setup::Setup(const AuditOptions& options) : a(options) {
  a.Validate();
  a.steps = resolved_steps(options);
  a.canaries = resolved_canaries(options);
  a.dim = std::max(a.dim, a.canaries);
  const AlgorithmInfo& info = algorithm_info(a.algorithm);
  const dpsosp::detail::AuditHooks& hooks = dpsosp::detail::algorithm_row(a.algorithm).audit;
  tree = info.mechanism == MechanismKind::kTree;
  mf = info.mechanism == MechanismKind::kMatrixFactorization;
  poisson = a.epochs > 0 && !mf;
  banded = mf && a.epochs > 0 && sampling_or_default(a.sampling, a.epochs) == Sampling::kPoisson;
  if (banded) mf = false;
  const Index d = a.dim, b = a.batch;
  const double G = a.G, c = a.canary_norm;
  const bool quadratic = a.canary == Canary::kQuadraticO2;
  if (!quadratic) {
    model = std::make_unique<LinearCanaryModel>(d, a.canary == Canary::kExtreme ? std::ldexp(1.0, 1000) : 1.0,
                                                a.tampering == Tampering::kExtremeFails);
  }
  honest.algorithm = a.algorithm;
  honest.privacy = a.privacy;
  honest.constants = {G, M, 1.0, 1.0};
  honest.seed = 0;
  honest.noise_key = run_key(a.seed, a.algorithm, 0, ~Index{0});
  honest.threads = 1;
  honest.record_trajectory = true;
  // quadratic-o2: the factor by which unclipped-o2 raises M (just above the canary's c).
  const dpsosp::detail::QuadraticAudit quadratic_audit{b, d, G, M, 1.01 * c, a.privacy};
  dpsosp::detail::QuadraticAuditSetup quadratic_setup;
  if (poisson) {
    // Poisson sampling reads no order: the canary is any row.
    n = b * a.steps;
    honest.batch_size = b;
    honest.epochs = a.epochs;
  } else if (banded) {
    // Cyclic Poisson sampling: the canary first in the sample order, so in
    // group 0, sampled (or not) at the steps 1, 1 + bands, 1 + 2 bands, ...
    n = b * a.steps;
    configure_linear(a, honest, G);
    honest.epochs = a.epochs;
    honest.sampling = Sampling::kPoisson;
    honest.bands = a.bands;
    canary_position = 0;
  } else if (!quadratic) {
    // The canary sits in the row the run draws first, i.e. in the first O1
    // batch: the sample order is a function of (n, seed) alone, independent
    // of the noise, and the privacy analysis holds for every order.
    const Index q = a.phase_length;
    const Index phases = (a.steps + q - 1) / q;
    n = phases * (b + 2 * b * (q - 1));
    honest.max_steps = a.steps;
    configure_linear(a, honest, G);
    if (mf && a.epochs > 0) {
      // Passes over the same order: the canary is in the first batch of each.
      honest.epochs = a.epochs;
      honest.sampling = Sampling::kOrder;
      honest.max_steps = a.steps * static_cast<Index>(a.epochs);
    }
    for (Index e = 0; e < std::max<Index>(1, static_cast<Index>(a.epochs)); ++e)
      canary_steps.push_back(1 + e * a.steps);
  } else {
    // Step 1 is an O1 at x0 = 0, where every record's gradient is the drift
    // w = G e1 (unclipped, the same in D and D'); step 2 is an O2 whose batch
    // starts at the canary (position b of the order).
    canary_position = b;
    honest.max_steps = 2;
    if (info.knobs & kKnobMaxPhaseLength) honest.max_phase_length = 2;
    if (info.overrides & kSetB) honest.overrides.b = b;
    quadratic_setup = hooks.quadratic(honest, quadratic_audit);
    n = quadratic_setup.n;
    max_step = quadratic_setup.max_step;
    model = std::make_unique<QuadraticCanaryModel>(d, G, quadratic_setup.centre, quadratic_setup.curvature);
    canary_steps = {2};
  }
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(d));
  reference = train(records(false, 0, true), x0, honest);
  // The noise knob of every private algorithm: its z (the tree's node sigma is z s).
  const double honest_z = reference.privacy.noise_multiplier;
  if (mf) mf_score = MfScore(reference.privacy.horizon, canary_steps);

  audited = honest;
  // Poisson dpsgd calibrates its noise multiplier by a search over the RDP
  // accountant (tens of milliseconds a run); every run would find the same
  // number, so the runs take the reference's.
  if (poisson || banded) audited.overrides.noise_multiplier = honest_z;
  // The bands the claim chose (the rule reads the noise, which the tamperings change).
  if (banded) audited.bands = static_cast<Index>(reference.params.at("bands"));
  if (banded && a.canaries > n / *audited.bands)
    throw Error("AuditOptions: canaries must all fit in the first group of the sample order (n / bands = " +
                std::to_string(n / *audited.bands) + " records), got " + std::to_string(a.canaries));
  // The claim's shape. GDP paths: mu (secure noise: the Gaussian mu at its
  // zCDP rho). Poisson paths: the PLD of the run's (q, z, compositions).
  claim_epsilon = reference.privacy.epsilon;
  if (poisson || banded) {
    claim_z = honest_z;
    claim_q = banded ? reference.privacy.sampling_rate : static_cast<double>(b) / static_cast<double>(n);
    claim_steps = banded ? reference.privacy.cycles : static_cast<std::uint64_t>(reference.steps);
  } else {
    claim_mu = reference.privacy.mu > 0         ? reference.privacy.mu
               : reference.privacy.zcdp_rho > 0 ? std::sqrt(2 * reference.privacy.zcdp_rho)
                                                : 0.0;
  }
  tamper(quadratic_audit, quadratic_setup);
  if (poisson || banded) measure_signal();

  names = {"trajectory"};
  if (quadratic && (tree || mf)) names.emplace_back("trajectory-lr");
  names.emplace_back("x");
  if (a.tampering == Tampering::kPublishedKey) names.emplace_back("replay");
  for (const char* field : {"steps", "o1_calls", "perturbations", "samples_used", "gradient_evaluations", "phases",
                            "termination", "epsilon"})
    names.emplace_back(field);
}

void Setup::tamper(const dpsosp::detail::QuadraticAudit& quadratic_audit,
                   const dpsosp::detail::QuadraticAuditSetup& quadratic_setup) {
  const double honest_z = reference.privacy.noise_multiplier, G = a.G;
  // Clip raised to G_off, the noise left at the level the honest clip G calls
  // for (every release's sensitivity scales with G, so z G / G_off).
  const auto raise_clip = [&](double G_off) {
    audited.constants.G = G_off;
    if (!poisson) configure_linear(a, audited, G_off);
    audited.overrides.noise_multiplier = honest_z * G / G_off;
  };
  const auto noise_times = [&](double factor) {
    audited.overrides.noise_multiplier = honest_z * factor;
    audited.overrides.sigma.reset();
  };
  switch (a.tampering) {
    case Tampering::kNone:
    case Tampering::kPublishedKey:  // the mechanism is honest; its key is not secret
    case Tampering::kExtremeFails:  // the model gives up on an overflow
      break;
    case Tampering::kNoiseDividedBy10: noise_times(0.1); break;
    case Tampering::kClippingOff: raise_clip(a.canary_norm * G * 1.01); break;
    case Tampering::kUnclippedO2:
      dpsosp::detail::algorithm_row(a.algorithm)
          .audit.unclipped_o2(audited, quadratic_audit, quadratic_setup, reference.privacy.sigma);
      break;
    case Tampering::kSensitivityHalved: raise_clip(2 * G); break;
    case Tampering::kNoiseHalved: noise_times(0.5); break;
    // sigma = z s column_norm: half the column norm is half the noise.
    case Tampering::kColumnNormHalved: noise_times(0.5); break;
    // The node noise of depth 1, sigma / sqrt(depth): the composition over
    // the depth forgotten.
    case Tampering::kDepthUnderstated:
      if (reference.privacy.depth < 2)
        throw Error("AuditOptions: tampering depth-understated needs a tree of depth >= 2, got depth " +
                    std::to_string(reference.privacy.depth) + " (spider-tree-periodic with phase_length >= 2)");
      noise_times(1 / std::sqrt(static_cast<double>(reference.privacy.depth)));
      break;
    case Tampering::kRateHalved:
      // The noise calibrated, and the claim computed, for half the true rate.
      claim_q /= 2;
      claim_z = privacy::calibrate_dpsgd_noise_pld(claim_q, claim_steps, a.privacy.epsilon, a.privacy.delta);
      claim_epsilon = privacy::dpsgd_pld_epsilon(claim_q, claim_z, claim_steps, a.privacy.delta);
      audited.overrides.noise_multiplier = claim_z;
      break;
  }
}

// The canary's shift per participation in the units of opportunities(), from
// the honest configuration on D and D' under the same randomness (the same
// samples and noise): every opportunity differs by 0 or by the shift.
void Setup::measure_signal() {
  RunOptions config = honest;
  config.overrides.noise_multiplier = reference.privacy.noise_multiplier;
  if (banded) config.bands = audited.bands;
  for (Index probe = 0; probe < 64 && !(signal > 0); ++probe) {
    const RunRandomness r = run_randomness(a, 1, ~Index{0} - 1 - probe);
    const Summary without = run_with(config, false, r), with = run_with(config, true, r);
    for (Index j = 0; j < a.canaries; ++j) {
      const std::vector<double> v0 = opportunities(without, j), v1 = opportunities(with, j);
      for (std::size_t k = 0; k < v0.size(); ++k) signal = std::max(signal, v1[k] - v0[k]);
    }
  }
  if (!(signal > 0)) throw Error("audit: the canary was never sampled in 64 probe runs (raise the sampling rate)");
}

Summary Setup::train(RowMatrix z, const Vec& x0, const RunOptions& config) const {
  if (!a.caller) return minimize(*model, Dataset(std::move(z), Vec()), x0, config);
  const Index rows = static_cast<Index>(z.rows());
  CallerGradients g = a.caller(z);
  if (g.dim != a.dim)
    throw Error("AuditOptions: caller: its model has " + std::to_string(g.dim) +
                " parameters, expected dim = " + std::to_string(a.dim));
  const std::unique_ptr<Model> caller_model = make_caller_model(std::move(g));
  return minimize(*caller_model, caller_records(rows), x0, config);
}

RowMatrix Setup::records(bool with_canary, std::uint64_t seed, bool null) const {
  const Index d = a.dim;
  RowMatrix z = RowMatrix::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  if (!null) {
    const double c = a.canary_norm, G = a.G;
    double value = 0;
    switch (a.canary) {
      case Canary::kLinear: value = with_canary ? c * G : (poisson || banded ? 0.0 : -c * G); break;
      case Canary::kQuadraticO2: value = (with_canary ? c : -c) * M; break;
      // Stored divided by the model's 2^1000: c G exactly, or 2^1030 = inf.
      case Canary::kExtreme: value = with_canary ? std::ldexp(c * G, -1000) : std::ldexp(1.0, 30); break;
    }
    // Canary j in coordinate j of its own row: any rows under Poisson
    // sampling, else the positions from canary_position in the sample order.
    const Index m = a.canaries;
    const IndexList order = poisson ? IndexList() : SamplePool(n, seed).draw(canary_position + m);
    for (Index j = 0; j < m; ++j) {
      const Index row = poisson ? j : order[static_cast<std::size_t>(canary_position + j)];
      z(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(j)) = value;
    }
  }
  return z;
}

Summary Setup::run_with(const RunOptions& config, bool with_canary, const RunRandomness& r) const {
  RunOptions o = config;
  o.seed = r.seed;
  o.noise_key = r.key;
  return train(records(with_canary, r.seed), Vec::Zero(static_cast<Eigen::Index>(a.dim)), o);
}

// The attacker's scores of one report (docs/privacy.md), in the order of
// `names`; "replay" is left 0 here (run_audit fills it).
std::vector<double> Setup::scores(const Summary& s) const {
  const std::vector<Vec>& tr = s.trajectory;
  const Index T = tr.empty() ? 0 : static_cast<Index>(tr.size()) - 1;
  // r(t) = x_{t-1} - x_t along e1: the release of step t times the step size.
  auto r = [&](Index t) { return tr[static_cast<std::size_t>(t - 1)][0] - tr[static_cast<std::size_t>(t)][0]; };
  double trajectory = 0, lr = 0;
  if (poisson || banded) {
    // The canary is in a secret subset of its opportunities: the largest.
    const std::vector<double> v = opportunities(s, 0);
    if (!v.empty()) trajectory = *std::max_element(v.begin(), v.end());
  } else if (mf) {
    // The releases rel_t = r(t) / eta, less what the attacker knows (the
    // other records are public), turned back into C's domain: there they are
    // the canary's shift along C's columns at its steps plus white noise
    // (MfScore). linear: every step an O1 of zero records but the canary's,
    // so the known part of increment t is -rel_{t-1} and what is left is
    // rel itself. quadratic-o2: increment 1 is the drift G (public) and 2 is
    // O2's difference, the canary's alone: rel_1 - G and rel_2 - rel_1.
    const auto eta = s.params.find("eta");
    const double step_size = eta == s.params.end() ? 1.0 : eta->second;
    std::vector<double> y(static_cast<std::size_t>(T));
    for (Index t = 1; t <= T; ++t) y[static_cast<std::size_t>(t - 1)] = r(t) / step_size;
    if (a.canary == Canary::kQuadraticO2) {
      if (T >= 2) {
        const double step = (tr[1] - tr[0]).norm();
        const double sign = tr[1][0] > tr[0][0] ? 1.0 : (tr[1][0] < tr[0][0] ? -1.0 : 0.0);
        const double rel1 = y[0];
        y.resize(2);
        y[0] = rel1 - a.G;
        y[1] -= rel1;
        trajectory = sign * mf_score(y);
        const double bt = static_cast<double>(s.samples_used > a.batch ? s.samples_used - a.batch : 1);
        lr = trajectory * M * std::min(step, max_step) / bt;
      }
    } else {
      trajectory = mf_score(y);
    }
  } else if (a.canary == Canary::kQuadraticO2) {
    if (T >= 2) {
      const double step = (tr[1] - tr[0]).norm();
      const double sign = tr[1][0] > tr[0][0] ? 1.0 : (tr[1][0] < tr[0][0] ? -1.0 : 0.0);
      if (tree) {
        // released_2 = O1 (= the drift G e1) + Delta + a node noise of its
        // own; Delta's canary term is sign * M |dx| / b_t (clipped). The
        // likelihood ratio weights each run by that shift, with b_t =
        // samples_used - b.
        const auto eta = s.params.find("eta");
        trajectory = sign * (r(2) - (eta == s.params.end() ? 0.0 : eta->second) * a.G);
        const double bt = static_cast<double>(s.samples_used > a.batch ? s.samples_used - a.batch : 1);
        lr = trajectory * M * std::min(step, max_step) / bt;
      } else if (step > 0) {
        // Gaussian noise per release, scaled to M |dx|: released_2 - released_1
        // = Delta + fresh noise, standardised by |dx|.
        trajectory = sign * (r(2) - r(1)) / step;
      }
    }
  } else if (tree) {
    // The canary's O1 lies in the tree nodes [1, t] for t = 1, 2, 4, ... of the
    // first phase; each is released alone as the prefix sum at t.
    const Index first = s.phase_lengths.empty() ? T : std::min<Index>(T, s.phase_lengths[0]);
    for (Index t = 1; t <= first; t *= 2) trajectory += r(t);
  } else if (T > 0) {
    trajectory = r(1);
  }
  std::vector<double> v;
  v.reserve(names.size());
  v.push_back(trajectory);
  if (a.canary == Canary::kQuadraticO2 && (tree || mf)) v.push_back(lr);
  v.push_back(-s.x[0]);
  if (a.tampering == Tampering::kPublishedKey) v.push_back(0.0);
  v.push_back(static_cast<double>(s.steps));
  v.push_back(static_cast<double>(s.o1_calls));
  v.push_back(static_cast<double>(s.perturbations));
  v.push_back(static_cast<double>(s.samples_used));
  v.push_back(s.gradient_evaluations ? static_cast<double>(*s.gradient_evaluations) : -1.0);
  v.push_back(static_cast<double>(s.phase_lengths.size()));
  v.push_back(static_cast<double>(s.termination));
  v.push_back(s.privacy.epsilon);
  return v;
}

}  // namespace dpsosp::audit::detail
