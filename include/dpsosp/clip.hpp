// dpsosp: the clipping rule, the one place privacy rests on: every
// per-example vector the library adds to a release is clipped by it. The
// engine (src/engine/) computes clipped sums by it; the models and the
// oracles call the engine.
#pragma once
#include <functional>

#include "dpsosp/types.hpp"

namespace dpsosp {

/// Clip v to norm at most c (c = +inf leaves v as is); returns whether it
/// changed v. The rule, for any v (SPEC sections 2.2 and 8): kept when
/// ||v|| <= c; scaled to norm c when ||v|| > c, the norm computed without
/// overflow (a finite v whose squared norm overflows is scaled through its
/// largest entry); set to zero when an entry is NaN or infinite, or c <= 0.
/// So a clipped vector has norm at most c whatever the data.
bool clip_to_norm(Eigen::Ref<Vec> v, double c);

/// A sum of clipped per-example vectors (the oracles' kernel, see Model).
struct ClippedSum {
  Vec sum;              ///< sum over the records, in their order, of the clipped vectors
  Index clipped = 0;    ///< vectors that clipping changed (norm above the bound, or not finite)
  Index nonfinite = 0;  ///< of those, vectors with a NaN or infinite entry (clipped to zero)
};

/// Where a chained clipped sum starts (Model::chained_gradient_sum): it sets
/// its argument to the sum of the clipped vectors before the records of the
/// call (d entries; zeros for the first share of a batch). In a data-parallel
/// run it waits for that sum from the process before this one.
using SumStart = std::function<void(Vec& sum)>;

}  // namespace dpsosp
