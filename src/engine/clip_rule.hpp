// Internal: the clipping rule (not installed). clip_to_norm (clip.hpp), the
// fused engine (clipped_sum.hpp, row_workers.hpp) and the models' reference
// form (Model::clipped_gradient_sum) all clip through these functions: one
// rule, one place.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>

#include "dpsosp/clip.hpp"
#include "dpsosp/types.hpp"
#include "engine/eigen_order.hpp"
#include "engine/wide_kernels.hpp"

namespace dpsosp::detail {

/// Rows computed (and clipped) together.
constexpr Index kGroup = 4;

/// The clipping rule of clip_to_norm (clip.hpp), in one place, for every
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
        case wide::kRowZero:
          row.setZero();
          code[j] = kClipped;
          break;
        case wide::kRowScaled:
          wide::scale_in_place(rows[j], o.factor, d);
          code[j] = kClipped;
          break;
        default: code[j] = clip_entries(row, c);
      }
    }
    return;
  }
  eigen_order::squared_norms(rows, count, d, squared);
  for (Index j = 0; j < count; ++j) code[j] = clip_given_norm(Eigen::Map<Vec>(rows[j], n), std::sqrt(squared[j]), c);
}

}  // namespace dpsosp::detail
