// dpsosp: the clipped gradient oracles of paper Algorithm 3.
#pragma once
#include <functional>
#include <limits>
#include <optional>

#include "dpsosp/clip.hpp"
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

/// O1 and O2 over fresh records drawn from the pool. A clip bound of +infinity
/// disables clipping (the non-private references). Under replace-one adjacency
/// each output has L2 sensitivity 2 * clip / batch. Over the records minimize
/// hands an algorithm, the oracles follow the run's plan: records streamed
/// from a file, or each batch shared by a process group (the same outputs,
/// bit for bit).
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
  // The clipped sum of a batch: sum(from, rows, start) over this process's
  // rows of it (start null: from zero; else a share chained after the others').
  using BatchSum = std::function<ClippedSum(const Dataset& from, const IndexList& rows, const SumStart* start)>;
  // The next b records of the pool (or `given`), and the dataset to read
  // this process's rows of them from: data_ by record; stored_ by stored row
  // when the records are stored in the pool's order (the same records in the
  // same order, no slot lookups); or the records just streamed.
  ClippedSum sum_batch(Index b, const IndexList* given, const BatchSum& sum);

  const Model& model_;
  const Dataset& data_;
  SamplePool& pool_;
  std::optional<Dataset> stored_;
  const detail::BatchPlan* plan_ = nullptr;  // the run's plan, if any (src/data/dataset_layout.hpp)
  Index gradient_evaluations_ = 0;
};

}  // namespace dpsosp
