// Internal: the fused engine's workers (clipped_sum.hpp), which compute and
// clip a group of per-example rows and add them to the sum, and where those
// rows sit in memory (not installed).
//
// Alignment: no reduction here depends on where a vector starts (Eigen sums
// expressions from their first entry; eigen_order checks it), but to leave
// nothing to the library's internals every row is computed at the offset from
// an aligned address it has in the reference form: row k of a b x d RowMatrix
// starts (k*d) mod kAlignUnit doubles past one.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "dpsosp/clip.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/types.hpp"
#include "engine/clip_rule.hpp"
#include "engine/wide_kernels.hpp"

namespace dpsosp::detail {

/// Doubles per alignment unit of Eigen's heap allocations.
constexpr Index kAlignUnit = EIGEN_MAX_ALIGN_BYTES >= 8 ? EIGEN_MAX_ALIGN_BYTES / 8 : 1;
/// Rows of the engine's stretches come in multiples of this (clipped_sum.hpp),
/// and so do the shares of a chained sum (Model::share_unit): a stretch row
/// starts at the offset of the batch row it holds, and groups stay whole.
constexpr Index kStretchUnit = std::lcm(kAlignUnit, kGroup);

/// Sets `sum` from a chain's start (Model::chained_gradient_sum), checking its size.
inline void take_chain_start(const SumStart& start, Vec& sum, Index d) {
  start(sum);
  if (static_cast<Index>(sum.size()) != d)
    throw Error("chained clipped sum: the start has " + std::to_string(sum.size()) + " entries, expected " +
                std::to_string(d));
}

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

/// Rows per block of the reference form (Model::clipped_gradient_sum): a
/// multiple of kAlignUnit (so a block row starts at the offset of the batch row
/// it holds) with a block of about 2 MiB.
inline Index block_rows(Index d) {
  const Index target = std::max<Index>(1, (Index{2048} * 1024 / sizeof(double)) / std::max<Index>(d, 1));
  const Index unit = std::max<Index>(kAlignUnit, 8);
  return std::max(unit, target / unit * unit);
}

/// sum += row (d entries), in wide instructions when they are enabled.
inline void add_row(Vec& sum, const double* row, Index d) {
  if (wide::enabled()) {
    wide::add(sum.data(), row, d);
  } else {
    sum += Eigen::Map<const Vec>(row, static_cast<Eigen::Index>(d));
  }
}

/// sum += w * (the worker's row in `slot`), for a weighted record (Dataset::
/// weight, w in [0, 1]). The row is already clipped to norm <= c, so w times
/// it has norm <= w * c <= c: a record's contribution, and with it the
/// sensitivity of every release, stays within the bound it has unweighted
/// (the weight is part of the record under replace-one). Weight 0 adds
/// nothing. Unweighted data never come here (their bits are unchanged).
template <class Worker>
inline void add_weighted_row(Worker& worker, Index batch_row, Index slot, double w, Vec& sum, Vec& scratch) {
  if (w == 0.0) return;
  scratch.setZero(sum.size());
  worker.add(batch_row, slot, scratch);
  sum += w * scratch;
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
  ScaledRecordWorker(Coefficients coefficients, const Dataset& data, Index d, double clip, bool difference, Index slots)
      : coefficients_(std::move(coefficients)),
        data_(data),
        d_(d),
        clip_(clip),
        difference_(difference),
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

}  // namespace dpsosp::detail
