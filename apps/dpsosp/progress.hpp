// Progress on stderr: on a terminal one updating line, otherwise a plain line
// now and then (runs longer than a second, SPEC section 7); nothing with --quiet.
// Everything shown is a function of what the run releases (steps, the batch
// sizes the released iterates chose) and of public sizes: no private figure.
#pragma once
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "dpsosp/dpsosp.hpp"

namespace dpsosp::cli {

class Progress {
 public:
  /// `records`: n; `total_steps`: the run's known length (max_steps, Poisson's
  /// planned steps), if any; `records_known`: whether the batch sizes are public
  /// (not under Poisson sampling, whose batches are secret).
  Progress(bool quiet, Index records, std::optional<Index> total_steps, bool records_known);
  /// After each step (RunOptions::on_step).
  void step(const Iteration& it);
  /// After each Lanczos cycle of the certificate (EigenOptions::on_cycle).
  void certificate(const EigenProgress& p);
  /// Ends an updating line (before a message or at the end).
  void finish();
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

 private:
  void show(const std::string& line, bool force = false);
  bool quiet_, terminal_;
  Index records_;
  std::optional<Index> total_steps_;
  bool records_known_;
  Index records_used_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool line_open_ = false;
};

/// A guarantee's numbers as people read them: epsilon to 4 significant digits
/// ("(1, 1e-06)-DP"), "non-private" for a run without one.
std::string guarantee_short(const PrivacyRecord& p);

/// The line `dpsosp run` ends with on stderr: algorithm, guarantee, steps,
/// the --eval figure (accuracy for a classifier, else the mean loss; a
/// diagnostic, on the data owner's terminal), time and where the report is.
std::string run_summary_line(const Summary& s, const std::string& eval_figure, double seconds,
                             const std::string& report);

/// A note for the data owner when clipping changed more than half the
/// per-example vectors (a diagnostic: computed from the records); empty otherwise,
/// and where G clips most of them by design: estimated, or public_constants (a
/// quarter of the unit box's cap, docs/parameters.md "Few records").
std::string clipping_note(const Summary& s, bool public_constants = false);

/// A warning when delta is above 1/(10 n) (public: delta and n); empty otherwise.
std::string delta_note(double delta, Index n);

}  // namespace dpsosp::cli
