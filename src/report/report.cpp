// The report of a run (report.hpp): one builder, two front ends.
#include "dpsosp/report.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "dpsosp/budget.hpp"

namespace dpsosp {

nlohmann::json report_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return v;
}

nlohmann::json audit_report(const audit::AuditOptions& o, const audit::AuditResult& r) {
  nlohmann::json j;
  j["algo"] = r.algorithm;
  j["tampering"] = r.tampering;
  j["canary"] = r.canary;
  j["adjacency"] = r.adjacency;
  j["claimed_epsilon"] = report_number(r.claimed_epsilon);
  j["reported_epsilon"] = report_number(r.reported_epsilon);
  j["delta"] = r.delta;
  j["claimed_mu"] = report_number(r.claimed_mu);
  j["epsilon_lower_bound"] = report_number(r.epsilon_lower_bound);
  j["confidence"] = r.confidence;
  j["violation"] = r.violation;
  j["violation_by"] = r.violation_by;
  j["false_alarm"] = r.false_alarm;
  j["noise"] = noise_mode_name(o.privacy.noise);
  j["empirical_mu"] = report_number(r.empirical_mu);
  j["mu_lower_bound"] = report_number(r.mu_lower_bound);
  if (r.tradeoff) {
    const audit::AuditResult::TradeOff& t = *r.tradeoff;
    j["tradeoff"] = {{"canaries", t.canaries},
                     {"samples", t.samples},
                     {"threshold", report_number(t.threshold)},
                     {"true_positives", t.true_positives},
                     {"false_positives", t.false_positives},
                     {"tpr_lower", t.tpr_lower},
                     {"fpr_upper", t.fpr_upper},
                     {"claimed_tpr_max", t.claimed_tpr_max},
                     {"sampling_rate", t.sampling_rate},
                     {"noise_multiplier", t.noise_multiplier},
                     {"steps", t.steps}};
  }
  const std::string rule = r.reject_high ? "score > threshold" : "score <= threshold";
  j["test"] = {{"score", r.score},
               {"threshold", report_number(r.threshold)},
               {"positive", r.positive_is_canary ? "D' (canary)" : "D"},
               {"if", rule},
               // the key of earlier versions, kept: what the test says, when
               {"canary_if", r.positive_is_canary ? rule : "not (" + rule + ")"},
               {"measure_runs", r.measure_runs},
               {"true_positives", r.true_positives},
               {"false_positives", r.false_positives},
               {"tpr_lower", r.tpr_lower},
               {"fpr_upper", r.fpr_upper}};
  j["scores"] = r.scores;
  j["failures"] = {
      {"without_canary", r.failures_without}, {"with_canary", r.failures_with}, {"first", r.first_failure}};
  j["runs"] = o.runs;
  j["n"] = r.n;
  j["d"] = r.dim;
  j["steps"] = r.steps;
  j["phase_length"] = r.phase_length;
  j["epochs"] = r.epochs;
  if (o.sampling) j["sampling"] = sampling_name(*o.sampling);
  j["model"] = o.caller ? "caller" : "audit";  // the caller's gradients, or the audit's own canary model
  j["seconds"] = r.seconds;
  return j;
}

nlohmann::json certificate_report(const Certificate& c) {
  return {{"grad_norm", report_number(c.grad_norm)},
          {"lambda_min", report_number(c.lambda_min)},
          {"sosp_gap", report_number(c.sosp_gap)},
          {"lambda_residual", report_number(c.lambda_residual)},
          {"lambda_converged", c.lambda_converged}};
}

nlohmann::json shape_report(const Model& model) {
  const ModelOptions o = model.options();  // the defaults where the model reads none
  return {{"features", model.features()},
          {"classes", o.classes},
          {"hidden", o.hidden},
          {"rank", o.rank},
          {"fit_intercept", o.fit_intercept}};
}

namespace {

// A mechanism's own fields of its record (MechanismInfo::fields).
nlohmann::json mechanism_field(const PrivacyRecord& p, const std::string& field) {
  if (field == "epsilon_pld") return report_number(p.epsilon_pld);
  if (field == "horizon") return p.horizon;
  if (field == "column_norm") return p.column_norm;
  if (field == "buffers") return p.buffers;
  if (field == "bands") return p.bands;
  if (field == "sampling_rate") return p.sampling_rate;
  if (field == "cycles") return p.cycles;
  throw Error("the report has no field " + field + " of a mechanism's record");
}

}  // namespace

