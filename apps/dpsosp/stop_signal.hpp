// `dpsosp run`'s handling of SIGINT and SIGTERM: the first one asks the run to
// stop after its step (the report so far is written, exit 128 + the signal);
// a second one ends the process at once.
#pragma once
#include <atomic>
#include <memory>

namespace dpsosp::cli {

/// Installs the handler for SIGINT and SIGTERM for its lifetime.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

/// The flag the handler sets (RunOptions::stop_flag).
const std::atomic<bool>& stop_flag();
bool stop_requested_by_signal();
/// The signal that asked the run to stop (SIGINT if none did).
int stop_signal_number();

}  // namespace dpsosp::cli
