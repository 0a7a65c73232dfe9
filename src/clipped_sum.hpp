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
// Alignment: no reduction here depends on where a vector starts (Eigen sums
// expressions from their first entry; eigen_order checks it), but to leave
// nothing to the library's internals every row is computed at the offset from
// an aligned address it has in the reference form: row k of a b x d RowMatrix
// starts (k*d) mod kAlignUnit doubles past one.
#pragma once
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/oracles.hpp"
#include "dpsosp/types.hpp"
#include "eigen_order.hpp"
#include "wide_kernels.hpp"
#include "work_sharing.hpp"

namespace dpsosp::detail {

/// Kernel families, for ThreadChoice's timing (O1 of family k is kind 2k, O2 2k + 1).
enum KernelKind : int { kMarginKernel = 0, kSoftmaxKernel = 1, kMlpKernel = 2, kOtherKernel = 3 };

/// Rows computed (and clipped) together.
constexpr Index kGroup = 4;

/// Doubles per alignment unit of Eigen's heap allocations.
constexpr Index kAlignUnit = EIGEN_MAX_ALIGN_BYTES >= 8 ? EIGEN_MAX_ALIGN_BYTES / 8 : 1;

/// A d-vector whose start can be placed at any offset (in doubles) past an
/// aligned address, to reproduce where row k of a b x d matrix would start.
class AlignedScratch {
 public:
  explicit AlignedScratch(Index d = 0) : d_(d), storage_(static_cast<Eigen::Index>(d + kAlignUnit)) {}
  /// The scratch vector at the offset of row k of a k x d RowMatrix.
  double* row_like(Index k) { return storage_.data() + (k * d_) % kAlignUnit; }
  /// The scratch vector at the same offset as `p` has from an aligned address.
  double* like(const double* p) {
    return storage_.data() + (reinterpret_cast<std::uintptr_t>(p) % (kAlignUnit * sizeof(double))) / sizeof(double);
  }

