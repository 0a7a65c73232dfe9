// dpsosp: the clipped gradient oracles of paper Algorithm 3.
#pragma once
#include <limits>
#include <optional>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

struct OracleOutput {
  Vec value;            ///< the mean of the clipped per-example vectors
  Index batch = 0;      ///< records used
  Index clipped = 0;    ///< per-example vectors that clipping changed (see ClippedSum)
  Index nonfinite = 0;  ///< of those, the ones with a NaN or infinite entry (clipped to zero)
};

/// Clip v to norm at most c (c = +inf leaves v as is); returns whether it
/// changed v. The rule, for any v (SPEC sections 2.2 and 8): kept when
/// ||v|| <= c; scaled to norm c when ||v|| > c, the norm computed without
/// overflow (a finite v whose squared norm overflows is scaled through its
/// largest entry); set to zero when an entry is NaN or infinite, or c <= 0.
/// So a clipped vector has norm at most c whatever the data.
bool clip_to_norm(Eigen::Ref<Vec> v, double c);

/// O1 and O2 over fresh records drawn from the pool. A clip bound of +infinity
/// disables clipping (the non-private references). Under replace-one adjacency
/// each output has L2 sensitivity 2 * clip / batch.
class GradientOracles {
 public:
  GradientOracles(const Model& model, const Dataset& data, SamplePool& pool);
  /// O1(x) = mean over b fresh records of clip(grad f(x; z), clip).
  OracleOutput o1(const Vec& x, Index b, double clip);
  /// O2(x, x_prev) = mean over b fresh records of clip(grad f(x; z) - grad f(x_prev; z), clip).
  OracleOutput o2(const Vec& x, const Vec& x_prev, Index b, double clip);
  /// The consistent O2 of spider-mf-adaptive: mean over b fresh records of
  /// clip(clip(grad f(x; z), inner_clip) - clip(grad f(x_prev; z), inner_clip), clip),
  /// the difference of what O1 computes at the two points.
  OracleOutput o2_consistent(const Vec& x, const Vec& x_prev, Index b, double inner_clip, double clip);
  /// O1 on given records (no pool draw): used by multi-epoch DP-SGD.
  OracleOutput o1_on(const Vec& x, const IndexList& records, double clip);
  /// Per-example gradients computed so far.
  Index gradient_evaluations() const { return gradient_evaluations_; }
  SamplePool& pool() { return pool_; }

 private:
  // The next b records of the pool, and the dataset to read them from: data_
  // by record, or, when the records are stored in the pool's order, stored_
  // by stored row (the same records in the same order, no slot lookups).
  IndexList next_batch(Index b, const Dataset*& from);

  const Model& model_;
  const Dataset& data_;
  SamplePool& pool_;
  std::optional<Dataset> stored_;
  Index gradient_evaluations_ = 0;
};

}  // namespace dpsosp
