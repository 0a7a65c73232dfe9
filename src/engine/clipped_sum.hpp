// Internal: the fused per-example engine behind Model::clipped_gradient_sum and
// Model::clipped_difference_sum (not installed).
//
// What it computes is fixed by the oracles' reference form (SPEC 2.2): every
// per-example vector g_k is computed, clipped by clip_to_norm (g *= c/||g||),
// and the clipped vectors are added to a zero vector in the order of idx. The
// engine computes exactly that, faster:
//
//  * no b x d matrix: a serial run computes a few rows at a time into small
//    scratch vectors that stay in L1/L2, clips them and adds them to the sum;
//  * rows come in groups of kGroup, so the reductions of a group (the kernel's
//    dot products, the clipping norms) run side by side, each in Eigen's own
//    order (eigen_order.hpp), instead of one latency-bound chain after another;
//  * the records of the next rows are prefetched while the current ones are
//    computed (the batch is a random subset, so without it every row starts
//    with a cache and TLB miss);
//  * with several threads (an OpenMP team, when ThreadChoice in
//    work_sharing.hpp says sharing pays), each thread computes and clips
//    stretches of consecutive rows into its own buffer and adds them to the
//    sum when the sum's turn comes to them, stretch after stretch in batch
//    order: the same chain of additions, in the same order, for every thread
//    count. Bit-identical.
//
// The parts: the clipping rule (clip_rule.hpp), the workers that compute,
// clip and add a group of rows and where those rows sit (row_workers.hpp),
// and here the driver: prefetching, the threaded stretches and the entry
// points the models call.
#pragma once
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "data/dataset_layout.hpp"
#include "dpsosp/clip.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/types.hpp"
#include "engine/clip_rule.hpp"
#include "engine/row_workers.hpp"
#include "engine/wide_kernels.hpp"
#include "engine/work_sharing.hpp"

