// dpsosp: a run's report (docs/report.md, docs/report.schema.json), built
// once for both front ends: `dpsosp run` writes it as JSON, dpsosp.run
// returns it as a dict. The release, which the privacy guarantee covers, and
// apart from it the diagnostics, computed from the private data without
// noise (SPEC section 8). JSON has no infinity: a non-finite number is null.
#pragma once
#include <nlohmann/json.hpp>

#include "dpsosp/audit.hpp"
#include "dpsosp/certify.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/options.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {

/// v, or null where it is not finite.
nlohmann::json report_number(double v);
/// Every field of a run that its guarantee covers: the iterate, what is
/// computed from it and from public sizes, the guarantee itself. Never key material.
nlohmann::json release_report(const Summary& s);
/// The run's diagnostics, under a note saying they are not covered by the
/// guarantee and which option (in `front_end`'s words) leaves them out.
nlohmann::json diagnostics_report(const Summary& s, FrontEnd front_end);
/// The options that shape the model (Model::options) and its feature count:
/// with "model" and "x", what rebuilds it.
nlohmann::json shape_report(const Model& model);
nlohmann::json certificate_report(const Certificate& c);
/// An empirical privacy audit's result (audit.hpp, docs/privacy.md) with the
/// options that shaped it: what `dpsosp audit` writes and dpsosp.audit returns.
nlohmann::json audit_report(const audit::AuditOptions& o, const audit::AuditResult& r);
/// The scale of a run (scaling.hpp): the map, the estimate's share and noise, x_user.
nlohmann::json scaling_report(const ScaledSummary& r);
/// The report of a run of `model` on n records as `request` asked it: the
/// release with the model, its shape, n, d, the target, the constants, the
/// processes and the scaling (`scaled`, where the run had one), and the
/// diagnostics unless request.release_only.
nlohmann::json run_report(const ScaledSummary& scaled, const Model& model, Index n, const RunRequest& request,
                          bool scaling);

}  // namespace dpsosp
