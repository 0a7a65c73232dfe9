// Progress lines (progress.hpp).
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace dpsosp::cli {
namespace {

std::string seconds_text(double s) {
  char text[32];
  if (s < 60)
    std::snprintf(text, sizeof text, "%.0f s", std::ceil(s));
  else if (s < 3600)
    std::snprintf(text, sizeof text, "%.0f min %02.0f s", std::floor(s / 60), std::fmod(s, 60));
  else
    std::snprintf(text, sizeof text, "%.1f h", s / 3600);
  return text;
}

}  // namespace

Progress::Progress(bool quiet, Index records, std::optional<Index> total_steps, bool records_known)
    : quiet_(quiet),
      terminal_(::isatty(STDERR_FILENO) == 1),
      records_(records),
      total_steps_(total_steps),
      records_known_(records_known),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::show(const std::string& line, bool force) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  // A terminal line is redrawn 10 times a second; a log gets a line a second, after the first second.
  if (!force && (terminal_ ? since < 0.1 : (since < 1.0 || elapsed < 1.0))) return;
  last_ = now;
  if (terminal_) {
    std::fprintf(stderr, "\r\033[Kdpsosp: %s", line.c_str());
    line_open_ = true;
  } else {
    std::fprintf(stderr, "dpsosp: %s\n", line.c_str());
  }
  std::fflush(stderr);
}

void Progress::step(const Iteration& it) {
  records_used_ += it.batch;
  if (quiet_ || it.step == 0) return;
  // The fraction done: of the known steps, else of the records (a single pass
  // ends when they run out).
  // The run's own plan, where it has one (fixed before it, public).
  std::optional<Index> total = total_steps_;
  if (it.planned_steps > 0) total = std::min(total.value_or(it.planned_steps), it.planned_steps);
  double done = 0;
  if (total && *total > 0) done = static_cast<double>(it.step) / static_cast<double>(*total);
  if (records_known_ && records_ > 0)
    done = std::max(done, static_cast<double>(records_used_) / static_cast<double>(records_));
  done = std::min(done, 1.0);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char text[200];
  std::string line = "step " + std::to_string(it.step);
  if (total) line += "/" + std::to_string(*total);
  std::snprintf(text, sizeof text, " (%.0f%%)", 100 * done);
  line += text;
  if (records_known_) line += " \u00b7 records " + std::to_string(records_used_) + "/" + std::to_string(records_);
  line += " \u00b7 " + seconds_text(elapsed);
  if (done > 0.01) line += " \u00b7 ETA " + seconds_text(elapsed * (1 - done) / done);
  show(line);
}

void Progress::certificate(const EigenProgress& p) {
  if (quiet_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char text[200];
  std::snprintf(text, sizeof text,
                "certificate: lambda_min %.4g, Lanczos cycle %zu, %zu Hessian products, residual %.2g (target %.2g) "
                "\u00b7 %s",
                p.value, static_cast<std::size_t>(p.cycle), static_cast<std::size_t>(p.products), p.residual, p.target,
                seconds_text(elapsed).c_str());
  show(text);
}

std::string guarantee_short(const PrivacyRecord& p) {
  if (!p.is_private()) return "non-private";
  // The relation is named: the same epsilon under zero-out is a weaker
  // guarantee than under replace-one (a zero-out run gives its replace-one figure).
  char text[128];
  if (p.adjacency == Adjacency::kZeroOut && std::isfinite(p.epsilon_replace_one))
    std::snprintf(text, sizeof text, "(%.4g, %.3g)-DP zero-out (replace-one: epsilon %.4g)", p.epsilon, p.delta,
                  p.epsilon_replace_one);
  else
    std::snprintf(text, sizeof text, "(%.4g, %.3g)-DP %s", p.epsilon, p.delta, adjacency_name(p.adjacency).c_str());
  return text;
}

std::string run_summary_line(const Summary& s, const std::string& eval_figure, double seconds,
                             const std::string& report) {
  std::string line = "done: " + s.algorithm + ", " + guarantee_short(s.privacy) + ", " + std::to_string(s.steps) +
                     (s.steps == 1 ? " step" : " steps");
  if (!eval_figure.empty()) line += ", " + eval_figure;
  // The public noise rule's warning (scaling.hpp), repeated where the eye lands last.
  for (const std::string& w : s.warnings)
    if (w.rfind(kNoiseSwampsWords, 0) == 0) {
      line += ", noise likely swamps the signal (warning above)";
      break;
    }
  // The run's time to a tenth under 10 s (a second's ceiling reads a 1.04 s pass as 2 s).
  char tenths[32];
  std::snprintf(tenths, sizeof tenths, "%.1f s", seconds);
  line += ", " + (seconds < 9.95 ? std::string(tenths) : seconds_text(seconds)) + ", report " +
          (report.empty() || report == "-" ? "on stdout" : "in " + report);
  return line;
}

std::string clipping_note(const Summary& s, bool public_constants) {
  const Diagnostics& d = s.diagnostics;
  const Index checked = d.checked_o1 + d.checked_o2;
  const Index clipped = d.clipped_o1 + d.clipped_o2;
  // A G estimated privately (the default) is the median of the norms, or a
  // quarter of it for a classifier, and the public G of a scaled run on few
  // records is a quarter to a sixth of the box's cap: they clip half or more by design.
  if ((s.estimate && s.estimate->G) || public_constants) return "";
  if (checked == 0 || 2 * clipped <= checked) return "";
  char text[320];
  std::snprintf(text, sizeof text,
                "clipping changed %.0f%% of the per-example gradients (G = %.4g; a diagnostic of your data, not "
                "covered by the guarantee): the updates lose their size; features on a smaller scale or a larger "
                "--G may help",
                100.0 * static_cast<double>(clipped) / static_cast<double>(checked), s.constants.G);
  return text;
}

std::string delta_note(double delta, Index n) {
  if (n == 0 || !(delta > 0.1 / static_cast<double>(n))) return "";
  char text[240];
  std::snprintf(text, sizeof text,
                "--delta %.3g is above 1/(10 n) = %.3g for the %zu records: delta should be well below 1/n, the "
                "chance that the guarantee fails for some record",
                delta, 0.1 / static_cast<double>(n), static_cast<std::size_t>(n));
  return text;
}

void Progress::finish() {
  if (line_open_) std::fputc('\n', stderr);
  line_open_ = false;
}

}  // namespace dpsosp::cli
