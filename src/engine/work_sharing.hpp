// Internal: how many threads a batch of the per-example engine
// (clipped_sum.hpp) may use, and whether sharing it pays.
//
// On a busy machine an OpenMP team's closing barrier can make a batch wait a
// scheduler time slice (256-row batches measured 5 to 25 times slower with two
// threads than one on a loaded 2-core box), so ThreadChoice below keeps a batch
// serial when sharing does not pay. Results never depend on the thread count.
#pragma once
#include "dpsosp/types.hpp"

namespace dpsosp::detail {

/// The number of threads a batch may use: the OpenMP setting, which
/// RunOptions::threads controls (1 inside a parallel region).
int available_threads();

/// Whether sharing a batch pays, learnt from the batches themselves. Helpers
/// only pay when there is a free core for them; on a busy machine a batch can
/// run slower shared than alone. Results never depend on the choice (callers
/// give the same bits for any thread count), so it is free to follow timing:
/// its figure for each way is the median cost per unit of work of the last
/// (up to) 5 batches run that way (a shared batch right after one run alone,
/// whose threads may have to start or wake up, is not counted). It first
/// runs four batches shared and untimed (the first batches of a process pay
/// for cold memory), then shared ones up to three figures and alone ones up
/// to three; from then on it starts sharing when that is clearly (15 %)
/// cheaper and stops when running alone is cheaper outright, and now and then
/// tries the other way for 5 batches (ending the try at a batch that costs
/// twice the other way's figure) to keep its figure current: after 32
/// batches times how much dearer the other way was, or, if more, after as
/// many batches as keep the tries' extra cost under 2 % of the time; then, if
/// the other way lost by more than half again, after twice as many each time
/// the choice stands (up to 4096), since a try of the slow way can cost a
/// whole scheduler time slice on a busy machine; a narrow loss is retried as
/// soon as that 2 % allows.
/// The state is per process, per `kind` (a small integer naming the kernel)
/// and per size class of the batch (work in powers of two): sharing pays on
/// large batches sooner than on small ones, whose fixed costs weigh more.
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
  int bucket_;
  int threads_;
  double work_;
  double start_;
  bool chosen_ = false;
};

}  // namespace dpsosp::detail
