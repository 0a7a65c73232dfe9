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
#include "engine/eigen_order.hpp"
#include "engine/wide_kernels.hpp"
#include "engine/work_sharing.hpp"

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
  /// The scratch vector at the same offset as `p` has from an aligned address.
  double* like(const double* p) {
    return storage_.data() + (reinterpret_cast<std::uintptr_t>(p) % (kAlignUnit * sizeof(double))) / sizeof(double);
  }

 private:
  Index d_;
  Vec storage_;  // Eigen-aligned, like a RowMatrix's storage
};

/// Queues the lines of record i (its label, its features; for sparse data the
/// start of its indices and of its values), to be brought in a step at a time
/// while a kernel runs (wide::LinePrefetch).
inline void queue_record(wide::LinePrefetch& lines, const Dataset& data, Index i) {
  const Index at = data.slot(i);
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

/// Rows per block of the reference form (Model::clipped_gradient_sum): a
/// multiple of kAlignUnit (so a block row starts at the offset of the batch row
/// it holds) with a block of about 2 MiB.
inline Index block_rows(Index d) {
  const Index target = std::max<Index>(1, (Index{2048} * 1024 / sizeof(double)) / std::max<Index>(d, 1));
  const Index unit = std::max<Index>(kAlignUnit, 8);
  return std::max(unit, target / unit * unit);
}

/// Stretches of the threaded path: consecutive rows of the batch, a multiple
/// of nt of them, each about `bytes` of records (the worker's
/// kStretchBytes: small enough that what a thread computed is still in L1,
/// 48 KiB here, when it adds it, and that the last stretch of a batch, which
/// one thread adds while the other waits, is short) and a whole number of
/// kStretchUnit rows (so a stretch row starts at the offset of the batch row
/// it holds, and groups stay whole). Returns the rows per stretch.
constexpr Index kStretchUnit = std::lcm(kAlignUnit, kGroup);
inline Index stretch_rows(Index b, Index d, int nt, Index bytes) {
  const Index row_bytes = std::max<Index>(d, 1) * static_cast<Index>(sizeof(double));
  const Index target = std::max<Index>(1, (b * row_bytes) / bytes);
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

/// The clipping rule of clip_to_norm (oracles.hpp), in one place, for every
/// path of the engine and the reference form (SPEC sections 2.2 and 8). Given
/// the norm the caller's reduction computed, a vector is kept when norm <= c,
/// zeroed when c <= 0, and scaled by c / norm when that norm is finite. A norm
/// that is not finite (an entry NaN or infinite, or a squared norm that
/// overflowed: an extreme record) is settled by the vector's entries
/// (clip_entries): zero when one is not finite, else scaled to norm c through
/// its largest entry. So every clipped vector has norm at most c, whatever the
/// data, and no record can make a run fail. Vectors with finite norms get the
/// bits they always had.
struct ClipOutcome {
  int mode;       // wide::kRowAsIs, kRowScaled or kRowZero, or kRowCheckEntries
  double factor;  // the scale, for kRowScaled
};
/// The outcome whose vector must be settled by clip_entries.
constexpr int kRowCheckEntries = 3;
inline ClipOutcome clip_outcome(double norm, double c) {
  if (norm <= c || !(c < std::numeric_limits<double>::infinity())) return {wide::kRowAsIs, 1.0};
  if (c <= 0.0) return {wide::kRowZero, 0.0};
  if (norm < std::numeric_limits<double>::infinity()) return {wide::kRowScaled, c / norm};  // (NaN: false)
  return {kRowCheckEntries, 0.0};
}

/// What clipping did to one vector: bit 0 = changed (ClippedSum::clipped),
/// bit 1 = not finite (ClippedSum::nonfinite).
enum ClipCode : unsigned char { kKept = 0, kClipped = 1, kNonFinite = 3 };
inline void count_clip(ClippedSum& s, unsigned char code) {
  s.clipped += code & 1u;
  s.nonfinite += code >> 1;
}

/// The rule for a vector whose computed norm is not finite (clip_outcome's
/// kRowCheckEntries; c > 0): zero when an entry is NaN or infinite; else the
/// squared norm overflowed, and v becomes (v / m) * (c / ||v / m||), m the
/// largest |entry|, whose norm ||v / m|| lies in [1, sqrt(d)]. Rare, so plain
/// loops.
template <typename VectorRef>
inline ClipCode clip_entries(VectorRef&& v, double c) {
  const Eigen::Index n = v.size();
  double m = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double a = std::abs(v[i]);
    if (!(a <= std::numeric_limits<double>::max())) {  // NaN or infinite
      for (Eigen::Index k = 0; k < n; ++k) v[k] = 0.0;
      return kNonFinite;
    }
    m = std::max(m, a);
  }
  if (!(m > 0)) return kKept;  // (a zero vector has a finite norm; not reached)
  double squared = 0;
  for (Eigen::Index i = 0; i < n; ++i) squared += (v[i] / m) * (v[i] / m);
  const double f = c / std::sqrt(squared);
  for (Eigen::Index i = 0; i < n; ++i) v[i] = (v[i] / m) * f;
  return kClipped;
}

/// Clips v (norm already computed) by the rule; returns what it did.
template <typename VectorRef>
inline ClipCode clip_given_norm(VectorRef&& v, double norm, double c) {
  const ClipOutcome o = clip_outcome(norm, c);
  switch (o.mode) {
    case wide::kRowAsIs: return kKept;
    case wide::kRowZero: v.setZero(); return kClipped;
    case wide::kRowScaled: v *= o.factor; return kClipped;
    default: return clip_entries(v, c);
  }
}

/// Clips rows[0..count) of d entries to norm c as clip_to_norm does, the norms
/// side by side; code[j] says what it did to row j (ClipCode).
inline void clip_rows(double* const* rows, Index count, Index d, double c, unsigned char* code) {
  const auto n = static_cast<Eigen::Index>(d);
  if (!(c < std::numeric_limits<double>::infinity())) {
    std::fill(code, code + count, kKept);
    return;
  }
  if (!eigen_order::verified()) {
    for (Index j = 0; j < count; ++j) {
      Eigen::Map<Vec> row(rows[j], n);
      code[j] = clip_given_norm(row, row.norm(), c);
    }
    return;
  }
  double squared[kGroup];
  if (wide::enabled()) {
    wide::squared_norms(rows, count, d, squared);
    for (Index j = 0; j < count; ++j) {
      const ClipOutcome o = clip_outcome(std::sqrt(squared[j]), c);  // scaled in wide instructions
      Eigen::Map<Vec> row(rows[j], n);
      switch (o.mode) {
        case wide::kRowAsIs: code[j] = kKept; break;
        case wide::kRowZero: row.setZero(); code[j] = kClipped; break;
        case wide::kRowScaled: wide::scale_in_place(rows[j], o.factor, d); code[j] = kClipped; break;
        default: code[j] = clip_entries(row, c);
      }
    }
    return;
  }
  eigen_order::squared_norms(rows, count, d, squared);
  for (Index j = 0; j < count; ++j) code[j] = clip_given_norm(Eigen::Map<Vec>(rows[j], n), std::sqrt(squared[j]), c);
}

/// sum += row (d entries), in wide instructions when they are enabled.
inline void add_row(Vec& sum, const double* row, Index d) {
  if (wide::enabled()) {
    wide::add(sum.data(), row, d);
  } else {
    sum += Eigen::Map<const Vec>(row, static_cast<Eigen::Index>(d));
  }
}

/// A thread's scratch matrix of at least rows x cols, reused from call to call
/// (a fresh one would be a new mapping, and page faults, every batch).
inline RowMatrix& thread_buffer(Index rows, Index cols) {
  thread_local RowMatrix buffer;
  if (buffer.rows() < static_cast<Eigen::Index>(rows) || buffer.cols() != static_cast<Eigen::Index>(cols)) {
    buffer.resize(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  }
  return buffer;
}

/// The engine's workers. A worker computes and clips the rows of up to kGroup
/// records into slots of its own, and adds a slot's row to the sum:
///   compute(records, count, batch_row, slot, clipped, prefetch):
///     records[0..count) are batch rows batch_row.. (for alignment), into
///     slots slot..; prefetch holds the lines of records further on, to be
///     brought in (all of them) by the time compute returns;
///   add(batch_row, slot, sum): sum += the row in that slot.
///   kSpreadsPrefetch: whether compute spreads the prefetches over its loops
///     (or brings them all in at once);
///   kStretchBytes: the records per stretch of the threaded path (stretch_rows).
///
/// Rows as d-vectors written by a kernel(records, count, out), then clipped by
/// clip_rows. A slot's row sits at the offset from an aligned address that its
/// batch row has in a b x d matrix (the reference form).
template <class Kernel>
class VectorRowWorker {
 public:
  VectorRowWorker(Kernel kernel, Index d, double clip, Index slots)
      : kernel_(std::move(kernel)), d_(d), clip_(clip), buffer_(thread_buffer(slots + kAlignUnit, d)) {}
  static constexpr bool kSpreadsPrefetch = false;
  // Stretches of 24 KiB against 64 KiB: spider-tree-adaptive 2-6 % faster.
  static constexpr Index kStretchBytes = Index{24} * 1024;
  void compute(const Index* records, Index count, Index batch_row, Index slot, unsigned char* clipped,
               wide::LinePrefetch& prefetch) {
    prefetch.flush();
    double* out[kGroup];
    for (Index j = 0; j < count; ++j) out[j] = row(batch_row + j, slot + j);
    kernel_(records, count, out);
    clip_rows(out, count, d_, clip_, clipped);
  }
  void add(Index batch_row, Index slot, Vec& sum) { add_row(sum, row(batch_row, slot), d_); }

 private:
  double* row(Index batch_row, Index slot) {
    return buffer_.row(static_cast<Eigen::Index>(slot + (batch_row - slot) % kAlignUnit)).data();
  }
  Kernel kernel_;
  Index d_;
  double clip_;
  RowMatrix& buffer_;
};

/// Rows that are multiples of the record itself, as a margin model's are:
/// s1 a (O1) or s1 a - s0 a (O2, `difference`), a the record's dense
/// features. Nothing is written out: a slot keeps the record, its
/// coefficients and its clipping factor; the norm is computed from the record
/// and the add recomputes each entry of the row from it (still in the cache),
/// with the operations, hence the bits, of the vector form: s1 * a_j (minus
/// s0 * a_j), times c / ||row|| when clipped (wide_kernels.hpp). Needs
/// wide::enabled() and dense data. coefficients(records, count, s1, s0,
/// prefetch) gives the coefficients of count <= kGroup records (stepping the
/// prefetch in its loops).
template <class Coefficients>
class ScaledRecordWorker {
 public:
  ScaledRecordWorker(Coefficients coefficients, const Dataset& data, Index d, double clip, bool difference,
                     Index slots)
      : coefficients_(std::move(coefficients)), data_(data), d_(d), clip_(clip), difference_(difference),
        slots_(static_cast<std::size_t>(slots)) {}
  static constexpr bool kSpreadsPrefetch = true;
  // Logistic O2 at b = 257, 2 threads: 161 ns/row with 24 KiB stretches,
  // 146-150 with 8-12 KiB, 149-151 with 4 KiB, 200 with 2 KiB.
  static constexpr Index kStretchBytes = Index{8} * 1024;
  void compute(const Index* records, Index count, Index /*batch_row*/, Index slot, unsigned char* clipped,
               wide::LinePrefetch& prefetch) {
    double s1[kGroup], s0[kGroup] = {};  // s0 only for differences
    coefficients_(records, count, s1, s0, &prefetch);
    const double* rows[kGroup];
    for (Index j = 0; j < count; ++j) rows[j] = data_.dense_row(records[j]);
    const bool clipping = clip_ < std::numeric_limits<double>::infinity();
    double squared[kGroup] = {};
    if (clipping) wide::scaled_squared_norms(rows, s1, difference_ ? s0 : nullptr, count, d_, squared, &prefetch);
    prefetch.flush();
    for (Index j = 0; j < count; ++j) {
      const ClipOutcome o = clipping ? clip_outcome(std::sqrt(squared[j]), clip_) : ClipOutcome{wide::kRowAsIs, 1.0};
      slots_[slot + j] = Slot{rows[j], s1[j], s0[j], o.factor, o.mode};
      clipped[j] = o.mode == wide::kRowAsIs ? kKept : kClipped;
      if (o.mode == kRowCheckEntries) clipped[j] = settle_entries(slot + j);
    }
  }
  void add(Index /*batch_row*/, Index slot, Vec& sum) {
    const Slot& s = slots_[slot];
    if (s.mode == kRowCheckEntries) {  // the row written out by settle_entries
      add_row(sum, written_[slot].data(), d_);
      return;
    }
    wide::add_scaled_record(sum.data(), s.a, s.s1, s.s0, difference_, s.mode, s.factor, d_);
  }

 private:
  struct Slot {
    const double* a = nullptr;
    double s1 = 0, s0 = 0, factor = 1;
    int mode = 0;
  };
  // A row whose norm is not finite: written out (each entry as
  // add_scaled_record computes it) and clipped by clip_entries.
  unsigned char settle_entries(Index slot) {
    if (written_.size() < slots_.size()) written_.resize(slots_.size());
    const Slot& s = slots_[slot];
    Vec& row = written_[slot];
    row.resize(static_cast<Eigen::Index>(d_));
    for (Index i = 0; i < d_; ++i) {
      const auto k = static_cast<Eigen::Index>(i);
      row[k] = difference_ ? s.s1 * s.a[i] - s.s0 * s.a[i] : s.s1 * s.a[i];
    }
    return clip_entries(row, clip_);
  }
  Coefficients coefficients_;
  const Dataset& data_;
  Index d_;
  double clip_;
  bool difference_;
  std::vector<Slot> slots_;
  std::vector<Vec> written_;  // rows settled by clip_entries (rare: extreme records)
};

/// The engine: the clipped rows of the batch idx, added in batch order.
/// make_worker(slots) is called once per thread and returns a worker (above)
/// with room for `slots` rows. `kind` names the kernel for ThreadChoice.
template <class MakeWorker>
ClippedSum clipped_sum_with(int kind, const Dataset& data, const IndexList& idx, Index d, MakeWorker make_worker) {
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
  using Worker = decltype(make_worker(Index{1}));
  const Index ahead = prefetch_distance(d, Worker::kSpreadsPrefetch);
  const ThreadChoice choice(kind, max_threads_for(b, d), static_cast<double>(b) * static_cast<double>(d));
  const int threads = choice.threads();
  wide::LinePrefetch lines;

  if (threads == 1) {
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
        worker.add(k + j, j, result.sum);
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
  const int team = threads;
  const Index stretch = stretch_rows(b, d, team, Worker::kStretchBytes);
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
      for (Index r = 0; r < rows; ++r) worker->add(k0 + r, r, sum);
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
                           MakeKernel make_kernel) {
  return clipped_sum_with(kind, data, idx, d, [&make_kernel, d, clip](Index slots) {
    return VectorRowWorker<decltype(make_kernel())>(make_kernel(), d, clip, slots);
  });
}

/// The engine over rows that are multiples of their records (ScaledRecordWorker).
template <class MakeCoefficients>
ClippedSum clipped_scaled_record_sum(int kind, const Dataset& data, const IndexList& idx, Index d, double clip,
                                     bool difference, MakeCoefficients make_coefficients) {
  return clipped_sum_with(kind, data, idx, d, [&make_coefficients, &data, d, clip, difference](Index slots) {
    return ScaledRecordWorker<decltype(make_coefficients())>(make_coefficients(), data, d, clip, difference, slots);
  });
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
