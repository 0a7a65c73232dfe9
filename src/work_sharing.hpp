// Internal: sharing the items of one batch between the calling thread and a
// few helper threads, without ever waiting for a helper that is not running.
//
// On a busy machine an OpenMP team's closing barrier can make a batch wait a
// scheduler time slice (256-row batches measured 5 to 25 times slower with two
// threads than one on a loaded 2-core box), so ThreadChoice below keeps a batch
// serial when sharing does not pay. Results never depend on the thread count.
#pragma once
#include <functional>

#include "dpsosp/types.hpp"

namespace dpsosp::detail {

/// Calls body(begin, end) on disjoint ranges covering [0, items), each at most
/// `grain` items long, on the calling thread and up to threads - 1 helpers.
/// Returns when every range is done; rethrows the first exception a range threw
/// (the other ranges still run). Which thread runs which range is unspecified,
/// so body must give the same result whoever runs it. Nested calls (from inside
/// a body) run serially.
void share_work(Index items, Index grain, int threads, const std::function<void(Index, Index)>& body);

/// The number of threads a batch may use: the OpenMP setting, which
/// RunOptions::threads controls (1 inside a body of share_work).
int available_threads();

/// Whether sharing a batch pays, learnt from the batches themselves. Helpers
/// only pay when there is a free core for them; on a busy machine a batch can
/// run slower shared than alone. Results never depend on the choice (callers
/// give the same bits for any thread count), so it is free to follow timing:
/// it keeps a running cost per unit of work of both ways, shares when that is
/// clearly (15 %) cheaper, and now and then tries the other way to keep its
/// figure current: after 32 batches (times how much dearer the other way
/// was), then after twice as many each time the choice stands (up to 4096),
/// since a try of the slow way can cost a whole scheduler time slice on a busy
/// machine.
/// The state is per process and per `kind` (a small integer naming the kernel).
class ThreadChoice {
 public:
  /// Threads for a batch of `work` units given at most `max_threads`.
  ThreadChoice(int kind, int max_threads, double work);
  int threads() const { return threads_; }
  /// Records the batch's wall time.
  ~ThreadChoice();
  /// Tests and benchmarks: 0 = choose by timing (the default), 1 = always one
  /// thread, 2 = always share (when max_threads > 1).
  static void force(int mode);
  ThreadChoice(const ThreadChoice&) = delete;
  ThreadChoice& operator=(const ThreadChoice&) = delete;

 private:
  int kind_;
  int threads_;
  double work_;
  double start_;
};

}  // namespace dpsosp::detail
