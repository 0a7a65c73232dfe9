// A small pool of helper threads for share_work (see work_sharing.hpp).
//
// A job lives in a shared_ptr: a helper that wakes up late still holds a valid
// job, finds no item left to claim, and drops it, so the caller never has to
// wait for it. Helpers spin briefly between jobs (consecutive batches of an
// optimizer follow each other within microseconds), then sleep.
#include "work_sharing.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DPSOSP_PAUSE() _mm_pause()
#else
#define DPSOSP_PAUSE() std::this_thread::yield()
#endif

namespace dpsosp::detail {
namespace {

thread_local bool inside_body = false;

struct Job {
  const std::function<void(Index, Index)>* body = nullptr;
  Index items = 0, grain = 1;
  int max_helpers = 0;
  std::atomic<Index> next{0};
  std::atomic<Index> done{0};
  std::atomic<int> helpers{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  // Claims and runs ranges until none is left; used by the caller and helpers.
  void work() {
    for (;;) {
      const Index begin = next.fetch_add(grain, std::memory_order_relaxed);
      if (begin >= items) return;
      const Index end = std::min(items, begin + grain);
      try {
        (*body)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      done.fetch_add(end - begin, std::memory_order_release);
    }
  }
};

class Pool {
 public:
  static Pool& instance() {
    static Pool pool;
    return pool;
  }

  void run(const std::shared_ptr<Job>& job) {
    ensure_helpers(job->max_helpers);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      current_ = job;
      epoch_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    job->work();
    // Only ranges a helper has claimed can be outstanding; wait for those.
    for (unsigned spins = 0; job->done.load(std::memory_order_acquire) < job->items; ++spins) {
      if (spins < 4096) {
        DPSOSP_PAUSE();
      } else {
        std::this_thread::yield();
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (current_ == job) current_.reset();
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      epoch_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

 private:
  Pool() = default;

  void ensure_helpers(int wanted) {
    std::lock_guard<std::mutex> lock(spawn_mutex_);
    while (static_cast<int>(threads_.size()) < wanted) threads_.emplace_back([this] { helper_loop(); });
  }

  void helper_loop() {
    inside_body = true;  // a body that shares work again runs it serially
    std::uint64_t seen = epoch_.load(std::memory_order_acquire);
    for (;;) {
      // Spin for a while: the next batch usually comes within microseconds.
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      unsigned spins = 0;
      while (epoch_.load(std::memory_order_acquire) == seen) {
        DPSOSP_PAUSE();
        if (++spins % 256 == 0 && std::chrono::steady_clock::now() > spin_until) {
          std::unique_lock<std::mutex> lock(mutex_);
          sleepers_.fetch_add(1, std::memory_order_acq_rel);
          wake_.wait(lock, [&] { return epoch_.load(std::memory_order_acquire) != seen; });
          sleepers_.fetch_sub(1, std::memory_order_acq_rel);
          break;
        }
      }
      std::shared_ptr<Job> job;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) return;
        seen = epoch_.load(std::memory_order_acquire);
        job = current_;
      }
      if (!job) continue;
      if (job->helpers.fetch_add(1, std::memory_order_relaxed) >= job->max_helpers) continue;
      job->work();
    }
  }

  std::mutex mutex_, spawn_mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> current_;
  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<int> sleepers_{0};
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

namespace {

constexpr int kKinds = 8;
struct KindState {
  std::atomic<double> cost[2] = {{0.0}, {0.0}};  // seconds per unit: [0] alone, [1] shared
  std::atomic<std::uint64_t> batches{0};
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
    share = shared < alone;
    if (n % 16 == 15) share = !share;  // keep the other figure current
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
  if (threads <= 1 || items <= grain || inside_body) {
    for (Index begin = 0; begin < items; begin += grain) body(begin, std::min(items, begin + grain));
    return;
  }
  auto job = std::make_shared<Job>();
  job->body = &body;
  job->items = items;
  job->grain = grain;
  job->max_helpers = threads - 1;
  inside_body = true;
  try {
    Pool::instance().run(job);
  } catch (...) {
    inside_body = false;
    throw;
  }
  inside_body = false;
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace dpsosp::detail
