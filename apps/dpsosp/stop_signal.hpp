// `dpsosp run` on SIGINT/SIGTERM: the first signal asks the run to stop after
// its step (the report so far is written, exit status 128 + the signal), a
// second one ends the process at once.
#pragma once
#include <signal.h>

#include <atomic>

namespace dpsosp::cli {

/// The flag the run polls (RunOptions::stop_flag), set by the first signal.
std::atomic<bool>& stop_flag();
/// The signal that set it (SIGINT when none did).
int stop_signal();

/// Installs the handler for SIGINT and SIGTERM for its lifetime; `announce`:
/// say so on stderr (one rank of an MPI job does).
class StopOnSignal {
 public:
  explicit StopOnSignal(bool announce = true);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace dpsosp::cli