namespace dpsosp::detail {

/// Kernel families, for ThreadChoice's timing (O1 of family k is kind 2k, O2 2k + 1).
enum KernelKind : int { kMarginKernel = 0, kSoftmaxKernel = 1, kMlpKernel = 2, kOtherKernel = 3 };
/// The kind of the certificate's per-record Hessian products (Model::mean_hessian).
constexpr int kHvpKind = 8;

/// Queues the lines of record i (its label, its features; for sparse data the
/// start of its indices and of its values), to be brought in a step at a time
/// while a kernel runs (wide::LinePrefetch).
inline void queue_record(wide::LinePrefetch& lines, const Dataset& data, Index i) {
  const Index at = DatasetLayout::slot(data, i);
  if (data.has_labels()) lines.add(data.labels().data() + at, sizeof(double));
  if (!data.is_sparse()) {
    lines.add(data.dense_row(i), static_cast<std::size_t>(data.cols()) * sizeof(double));
    return;
  }
  const SparseRowMatrix& m = data.sparse();
  const std::int64_t begin = m.outerIndexPtr()[at];
  lines.add(m.innerIndexPtr() + begin, 1);
  lines.add(m.valuePtr() + begin, 1);
}

/// Brings record i towards the core ahead of its use, all its lines at once.
inline void prefetch_record(const Dataset& data, Index i) {
  wide::LinePrefetch lines;
  queue_record(lines, data, i);
  lines.flush();
}

/// How many rows ahead to prefetch: enough to cover a memory latency with the
/// work of the rows in between, few enough not to flood the fill buffers.
/// Workers that spread their prefetches over their loops (ScaledRecordWorker)
/// look two groups ahead: the last lines of a group go out near the end of
/// the group before.
inline Index prefetch_distance(Index d, bool spread = false) {
  if (spread && d >= 64 && d < 512) return 2 * kGroup;
  return d >= 512 ? 2 : (d >= 64 ? 4 : 8);
}

/// Stretches of the threaded path: consecutive rows of the batch, a multiple
/// of nt of them, each about `bytes` of records (the worker's
/// kStretchBytes: small enough that what a thread computed is still in L1,
/// 48 KiB here, when it adds it, and that the last stretch of a batch, which
/// one thread adds while the other waits, is short) and a whole number of
/// kStretchUnit rows (so a stretch row starts at the offset of the batch row
/// it holds, and groups stay whole). Returns the rows per stretch.
inline Index stretch_rows(Index b, Index d, int nt, Index bytes) {
  const Index row_bytes = std::max<Index>(d, 1) * static_cast<Index>(sizeof(double));
  const Index target = std::max<Index>(1, (b * row_bytes) / bytes);
  const auto team = static_cast<Index>(std::max(nt, 1));
  const Index stretches = std::max(team, (target + team - 1) / team * team);
  const Index rows = (b + stretches - 1) / stretches;
  return (rows + kStretchUnit - 1) / kStretchUnit * kStretchUnit;
}

/// Stretches of a chained sum (SumStart given): each thread's share of the
/// batch in one stretch, so that every row is computed before the sum it is
/// added to arrives, unless that would take more than kChainAheadBytes of
/// rows (then the rows past it are computed after, still in order).
constexpr Index kChainAheadBytes = Index{64} << 20;
inline Index chain_stretch_rows(Index b, Index d, int nt) {
  const auto team = static_cast<Index>(std::max(nt, 1));
  const Index row_bytes = std::max<Index>(d, 1) * static_cast<Index>(sizeof(double));
  const Index cap = std::max(kStretchUnit, kChainAheadBytes / team / row_bytes / kStretchUnit * kStretchUnit);
  const Index share = (b + team - 1) / team;
  return std::min(cap, (share + kStretchUnit - 1) / kStretchUnit * kStretchUnit);
}

/// Threads a batch of b rows of d entries may use (small batches stay serial).
inline int max_threads_for(Index b, Index d) {
  const int t = available_threads();
  if (t <= 1 || b < 2 || b * std::max<Index>(d, 1) < 8192) return 1;
  return static_cast<int>(std::min<Index>(static_cast<Index>(t), b));
}

/// The engine: the clipped rows of the batch idx, added in batch order.
/// make_worker(slots) is called once per thread and returns a worker (above)
/// with room for `slots` rows. `kind` names the kernel for ThreadChoice.
/// With `start` (a chained sum) the rows are added to what start gives, not to
/// zero; it is called on the calling thread once the rows that fit in
/// kChainAheadBytes are computed (the threaded path below, even on one thread).
template <class MakeWorker>
ClippedSum clipped_sum_with(int kind, const Dataset& data, const IndexList& idx, Index d, MakeWorker make_worker,
                            const SumStart* start = nullptr) {
  ClippedSum result;
  result.sum = Vec::Zero(static_cast<Eigen::Index>(d));
  const Index b = idx.size();
  if (b == 0) {
    if (start != nullptr) take_chain_start(*start, result.sum, d);
    return result;
  }
  // The kernels read rows unchecked: check the whole batch once.
  const Index n = data.rows();
  for (Index i : idx) {
    if (i >= n) {
      throw Error("clipped_row_sum: record " + std::to_string(i) + " out of range (rows = " + std::to_string(n) + ")");
    }
  }
  using Worker = decltype(make_worker(Index{1}));
  const Index ahead = prefetch_distance(d, Worker::kSpreadsPrefetch);
  const ThreadChoice choice(kind, max_threads_for(b, d), static_cast<double>(b) * static_cast<double>(d));
  const int threads = choice.threads();
  wide::LinePrefetch lines;
  // Weighted records (Dataset::weight): each clipped row times its weight.
  const bool weighted = data.has_weights();
  Vec scratch;

  if (threads == 1 && start == nullptr) {
    auto worker = make_worker(kGroup);
    for (Index k = 0; k < std::min(ahead, b); ++k) prefetch_record(data, idx[k]);
    for (Index k = 0; k < b; k += kGroup) {
      const Index count = std::min(kGroup, b - k);
      lines.clear();
      for (Index j = k + ahead; j < std::min(b, k + ahead + count); ++j) queue_record(lines, data, idx[j]);
      unsigned char code[kGroup];
      worker.compute(&idx[k], count, k, 0, code, lines);
      for (Index j = 0; j < count; ++j) {
        count_clip(result, code[j]);
        if (weighted) {
          add_weighted_row(worker, k + j, j, data.weight(idx[k + j]), result.sum, scratch);
        } else {
          worker.add(k + j, j, result.sum);
        }
      }
    }
    return result;
  }

  // Shared: the batch is cut into stretches of consecutive rows, dealt to the
  // threads of an OpenMP team in turn (stretch s to thread s mod nt). A thread
  // computes and clips a stretch's rows into its own slots, then waits for
  // the sum's turn to come to that stretch (every earlier stretch added), adds
  // the rows in row order and passes the turn on. The sum is therefore the
  // same chain of additions as a serial run makes, in the same order, for any
  // thread count: bit-identical. Only the sum (d doubles) moves between
  // cores; a thread's rows stay in its own caches.
  // A chained sum takes its start on the calling thread (the team's thread
  // 0, which holds stretch 0) before it adds the first row.
  const int team = threads;
  const Index stretch =
      start != nullptr ? chain_stretch_rows(b, d, team) : stretch_rows(b, d, team, Worker::kStretchBytes);
  const Index stretches = (b + stretch - 1) / stretch;
  std::vector<unsigned char> was_clipped(b, 0);
  alignas(64) std::atomic<Index> turn{0};
  alignas(64) std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto record_error = [&] {
    std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = std::current_exception();
    failed.store(true, std::memory_order_release);
  };
  Vec& sum = result.sum;
#pragma omp parallel num_threads(team)
  {
    const auto t = static_cast<Index>(omp_get_thread_num());
    const auto nt = static_cast<Index>(omp_get_num_threads());
    std::optional<Worker> worker;
    wide::LinePrefetch lines;
    try {
      worker.emplace(make_worker(stretch));
    } catch (...) {
      record_error();
    }
    // Batch row of the j-th row this thread handles from stretch s on (for
    // prefetching across into its next stretch); b when there is none.
    const auto row_after = [&](Index s, Index j) {
      const Index k = s * stretch + j;
      if (j < stretch) return std::min(k, b);
      const Index next = (s + nt) * stretch + (j - stretch);
      return next < b ? next : b;
    };
    for (Index s = t; s < stretches && !failed.load(std::memory_order_acquire); s += nt) {
      const Index k0 = s * stretch;
      const Index rows = std::min(stretch, b - k0);
      try {
        if (s == t) {
          for (Index j = 0; j < std::min(rows, ahead); ++j) prefetch_record(data, idx[k0 + j]);
        }
        for (Index r = 0; r < rows; r += kGroup) {
          const Index count = std::min(kGroup, rows - r);
          lines.clear();
          for (Index j = r + ahead; j < r + ahead + count; ++j) {
            const Index k = row_after(s, j);
            if (k < b) queue_record(lines, data, idx[k]);
          }
          worker->compute(&idx[k0 + r], count, k0 + r, r, &was_clipped[k0 + r], lines);
        }
      } catch (...) {
        record_error();
        break;
      }
      // Wait for the sum: every earlier stretch added.
      for (unsigned spins = 0; turn.load(std::memory_order_acquire) != s; ++spins) {
        if (failed.load(std::memory_order_acquire)) break;
        // Spin for the few microseconds an add takes; past that the holder
        // has probably lost its core, and yielding may give it back.
        if (spins >= 4096) std::this_thread::yield();
      }
      if (failed.load(std::memory_order_acquire)) break;
      if (s == 0 && start != nullptr) {
        try {
          take_chain_start(*start, sum, d);
        } catch (...) {
          record_error();
          break;
        }
      }
      if (weighted) {
        Vec row_scratch;
        for (Index r = 0; r < rows; ++r)
          add_weighted_row(*worker, k0 + r, r, data.weight(idx[k0 + r]), sum, row_scratch);
      } else {
        for (Index r = 0; r < rows; ++r) worker->add(k0 + r, r, sum);
      }
      turn.store(s + 1, std::memory_order_release);
    }
  }
  if (error) std::rethrow_exception(error);
  for (unsigned char code : was_clipped) count_clip(result, code);
  return result;
}

/// The engine over kernels that write rows out. `make_kernel()` is called once
/// per thread and returns a callable kernel(const Index* records, Index count,
/// double* const* out) writing the per-example vectors of count <= kGroup
/// records into out[0..count) (d entries each, any prior content).
template <class MakeKernel>
ClippedSum clipped_row_sum(int kind, const Dataset& data, const IndexList& idx, Index d, double clip,
                           MakeKernel make_kernel, const SumStart* start = nullptr) {
  return clipped_sum_with(
      kind, data, idx, d,
      [&make_kernel, d, clip](Index slots) {
        return VectorRowWorker<decltype(make_kernel())>(make_kernel(), d, clip, slots);
      },
      start);
}

/// The engine over rows that are multiples of their records (ScaledRecordWorker).
template <class MakeCoefficients>
ClippedSum clipped_scaled_record_sum(int kind, const Dataset& data, const IndexList& idx, Index d, double clip,
                                     bool difference, MakeCoefficients make_coefficients,
                                     const SumStart* start = nullptr) {
  return clipped_sum_with(
      kind, data, idx, d,
      [&make_coefficients, &data, d, clip, difference](Index slots) {
        return ScaledRecordWorker<decltype(make_coefficients())>(make_coefficients(), data, d, clip, difference, slots);
      },
      start);
}

/// A group kernel from a one-row kernel row(Index record, Eigen::Map<Vec> out).
template <class MakeRowKernel>
auto one_row_at_a_time(Index d, MakeRowKernel make_row_kernel) {
  return [d, make_row_kernel] {
    return [d, row = make_row_kernel()](const Index* records, Index count, double* const* out) mutable {
      for (Index j = 0; j < count; ++j) row(records[j], Eigen::Map<Vec>(out[j], static_cast<Eigen::Index>(d)));
    };
  };
}

/// O1 from a gradient kernel: `make_gradient()` returns, per thread, a callable
/// grad(const Vec& point, Index record, Eigen::Map<Vec> out).
template <class MakeGradient>
ClippedSum clipped_gradient_rows(int kind, const Dataset& data, const IndexList& idx, Index d, const Vec& x,
                                 double clip, MakeGradient make_gradient, const SumStart* start = nullptr) {
  return clipped_row_sum(kind, data, idx, d, clip,
                         one_row_at_a_time(d,
                                           [&x, make_gradient] {
                                             return [&x, grad = make_gradient()](Index record,
                                                                                 Eigen::Map<Vec> out) mutable {
                                               grad(x, record, out);
                                             };
                                           }),
                         start);
}

/// O2 from a gradient kernel: grad f(x; z) - grad f(x_prev; z), both from one
/// read of the record; the subtraction is the reference's elementwise a - b.
template <class MakeGradient>
ClippedSum clipped_difference_rows(int kind, const Dataset& data, const IndexList& idx, Index d, const Vec& x,
                                   const Vec& x_prev, double clip, MakeGradient make_gradient,
                                   const SumStart* start = nullptr) {
  return clipped_row_sum(kind, data, idx, d, clip,
                         one_row_at_a_time(d,
                                           [&x, &x_prev, d, make_gradient] {
                                             return [&x, &x_prev, d, grad = make_gradient(), prev = AlignedScratch(d)](
                                                        Index record, Eigen::Map<Vec> out) mutable {
                                               Eigen::Map<Vec> g_prev(prev.like(out.data()),
                                                                      static_cast<Eigen::Index>(d));
                                               grad(x, record, out);
                                               grad(x_prev, record, g_prev);
                                               out -= g_prev;
                                             };
                                           }),
                         start);
}

/// The consistent O2 from a gradient kernel: clip(grad f(x; z), inner) -
/// clip(grad f(x_prev; z), inner), both from one read of the record, each
/// clipped by clip_to_norm as in the reference form.
template <class MakeGradient>
ClippedSum clipped_consistent_difference_rows(int kind, const Dataset& data, const IndexList& idx, Index d,
                                              const Vec& x, const Vec& x_prev, double inner_clip, double clip,
                                              MakeGradient make_gradient, const SumStart* start = nullptr) {
  return clipped_row_sum(
      kind, data, idx, d, clip,
      one_row_at_a_time(d,
                        [&x, &x_prev, d, inner_clip, make_gradient] {
                          return [&x, &x_prev, d, inner_clip, grad = make_gradient(), prev = AlignedScratch(d)](
                                     Index record, Eigen::Map<Vec> out) mutable {
                            Eigen::Map<Vec> g_prev(prev.like(out.data()), static_cast<Eigen::Index>(d));
                            grad(x, record, out);
                            grad(x_prev, record, g_prev);
                            clip_to_norm(out, inner_clip);
                            clip_to_norm(g_prev, inner_clip);
                            out -= g_prev;
                          };
                        }),
      start);
}

}  // namespace dpsosp::detail
