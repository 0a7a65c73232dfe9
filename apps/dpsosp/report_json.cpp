// The JSON of a run's report (cli.hpp): the release, which the privacy
// guarantee covers, and apart from it the diagnostics (SPEC section 8).
#include <cmath>
#include <cstdio>
#include <vector>

#include "cli.hpp"

namespace dpsosp::cli {

nlohmann::json number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json certificate_json(const Certificate& c) {
  return {{"grad_norm", number(c.grad_norm)},
          {"lambda_min", number(c.lambda_min)},
          {"sosp_gap", number(c.sosp_gap)},
          {"lambda_residual", number(c.lambda_residual)},
          {"lambda_converged", c.lambda_converged}};
}

nlohmann::json shape_json(const Model& model) {
  const ModelOptions o = model.options();  // the defaults where the model reads none
  return {{"features", model.features()},
          {"classes", o.classes},
          {"hidden", o.hidden},
          {"rank", o.rank},
          {"fit_intercept", o.fit_intercept}};
}

nlohmann::json release_json(const Summary& s) {
  nlohmann::json j;
  const PrivacyRecord& p = s.privacy;
  const bool is_private = p.is_private();
  j["x"] = std::vector<double>(s.x.data(), s.x.data() + s.x.size());
  j["algo"] = s.algorithm;
  j["private"] = is_private;
  if (is_private) j["guarantee"] = guarantee_text(p);
  j["epsilon"] = number(p.epsilon);
  j["delta"] = p.delta;
  j["mu"] = number(p.mu);
  j["sigma"] = p.sigma;
  j["sensitivity"] = p.sensitivity;
  j["noise_multiplier"] = p.noise_multiplier;
  j["epsilon_rdp"] = number(p.epsilon_rdp);
  const bool poisson = p.mechanism == MechanismKind::kPoissonGaussian || p.mechanism == MechanismKind::kBandedPoisson;
  if (poisson) j["epsilon_pld"] = number(p.epsilon_pld);
  j["zcdp_rho"] = number(p.zcdp_rho);
  j["depth"] = p.depth;
  if (p.mechanism == MechanismKind::kMatrixFactorization) {
    j["horizon"] = p.horizon;
    j["column_norm"] = p.column_norm;
    j["buffers"] = p.buffers;
  }
  if (p.mechanism == MechanismKind::kBandedPoisson) {
    j["horizon"] = p.horizon;
    j["column_norm"] = p.column_norm;
    j["bands"] = p.bands;
    j["sampling_rate"] = p.sampling_rate;
    j["cycles"] = p.cycles;
  }
  j["mechanism"] = mechanism_name(p.mechanism);
  if (is_private) {
    j["noise"] = noise_mode_name(p.noise);
    j["grid"] = p.grid;
  }
  j["accounting"] = p.accounting();
  j["adjacency"] = adjacency_name(p.adjacency);
  if (is_private) {  // both relations, so that runs compare like with like
    j["epsilon_replace_one"] = number(p.epsilon_replace_one);
    j["epsilon_zero_out"] = number(p.epsilon_zero_out);
  }
  j["seed"] = s.seed;
  j["noise_key"] = s.noise_key_source;
  j["samples_used"] = s.samples_used;
  if (s.gradient_evaluations) {
    j["gradient_evaluations"] = *s.gradient_evaluations;
  } else {
    j["gradient_evaluations"] = nullptr;  // not public (Poisson sampling): in diagnostics
  }
  j["steps"] = s.steps;
  j["o1_calls"] = s.o1_calls;
  j["perturbations"] = s.perturbations;
  j["phase_lengths"] = s.phase_lengths;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : s.params) params[k] = number(v);
  j["params"] = params;
  j["termination"] = termination_name(s.termination);
  if (s.estimate) {
    const ConstantsEstimate& e = *s.estimate;
    j["estimate"] = {{"records", e.records}, {"rounds", e.rounds}, {"count_noise", e.count_noise}};
    if (e.G) j["estimate"]["G"] = *e.G;
    if (e.M) j["estimate"]["M"] = *e.M;
  }
  j["interrupted"] = s.interrupted();
  j["warnings"] = s.warnings;
  if (!s.trajectory.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& v : s.trajectory) t.push_back(std::vector<double>(v.data(), v.data() + v.size()));
    j["trajectory"] = t;
  }
  if (is_private) j["caveats"] = privacy_caveats(p);
  return j;
}

nlohmann::json diagnostics_json(const Summary& s) {
  const Diagnostics& d = s.diagnostics;
  nlohmann::json j;
  j["note"] = kDiagnosticsNote;
  j["clipped"] = {{"o1", d.clipped_o1}, {"o2", d.clipped_o2}, {"total", d.clipped_o1 + d.clipped_o2}};
  // The fraction of the per-example vectors that clipping changed (heavy
  // clipping: a larger G, or features on a smaller scale, may help).
  const Index checked = d.checked_o1 + d.checked_o2;
  j["clipped"]["fraction"] =
      checked > 0 ? nlohmann::json(static_cast<double>(d.clipped_o1 + d.clipped_o2) / static_cast<double>(checked))
                  : nlohmann::json(nullptr);
  j["nonfinite"] = {{"o1", d.nonfinite_o1}, {"o2", d.nonfinite_o2}, {"total", d.nonfinite_o1 + d.nonfinite_o2}};
  j["gradient_evaluations"] = d.gradient_evaluations;
  j["seconds"] = d.seconds;
  return j;
}

}  // namespace dpsosp::cli