 private:
  Index d_;
  Vec storage_;  // Eigen-aligned, like a RowMatrix's storage
};

/// Brings record i (features and label) towards the core ahead of its use.
inline void prefetch_record(const Dataset& data, Index i) {
  if (data.has_labels()) __builtin_prefetch(data.labels().data() + i);
  if (!data.is_sparse()) {
    const Index cols = data.cols();
    const char* p = reinterpret_cast<const char*>(data.dense().data() + i * cols);
    const char* end = p + cols * sizeof(double);
    for (; p < end; p += 64) __builtin_prefetch(p, 0, 2);
    return;
  }
  const SparseRowMatrix& m = data.sparse();
  const std::int64_t begin = m.outerIndexPtr()[i];
  __builtin_prefetch(m.innerIndexPtr() + begin);
  __builtin_prefetch(m.valuePtr() + begin);
}

/// How many rows ahead to prefetch: enough to cover a memory latency with the
/// work of the rows in between, few enough not to flood the fill buffers.
inline Index prefetch_distance(Index d) { return d >= 512 ? 2 : (d >= 64 ? 4 : 8); }

/// Rows per block of the reference form (Model::clipped_gradient_sum): a
/// multiple of kAlignUnit (so a block row starts at the offset of the batch row
/// it holds) with a block of about 2 MiB.
inline Index block_rows(Index d) {
  const Index target = std::max<Index>(1, (Index{2048} * 1024 / sizeof(double)) / std::max<Index>(d, 1));
  const Index unit = std::max<Index>(kAlignUnit, 8);
  return std::max(unit, target / unit * unit);
}

/// Stretches of the threaded path: consecutive rows of the batch, a multiple
/// of nt of them, each about 64 KiB of rows (so a thread's buffer stays in
/// L1/L2 between computing and adding) and a whole number of kStretchUnit rows
/// (so a stretch row starts at the offset of the batch row it holds, and
/// groups stay whole). Returns the rows per stretch.
constexpr Index kStretchUnit = std::lcm(kAlignUnit, kGroup);
inline Index stretch_rows(Index b, Index d, int nt) {
  const Index row_bytes = std::max<Index>(d, 1) * static_cast<Index>(sizeof(double));
  const Index target = std::max<Index>(1, (b * row_bytes) / (Index{64} * 1024));
  const auto team = static_cast<Index>(std::max(nt, 1));
  const Index stretches = std::max(team, (target + team - 1) / team * team);
  const Index rows = (b + stretches - 1) / stretches;
  return (rows + kStretchUnit - 1) / kStretchUnit * kStretchUnit;
}

/// Threads a batch of b rows of d entries may use (small batches stay serial).
inline int max_threads_for(Index b, Index d) {
  const int t = available_threads();
  if (t <= 1 || b < 2 || b * std::max<Index>(d, 1) < 8192) return 1;
  return static_cast<int>(std::min<Index>(static_cast<Index>(t), b));
}

/// The clipping rule of clip_to_norm (oracles.cpp), which calls it, with the
/// norm already computed: one rule, so both paths give the same bits.
template <typename VectorRef>
inline bool clip_given_norm(VectorRef&& v, double norm, double c) {
  if (norm <= c) return false;
  if (c <= 0.0) {
    v.setZero();
  } else {
    v *= c / norm;
  }
  return true;
}

/// Clips rows[0..count) of d entries to norm c as clip_to_norm does, the norms
/// side by side; clipped[j] says whether row j was.
inline void clip_rows(double* const* rows, Index count, Index d, double c, unsigned char* clipped) {
  const auto n = static_cast<Eigen::Index>(d);
  if (!(c < std::numeric_limits<double>::infinity())) {
    std::fill(clipped, clipped + count, 0);
    return;
  }
  if (!eigen_order::verified()) {
    for (Index j = 0; j < count; ++j) clipped[j] = clip_to_norm(Eigen::Map<Vec>(rows[j], n), c) ? 1 : 0;
    return;
  }
  double squared[kGroup];
  if (wide::enabled()) {
    wide::squared_norms(rows, count, d, squared);
    for (Index j = 0; j < count; ++j) {
      // clip_given_norm's rule, the scaling in wide instructions.
      const double norm = std::sqrt(squared[j]);
      clipped[j] = norm > c ? 1 : 0;
      if (norm <= c) continue;
      if (c <= 0.0) {
        Eigen::Map<Vec>(rows[j], n).setZero();
      } else {
        wide::scale_in_place(rows[j], c / norm, d);
      }
    }
    return;
  }
  eigen_order::squared_norms(rows, count, d, squared);
  for (Index j = 0; j < count; ++j) {
    clipped[j] = clip_given_norm(Eigen::Map<Vec>(rows[j], n), std::sqrt(squared[j]), c) ? 1 : 0;
  }
}

/// sum += row (d entries), in wide instructions when they are enabled.
inline void add_row(Vec& sum, const double* row, Index d) {
  if (wide::enabled()) {
    wide::add(sum.data(), row, d);
  } else {
    sum += Eigen::Map<const Vec>(row, static_cast<Eigen::Index>(d));
  }
}

/// The engine. `make_kernel()` is called once per thread (or claim) and returns
/// a callable kernel(const Index* records, Index count, double* const* out)
/// writing the per-example vectors of count <= kGroup records into out[0..count)
/// (d entries each, any prior content). `kind` names the kernel for ThreadChoice.
template <class MakeKernel>
ClippedSum clipped_row_sum(int kind, const Dataset& data, const IndexList& idx, Index d, double clip,
                           MakeKernel make_kernel) {
  ClippedSum result;
  result.sum = Vec::Zero(static_cast<Eigen::Index>(d));
  const Index b = idx.size();
  if (b == 0) return result;
  // The kernels read rows unchecked: check the whole batch once.
  const Index n = data.rows();
  for (Index i : idx) {
    if (i >= n) {
      throw Error("clipped_row_sum: record " + std::to_string(i) + " out of range (rows = " + std::to_string(n) + ")");
    }
  }
  const auto dd = static_cast<Eigen::Index>(d);
  const Index ahead = prefetch_distance(d);
  const ThreadChoice choice(kind, max_threads_for(b, d), static_cast<double>(b) * static_cast<double>(d));
  const int threads = choice.threads();

  if (threads == 1) {
    auto kernel = make_kernel();
    std::array<AlignedScratch, kGroup> scratch;
    for (auto& s : scratch) s = AlignedScratch(d);
    for (Index k = 0; k < std::min(ahead, b); ++k) prefetch_record(data, idx[k]);
    for (Index k = 0; k < b; k += kGroup) {
      const Index count = std::min(kGroup, b - k);
      for (Index j = k + ahead; j < std::min(b, k + ahead + count); ++j) prefetch_record(data, idx[j]);
      double* rows[kGroup];
      for (Index j = 0; j < count; ++j) rows[j] = scratch[j].row_like(k + j);
      kernel(&idx[k], count, rows);
      unsigned char clipped[kGroup];
      clip_rows(rows, count, d, clip, clipped);
      for (Index j = 0; j < count; ++j) {
        result.clipped += clipped[j];
        add_row(result.sum, rows[j], d);
      }
    }
    return result;
  }

  // Shared: the batch is cut into stretches of consecutive rows, dealt to the
  // threads of an OpenMP team in turn (stretch s to thread s mod nt). A thread
  // computes and clips a stretch's rows into its own buffer, then waits for
  // the sum's turn to come to that stretch (every earlier stretch added), adds
  // the rows in row order and passes the turn on. The sum is therefore the
  // same chain of additions as a serial run makes, in the same order, for any
  // thread count: bit-identical. Only the sum (d doubles) moves between
  // cores; a thread's rows stay in its own caches.
  const int team = threads;
  const Index stretch = stretch_rows(b, d, team);
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
    // Each thread's own buffer, reused from batch to batch (a fresh one would
    // be a new mapping, and page faults, every batch).
    thread_local RowMatrix own_buffer;
    RowMatrix& buffer = own_buffer;
    if (buffer.rows() < static_cast<Eigen::Index>(stretch) || buffer.cols() != dd) {
      buffer.resize(static_cast<Eigen::Index>(stretch), dd);
    }
    std::optional<decltype(make_kernel())> kernel;
    try {
      kernel.emplace(make_kernel());
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
          for (Index j = r + ahead; j < r + ahead + count; ++j) {
            const Index k = row_after(s, j);
            if (k < b) prefetch_record(data, idx[k]);
          }
          double* out[kGroup];
          for (Index j = 0; j < count; ++j) out[j] = buffer.row(static_cast<Eigen::Index>(r + j)).data();
          (*kernel)(&idx[k0 + r], count, out);
          clip_rows(out, count, d, clip, &was_clipped[k0 + r]);
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
      for (Index r = 0; r < rows; ++r) add_row(sum, buffer.row(static_cast<Eigen::Index>(r)).data(), d);
      turn.store(s + 1, std::memory_order_release);
    }
  }
  if (error) std::rethrow_exception(error);
  for (unsigned char c : was_clipped) result.clipped += c;
  return result;
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
                                 double clip, MakeGradient make_gradient) {
  return clipped_row_sum(kind, data, idx, d, clip, one_row_at_a_time(d, [&x, make_gradient] {
    return [&x, grad = make_gradient()](Index record, Eigen::Map<Vec> out) mutable { grad(x, record, out); };
  }));
}

/// O2 from a gradient kernel: grad f(x; z) - grad f(x_prev; z), both from one
/// read of the record; the subtraction is the reference's elementwise a - b.
template <class MakeGradient>
ClippedSum clipped_difference_rows(int kind, const Dataset& data, const IndexList& idx, Index d, const Vec& x,
                                   const Vec& x_prev, double clip, MakeGradient make_gradient) {
  return clipped_row_sum(kind, data, idx, d, clip, one_row_at_a_time(d, [&x, &x_prev, d, make_gradient] {
    return [&x, &x_prev, d, grad = make_gradient(), prev = AlignedScratch(d)](Index record,
                                                                               Eigen::Map<Vec> out) mutable {
      Eigen::Map<Vec> g_prev(prev.like(out.data()), static_cast<Eigen::Index>(d));
      grad(x, record, out);
      grad(x_prev, record, g_prev);
      out -= g_prev;
    };
  }));
}

}  // namespace dpsosp::detail
