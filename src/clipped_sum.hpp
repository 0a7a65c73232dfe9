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
//  * with several threads (work_sharing.hpp), rows are computed and clipped in
//    parallel into a block buffer, and the calling thread adds the finished
//    rows in row order while the others go on computing. The sum is the same
//    chain of additions, in the same order, for every thread count:
//    bit-identical.
//
// Alignment: no reduction here depends on where a vector starts (Eigen sums
// expressions from their first entry; eigen_order checks it), but to leave
// nothing to the library's internals every row is computed at the offset from
// an aligned address it has in the reference form: row k of a b x d RowMatrix
// starts (k*d) mod kAlignUnit doubles past one.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/oracles.hpp"
#include "dpsosp/types.hpp"
#include "eigen_order.hpp"
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

/// Rows per block of the threaded path: a multiple of kAlignUnit (so a block
/// row starts at the offset of the batch row it holds) with a block of about
/// 2 MiB, which stays in the caches between computing and adding and gives the
/// threads enough rows to share.
inline Index block_rows(Index d) {
  const Index target = std::max<Index>(1, (Index{2048} * 1024 / sizeof(double)) / std::max<Index>(d, 1));
  const Index unit = std::max<Index>(kAlignUnit, 8);
  return std::max(unit, target / unit * unit);
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
  eigen_order::squared_norms(rows, count, d, squared);
  for (Index j = 0; j < count; ++j) {
    clipped[j] = clip_given_norm(Eigen::Map<Vec>(rows[j], n), std::sqrt(squared[j]), c) ? 1 : 0;
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
        result.sum += Eigen::Map<const Vec>(rows[j], dd);
      }
    }
    return result;
  }

  const Index rows_per_block = std::min(block_rows(d), (b + kAlignUnit - 1) / kAlignUnit * kAlignUnit);
  // The block buffer is reused from batch to batch (a fresh one would be a
  // new mapping, and page faults, every batch).
  // (The helpers write into the caller's buffer: a reference, since a lambda
  // naming a thread_local would reach the running thread's own.)
  thread_local RowMatrix reused_block;
  RowMatrix& block = reused_block;
  if (block.rows() != static_cast<Eigen::Index>(rows_per_block) || block.cols() != dd) {
    block.resize(static_cast<Eigen::Index>(rows_per_block), dd);
  }
  std::vector<unsigned char> was_clipped(b, 0);
  std::unique_ptr<std::atomic<unsigned char>[]> done(new std::atomic<unsigned char>[rows_per_block]);
  // Rows per claim: about 8k coordinates of work, in whole groups: long
  // enough that the start of a claim (its first records not yet prefetched)
  // is rare, short enough (tens of microseconds) that a helper descheduled in
  // the middle of one delays the batch little.
  const Index row_grain = std::max<Index>(kGroup, Index{8192} / std::max<Index>(d, 1) / kGroup * kGroup);
  const std::thread::id caller = std::this_thread::get_id();
  for (Index k0 = 0; k0 < b; k0 += rows_per_block) {
    const Index rows = std::min(rows_per_block, b - k0);
    for (Index r = 0; r < rows; ++r) done[r].store(0, std::memory_order_relaxed);
    // The calling thread adds the finished rows in order, between its own
    // claims, while the helpers go on computing.
    Index added = 0;
    const auto add_finished_rows = [&] {
      for (; added < rows && done[added].load(std::memory_order_acquire) != 0; ++added) {
        result.sum += block.row(static_cast<Eigen::Index>(added)).transpose();
      }
    };
    share_work(rows, row_grain, threads, [&](Index r0, Index r1) {
      auto kernel = make_kernel();
      for (Index r = r0; r < std::min(r1, r0 + ahead); ++r) prefetch_record(data, idx[k0 + r]);
      for (Index r = r0; r < r1; r += kGroup) {
        const Index count = std::min(kGroup, r1 - r);
        // Past the end of the claim too: the next claim's first records.
        for (Index j = r + ahead; j < std::min(rows, r + ahead + count); ++j) prefetch_record(data, idx[k0 + j]);
        double* out[kGroup];
        for (Index j = 0; j < count; ++j) out[j] = block.row(static_cast<Eigen::Index>(r + j)).data();
        kernel(&idx[k0 + r], count, out);
        clip_rows(out, count, d, clip, &was_clipped[k0 + r]);
        for (Index j = 0; j < count; ++j) done[r + j].store(1, std::memory_order_release);
      }
      if (std::this_thread::get_id() == caller) add_finished_rows();
    });
    add_finished_rows();  // every row is done now
  }
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