nlohmann::json release_report(const Summary& s) {
  nlohmann::json j;
  const PrivacyRecord& p = s.privacy;
  const bool is_private = p.is_private();
  j["x"] = std::vector<double>(s.x.data(), s.x.data() + s.x.size());
  j["algo"] = s.algorithm;
  j["private"] = is_private;
  if (is_private) j["guarantee"] = guarantee_text(p);
  j["epsilon"] = report_number(p.epsilon);
  j["delta"] = p.delta;
  j["mu"] = report_number(p.mu > 0 ? p.mu : std::numeric_limits<double>::quiet_NaN());  // null: not GDP
  j["sigma"] = p.sigma;
  j["sensitivity"] = p.sensitivity;
  j["noise_multiplier"] = p.noise_multiplier;
  j["epsilon_rdp"] = report_number(p.epsilon_rdp);
  j["zcdp_rho"] = report_number(p.zcdp_rho);
  j["depth"] = p.depth;
  for (const std::string& field : mechanism_info(p.mechanism).fields) j[field] = mechanism_field(p, field);
  j["mechanism"] = mechanism_name(p.mechanism);
  if (is_private) {
    j["noise"] = noise_mode_name(p.noise);
    j["grid"] = p.grid;
  }
  j["accounting"] = p.accounting();
  j["adjacency"] = adjacency_name(p.adjacency);
  if (is_private) {  // both relations, so that runs compare like with like
    j["epsilon_replace_one"] = report_number(p.epsilon_replace_one);
    j["epsilon_zero_out"] = report_number(p.epsilon_zero_out);
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
  for (const auto& [k, v] : s.params) params[k] = report_number(v);
  j["params"] = params;
  j["termination"] = termination_name(s.termination);
  if (s.estimate) {
    const ConstantsEstimate& e = *s.estimate;
    j["estimate"] = {
        {"records", e.records}, {"rounds", e.rounds}, {"count_noise", e.count_noise}, {"shared", e.shared}};
    if (e.mu > 0) j["estimate"]["mu"] = e.mu;
    if (e.G) j["estimate"]["G"] = *e.G, j["estimate"]["quantile"] = e.g_quantile;
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

nlohmann::json diagnostics_report(const Summary& s, FrontEnd front_end) {
  const Diagnostics& d = s.diagnostics;
  nlohmann::json j;
  j["note"] =
      "computed from the private data without noise: NOT covered by the privacy guarantee; publish only "
      "where the data need no protection (" +
      (front_end == FrontEnd::kCli ? std::string("--release-only") : std::string("release_only=True")) +
      " leaves this out)";
  j["clipped"] = {{"o1", d.clipped_o1}, {"o2", d.clipped_o2}, {"total", d.clipped_o1 + d.clipped_o2}};
  // The fraction of the per-example vectors that clipping changed (heavy
  // clipping: a larger G, or features on a smaller scale, may help).
  const Index checked = d.checked_o1 + d.checked_o2;
  j["clipped"]["fraction"] =
      checked > 0 ? nlohmann::json(static_cast<double>(d.clipped_o1 + d.clipped_o2) / static_cast<double>(checked))
                  : nlohmann::json(nullptr);
  j["nonfinite"] = {{"o1", d.nonfinite_o1}, {"o2", d.nonfinite_o2}, {"total", d.nonfinite_o1 + d.nonfinite_o2}};
  // A scaled run: the share of the records the box clipped, per feature and
  // the target's (a skewed column's cut tail).
  if (!d.outside_box.empty() || d.target_outside_box >= 0)
    j["outside_box"] = {
        {"features", d.outside_box},
        {"target", d.target_outside_box >= 0 ? nlohmann::json(d.target_outside_box) : nlohmann::json(nullptr)}};
  j["gradient_evaluations"] = d.gradient_evaluations;
  j["seconds"] = d.seconds;
  j["accounting_seconds"] = d.accounting_seconds;
  return j;
}

nlohmann::json scaling_report(const ScaledSummary& r) {
  const Scaling& s = r.scaling;
  nlohmann::json j = {{"features", s.feature_source}, {"normalize", s.normalize}};
  if (s.maps_features()) {
    j["lower"] = s.lower;
    j["upper"] = s.upper;
    j["sources"] = s.feature_sources;
  }
  j["public_constants"] = s.public_constants;
  j["target"] = s.has_target ? nlohmann::json{{"lower", s.y_lower}, {"upper", s.y_upper}, {"source", s.target_source}}
                             : nlohmann::json(nullptr);
  if (!s.composition.empty()) {
    j["estimate"] = {{"share", s.share},
                     {"composition", s.composition},
                     {"mu", s.mu},
                     {"rho", s.rho},
                     {"epsilon", s.epsilon},
                     {"delta", s.delta},
                     {"count_noise", s.count_noise},
                     {"target_count_noise", s.target_count_noise},
                     {"columns", s.columns},
                     {"histograms", s.histograms},
                     {"public_range", {-kScaleRangeTop, kScaleRangeTop}}};
  }
  if (r.x_user) j["x_user"] = std::vector<double>(r.x_user->data(), r.x_user->data() + r.x_user->size());
  return j;
}

nlohmann::json run_report(const ScaledSummary& scaled, const Model& model, Index n, const RunRequest& request,
                          bool scaling) {
  const Summary& s = scaled.summary;
  const RunOptions& o = request.options;
  nlohmann::json j = release_report(s);
  j["interrupted"] = s.interrupted();
  j["model"] = model.name();
  j["n"] = n;
  // How the records were read: public, fixed before the run.
  if (!s.sample_order.empty()) j["sample_order"] = s.sample_order;  // "seed" or "file"
  j["processes"] = s.processes;                                     // that shared each batch
  j["d"] = model.dim();
  j["shape"] = shape_report(model);
  j["target"] = {{"epsilon", report_number(o.privacy ? o.privacy->epsilon : std::numeric_limits<double>::infinity())},
                 {"delta", o.privacy ? o.privacy->delta : request.delta}};
  if (scaling) j["scaling"] = scaling_report(scaled);
  // The curve a budget charges (budget.hpp); secure noise's zCDP has none.
  if (s.privacy.is_private() && s.privacy.noise != NoiseMode::kSecure)
    j["curve"] = run_privacy_curve(scaled)->to_json();
  j["constants"] = {{"G", s.constants.G}, {"M", s.constants.M}, {"rho", s.constants.rho}, {"B", s.constants.B}};
  if (!request.release_only) j["diagnostics"] = diagnostics_report(s, request.front_end());
  return j;
}

}  // namespace dpsosp
