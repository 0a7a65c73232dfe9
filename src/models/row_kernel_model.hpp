// Internal: the fused clipped sums of the models whose rows come from their
// own per-record gradient kernel (softmax, mlp, pca), in one place.
#pragma once
#include "dpsosp/clip.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/types.hpp"
#include "engine/clipped_sum.hpp"
#include "models/model_internal.hpp"

namespace dpsosp::detail {

/// A model D whose clipped sums run in one fused, threaded pass
/// (src/engine/clipped_sum.hpp), each row by the kernel behind D's gradient(),
/// so the rows agree with gradient() bit for bit; an O2 row runs the kernel at
/// both points on the record while it is in cache. D gives (and befriends
/// this class for):
///   Scratch make_scratch() const;  // a thread's scratch for the kernel
///   void gradient_kernel(const Vec& at, const Dataset& data, Index i, Scratch& scratch,
///                        Eigen::Ref<Vec> out) const;
/// kKind is D's KernelKind (the threads' timing).
template <class D, int kKind>
class RowKernelModel : public Model {
 public:
  ClippedSum clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip) const final {
    return gradient_sum_from(x, data, idx, clip, nullptr);
  }
  ClippedSum clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip) const final {
    return difference_sum_from(x, x_prev, data, idx, clip, nullptr);
  }
  ClippedSum chained_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                  const SumStart& start) const final {
    return gradient_sum_from(x, data, idx, clip, &start);
  }
  ClippedSum chained_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip, const SumStart& start) const final {
    return difference_sum_from(x, x_prev, data, idx, clip, &start);
  }
  ClippedSum clipped_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                               const IndexList& idx, double inner_clip, double clip) const final {
    return consistent_sum_from(x, x_prev, data, idx, inner_clip, clip, nullptr);
  }
  ClippedSum chained_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                               const IndexList& idx, double inner_clip, double clip,
                                               const SumStart& start) const final {
    return consistent_sum_from(x, x_prev, data, idx, inner_clip, clip, &start);
  }

 private:
  ClippedSum gradient_sum_from(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                               const SumStart* start) const {
    check_point(*this, x, "clipped_gradient_sum");
    return clipped_gradient_rows(2 * kKind, data, idx, model().dim(), x, clip, row_kernels(data), start);
  }
  ClippedSum difference_sum_from(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                 double clip, const SumStart* start) const {
    check_point(*this, x, "clipped_difference_sum");
    check_point(*this, x_prev, "clipped_difference_sum");
    return clipped_difference_rows(2 * kKind + 1, data, idx, model().dim(), x, x_prev, clip, row_kernels(data), start);
  }
  ClippedSum consistent_sum_from(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                 double inner_clip, double clip, const SumStart* start) const {
    check_point(*this, x, "clipped_consistent_difference_sum");
    check_point(*this, x_prev, "clipped_consistent_difference_sum");
    return clipped_consistent_difference_rows(2 * kKind + 1, data, idx, model().dim(), x, x_prev, inner_clip, clip,
                                              row_kernels(data), start);
  }
  const D& model() const { return static_cast<const D&>(*this); }
  // Per-thread row kernels for the engine: D's kernel, each with its own scratch.
  auto row_kernels(const Dataset& data) const {
    return [m = &model(), &data] {
      return [m, &data, scratch = m->make_scratch()](const Vec& at, Index i, Eigen::Map<Vec> out) mutable {
        m->gradient_kernel(at, data, i, scratch, out);
      };
    };
  }
};

}  // namespace dpsosp::detail
