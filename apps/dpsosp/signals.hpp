// `dpsosp run` on SIGINT and SIGTERM: the first signal stops the run after
// the current step and the report so far is written; a second one ends the
// process at once (signals.cpp says how, async-signal-safely).
#pragma once
#include <atomic>
#include <csignal>

namespace dpsosp::cli {

/// Set by the first SIGINT or SIGTERM while a StopOnSignal lives (RunOptions::stop_flag).
const std::atomic<bool>& stop_flag();
/// The signal that set it (0: none).
int stop_signal();

/// Installs the handler for SIGINT and SIGTERM for its lifetime.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace dpsosp::cli
