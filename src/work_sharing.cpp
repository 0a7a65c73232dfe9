// share_work on an OpenMP team (see work_sharing.hpp). A hand-made helper pool
// was tried first; it hung now and then when a body threw, so the ranges now go
// through a dynamic-schedule OpenMP loop, with exceptions collected per range.
// ThreadChoice keeps batches serial when sharing does not pay.
#include "work_sharing.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>

namespace dpsosp::detail {
namespace {

thread_local bool inside_body = false;

}  // namespace

namespace {

constexpr int kKinds = 8;
constexpr std::uint64_t kMinGap = 32, kMaxGap = 4096;
struct KindState {
  std::atomic<double> cost[2] = {{0.0}, {0.0}};  // seconds per unit: [0] alone, [1] shared
  std::atomic<std::uint64_t> batches{0};
  // The losing way is tried again at batch next_try; the gap doubles each time
  // it loses again (up to kMaxGap), so a way that keeps losing costs little.
  std::atomic<std::uint64_t> next_try{0};
  std::atomic<std::uint64_t> gap{kMinGap};
  std::atomic<int> last_choice{-1};
};
KindState kind_state[kKinds];
std::atomic<int> forced_mode{0};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ThreadChoice::ThreadChoice(int kind, int max_threads, double work)
    : kind_(std::clamp(kind, 0, kKinds - 1)), threads_(1), work_(work), start_(0) {
  if (max_threads <= 1) return;
  const int mode = forced_mode.load(std::memory_order_relaxed);
  if (mode != 0) {
    threads_ = mode == 2 ? max_threads : 1;
    return;
  }
  KindState& s = kind_state[kind_];
  const std::uint64_t n = s.batches.fetch_add(1, std::memory_order_relaxed);
  const double alone = s.cost[0].load(std::memory_order_relaxed);
  const double shared = s.cost[1].load(std::memory_order_relaxed);
  bool share;
  if (shared == 0.0) {
    share = true;  // first measure both ways
  } else if (alone == 0.0) {
    share = false;
  } else {
    share = shared < 0.85 * alone;  // helpers must pay clearly: they also cost the machine a core
    // How much dearer the other way was: a try of a way that cost 30 times as
    // much is worth waiting 30 times as long for.
    const double dearer = share ? alone / shared : shared / alone;
    const auto scaled = static_cast<std::uint64_t>(std::min(static_cast<double>(kMaxGap), kMinGap * dearer));
    const int choice = share ? 1 : 0;
    if (s.last_choice.exchange(choice, std::memory_order_relaxed) != choice) {
      // A change of mind starts the gap between tries of the other way afresh.
      const std::uint64_t gap = std::max(kMinGap, scaled);
      s.gap.store(gap, std::memory_order_relaxed);
      s.next_try.store(n + gap, std::memory_order_relaxed);
    } else if (n >= s.next_try.load(std::memory_order_relaxed)) {
      share = !share;  // keep the other figure current
      const std::uint64_t gap = std::min(kMaxGap, std::max(2 * s.gap.load(std::memory_order_relaxed), scaled));
      s.gap.store(gap, std::memory_order_relaxed);
      s.next_try.store(n + gap, std::memory_order_relaxed);
    }
  }
  threads_ = share ? max_threads : 1;
  start_ = now_seconds();
}

ThreadChoice::~ThreadChoice() {
  if (start_ == 0.0 || !(work_ > 0.0)) return;
  const double cost = (now_seconds() - start_) / work_;
  std::atomic<double>& slot = kind_state[kind_].cost[threads_ > 1 ? 1 : 0];
  const double old = slot.load(std::memory_order_relaxed);
  slot.store(old == 0.0 ? cost : 0.75 * old + 0.25 * cost, std::memory_order_relaxed);
}

void ThreadChoice::force(int mode) { forced_mode.store(mode, std::memory_order_relaxed); }

int available_threads() { return inside_body || omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads()); }

void share_work(Index items, Index grain, int threads, const std::function<void(Index, Index)>& body) {
  if (items == 0) return;
  grain = std::max<Index>(grain, 1);
  const Index ranges = (items + grain - 1) / grain;
  if (threads <= 1 || ranges <= 1 || inside_body || omp_in_parallel()) {
    for (Index begin = 0; begin < items; begin += grain) body(begin, std::min(items, begin + grain));
    return;
  }
  std::mutex error_mutex;
  std::exception_ptr error;
  const auto count = static_cast<long long>(ranges);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (long long r = 0; r < count; ++r) {
    const Index begin = static_cast<Index>(r) * grain;
    const bool was_inside = inside_body;
    inside_body = true;  // a body that shares work again runs it serially
    try {
      body(begin, std::min(items, begin + grain));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    inside_body = was_inside;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace dpsosp::detail
