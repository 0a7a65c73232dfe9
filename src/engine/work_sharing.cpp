// ThreadChoice: whether a batch is shared between threads, chosen by timing
// (see work_sharing.hpp). The sharing itself is an OpenMP team in the engine
// (clipped_sum.hpp).
#include "engine/work_sharing.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>

namespace dpsosp::detail {
namespace {

constexpr int kKinds = 9;  // 2 per KernelKind, and kHvpKind
// Batches are told apart by size too (work = rows x entries, in powers of 2):
// sharing pays on large batches sooner than on small ones, whose fixed costs
// (starting the team, the last stretch's add) weigh more.
constexpr int kBuckets = 16;
int bucket_of(double work) {
  int e = 0;
  std::frexp(std::max(work, 1.0), &e);
  return std::clamp(e - 13, 0, kBuckets - 1);  // 2^13 entries: the smallest shared batch
}
constexpr std::uint64_t kMinGap = 32, kMaxGap = 4096;
constexpr int kRecent = 5;  // batches per figure (at most), and per try of the losing way
constexpr int kFirst = 3;   // timed batches each way before the first choice
constexpr int kWarmUp = 4;  // untimed shared batches before those
// A try of the losing way costs about kRecent * (dearer - 1) batches of the
// winning way's; tries are spaced to keep that below this share of the time.
// (O2 batches of spider-tree-adaptive cost 1.46 times as much alone: retried
// every 32 batches, they ran alone one time in ten, 6 % of their time.)
constexpr double kTryBudget = 0.02;

// The costs per unit of work of the last few batches run each way; a way's
// figure is their median, so that one batch that lost the core (or the first
// shared batch, which starts the OpenMP team) cannot sway the choice for long.
struct Recent {
  double cost[kRecent] = {};
  int count = 0;
  int next = 0;
  void add(double c) {
    cost[next] = c;
    next = (next + 1) % kRecent;
    count = std::min(count + 1, kRecent);
  }
  double median() const {  // of the count (>= 1) figures there are
    double c[kRecent];
    // Insertion sort of at most kRecent figures (std::sort's general path,
    // inlined here, drew a false array-bounds warning from GCC 12).
    for (int i = 0; i < count; ++i) {
      int j = i;
      for (; j > 0 && c[j - 1] > cost[i]; --j) c[j] = c[j - 1];
      c[j] = cost[i];
    }
    return c[count / 2];
  }
};

struct KindState {
  std::mutex mutex;
  Recent recent[2];  // [0] alone, [1] shared
  std::uint64_t batches = 0;
  // The losing way is tried (kRecent batches in a row) again at batch
  // next_try; the gap doubles each time it loses again (up to kMaxGap), so a
  // way that keeps losing costs little.
  std::uint64_t next_try = 0;
  std::uint64_t gap = kMinGap;
  int trying = -1;  // the way being tried, while try_left > 0
  int try_left = 0;
  int last_choice = -1;
  int warm_up_left = kWarmUp;  // untimed shared batches still to run first
};
KindState kind_state[kKinds][kBuckets];
// When the process's last shared batch ended (0: none yet). A shared batch
// long after it may find the team's helper asleep (an OpenMP helper spins
// idle for some milliseconds, then sleeps; waking a sleeping virtual CPU can
// cost more than the batch itself): not the cost of sharing that batch.
std::atomic<double> last_shared_end{0.0};
constexpr double kHelperAwake = 1e-3;  // seconds a helper surely still spins
std::atomic<int> forced_mode{0};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 1 = share, 0 = alone, for the next batch of a kind (s.mutex held);
// *warm_up = whether the batch is one of the untimed first ones.
int choose(KindState& s, bool* warm_up) {
  const std::uint64_t n = s.batches++;
  // The first look. The first batches of a process cost up to a hundred times
  // what later ones do (first touches of memory; on a virtual machine the
  // host's side of it too, for some milliseconds), so the first kWarmUp run
  // shared and untimed. Then the two ways take turns until each has kFirst
  // figures, so that both see the same machine (still cold, or warm by then)
  // and the first choice rests on medians of three each way, not on single
  // batches (a choice made on one cold batch each held the wrong way for the
  // first hundred batches).
  if (s.warm_up_left > 0) {
    --s.warm_up_left;
    *warm_up = true;
    return 1;
  }
  if (s.recent[0].count < kFirst || s.recent[1].count < kFirst) {
    return s.recent[1].count <= s.recent[0].count ? 1 : 0;
  }
  if (s.try_left > 0) {
    --s.try_left;
    return s.trying;
  }
  const double alone = s.recent[0].median();
  const double shared = s.recent[1].median();
  // Start sharing only when it pays clearly (helpers also cost the machine a
  // core); stop only when running alone is cheaper outright. The gap between
  // the two thresholds keeps noisy figures from flipping the choice back and
  // forth.
  const int choice = s.last_choice == 1 ? (alone < shared ? 0 : 1) : (shared < 0.85 * alone ? 1 : 0);
  // How much dearer the other way was: a try of a way that cost 30 times as
  // much is worth waiting 30 times as long for.
  const double dearer = choice == 1 ? alone / shared : shared / alone;
  const double budget_gap = kRecent * (dearer - 1.0) / kTryBudget;
  const auto scaled =
      static_cast<std::uint64_t>(std::min(static_cast<double>(kMaxGap), std::max(kMinGap * dearer, budget_gap)));
  if (s.last_choice != choice) {
    // A change of mind starts the gap between tries of the other way afresh.
    s.last_choice = choice;
    s.gap = std::max(kMinGap, scaled);
    s.next_try = n + s.gap;
    return choice;
  }
  if (n >= s.next_try) {  // keep the other figure current
    s.trying = 1 - choice;
    s.try_left = kRecent - 1;
    // A way that lost clearly (by half again) is tried ever more rarely; one
    // that lost narrowly, perhaps only to noise in its last few batches, is
    // tried again soon (as soon as the budget for tries allows), so that one
    // unlucky figure cannot settle the choice.
    s.gap = dearer > 1.5 ? std::min(kMaxGap, std::max(2 * s.gap, scaled)) : scaled;
    s.next_try = n + kRecent + s.gap;
    return s.trying;
  }
  return choice;
}

}  // namespace

ThreadChoice::ThreadChoice(int kind, int max_threads, double work)
    : kind_(std::clamp(kind, 0, kKinds - 1)), bucket_(bucket_of(work)), threads_(1), work_(work), start_(0) {
  if (max_threads <= 1) return;
  const int mode = forced_mode.load(std::memory_order_relaxed);
  if (mode != 0) {
    threads_ = mode == 2 ? max_threads : 1;
    return;
  }
  KindState& s = kind_state[kind_][bucket_];
  const double now = now_seconds();
  bool timed = true;
  chosen_ = true;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    bool warm_up = false;
    const bool share = choose(s, &warm_up) == 1;
    // The first shared batch (which starts the threads), one long after the
    // last (which may wake them) and the warm-up give no fair figure.
    if (share && now - last_shared_end.load(std::memory_order_relaxed) > kHelperAwake) timed = false;
    if (warm_up) timed = false;
    threads_ = share ? max_threads : 1;
  }
  if (timed) start_ = now;
}

ThreadChoice::~ThreadChoice() {
  if (!chosen_) return;  // not chosen by timing (one thread allowed, or forced)
  const double end = now_seconds();
  if (threads_ > 1) last_shared_end.store(end, std::memory_order_relaxed);
  if (start_ == 0.0 || !(work_ > 0.0)) return;
  const double cost = (end - start_) / work_;
  KindState& s = kind_state[kind_][bucket_];
  std::lock_guard<std::mutex> lock(s.mutex);
  const int way = threads_ > 1 ? 1 : 0;
  s.recent[way].add(cost);
  // A try of the losing way ends at its first batch that cost more than twice
  // the other way's figure: the choice stands, and on a busy machine a try of
  // sharing costs one batch, not five.
  if (s.try_left > 0 && s.trying == way && s.recent[1 - way].count > 0 && cost > 2 * s.recent[1 - way].median()) {
    s.try_left = 0;
  }
}

void ThreadChoice::force(int mode) { forced_mode.store(mode, std::memory_order_relaxed); }

int available_threads() { return omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads()); }

}  // namespace dpsosp::detail
