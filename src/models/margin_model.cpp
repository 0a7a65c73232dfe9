// MarginModel (model_internal.hpp): the members every margin model shares,
// the loss through z = <a_i, x> and its derivatives phi', phi'' (model_linear.cpp
// has the built-in models): grad = phi'(z) a_i, hess v = phi''(z) <a_i, v> a_i,
// and the engine's fused, clipped sums over the margins' coefficients.
#include <algorithm>
#include <cmath>

#include "engine/clipped_sum.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {
namespace detail {

double MarginModel::margin(const Vec& x, const Dataset& data, Index i) const {
  if (!intercept_) return data.row_dot(i, x);
  return data.row_dot(i, x.head(static_cast<Eigen::Index>(features_))) + x[static_cast<Eigen::Index>(features_)];
}

double MarginModel::loss(const Vec& x, const Dataset& data, Index i) const {
  check_point(*this, x, "loss");
  return phi(margin(x, data, i), target(data.label(i)));
}

double MarginModel::predict(const Vec& x, const Dataset& data, Index i) const {
  check_point(*this, x, "predict");
  return predicted(margin(x, data, i));
}

// The record read as [a_i, 1] when there is an intercept: out = 0 + s [a_i, 1].
void MarginModel::gradient_kernel(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const {
  const double s = dphi(margin(x, data, i), target(data.label(i)));
  out.setZero();
  const auto p = static_cast<Eigen::Index>(features_);
  data.row_axpy(i, s, out.head(p));
  if (intercept_) out[p] += s;
}

void MarginModel::gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const {
  check_point(*this, x, "gradient");
  gradient_kernel(x, data, i, out);
}

void MarginModel::hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const {
  check_point(*this, x, "hvp");
  check_direction(*this, v);
  const double curvature = d2phi(margin(x, data, i), target(data.label(i)));
  const double scale = curvature * margin(v, data, i);  // <[a_i, 1], v>
  out.setZero();
  const auto p = static_cast<Eigen::Index>(features_);
  data.row_axpy(i, scale, out.head(p));
  if (intercept_) out[p] += scale;
}

void MarginModel::batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const {
  check_point(*this, x, "batch_gradients");
  const Eigen::Index d = static_cast<Eigen::Index>(dim());
  out.resize(static_cast<Eigen::Index>(idx.size()), d);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    gradient_kernel(x, data, idx[k], Eigen::Map<Vec>(out.row(static_cast<Eigen::Index>(k)).data(), d));
  }
}

// gradient() writes 0 + s a_ij (setZero, then row_axpy); the fused rows write
// s a_ij, which differs only where the product is -0 (it becomes +0). Neither
// the clipping norm (a sum of squares) nor the clipped sum (a sum that starts
// at +0, so that adding a zero of either sign leaves it unchanged) can see the
// sign of a zero, so the oracle's bits are those of the reference form; the
// same holds for the difference (0 + p) - (0 + q) against p - q.
//
// The margins of a group of dense rows are computed side by side in Eigen's
// order (eigen_order.hpp): the same numbers as row_dot, without waiting for
// one dot product to finish before the next starts.
void MarginModel::fused_rows(const Vec& x, const Dataset& data, const Index* records, Index count,
                             double* const* out) const {
  const auto p = static_cast<Eigen::Index>(features_);
  if (data.is_sparse()) {
    for (Index j = 0; j < count; ++j) gradient_kernel(x, data, records[j], Eigen::Map<Vec>(out[j], p + intercept_));
    return;
  }
  double s[kGroup];
  dense_coefficients(x, nullptr, data, records, count, s, nullptr);
  for (Index j = 0; j < count; ++j) {
    const Eigen::Map<const Vec> a(data.dense_row(records[j]), p);
    Eigen::Map<Vec>(out[j], p).noalias() = s[j] * a;
    if (intercept_) out[j][p] = s[j];
  }
}

void MarginModel::fused_difference_rows(const Vec& x, const Vec& x_prev, const Dataset& data, const Index* records,
                                        Index count, double* const* out) const {
  const auto p = static_cast<Eigen::Index>(features_);
  double s1[kGroup], s0[kGroup];
  dense_coefficients(x, &x_prev, data, records, count, s1, s0);
  for (Index j = 0; j < count; ++j) {
    const Eigen::Map<const Vec> a(data.dense_row(records[j]), p);
    Eigen::Map<Vec>(out[j], p).noalias() = s1[j] * a - s0[j] * a;
    if (intercept_) out[j][p] = s1[j] - s0[j];
  }
}

// s1[j] = phi'(<a_j, x>) and, when x_prev is given, s0[j] = phi'(<a_j, x_prev>)
// for count <= kGroup dense records a_j. The margins run side by side in
// Eigen's order (wide or eigen_order), or else through row_dot itself.
void MarginModel::dense_coefficients(const Vec& x, const Vec* x_prev, const Dataset& data, const Index* records,
                                     Index count, double* s1, double* s0, wide::LinePrefetch* prefetch) const {
  const Index per = x_prev != nullptr ? 2 : 1;  // margins per record
  const double* rows[2 * kGroup];
  const double* points[2 * kGroup];
  Index of[2 * kGroup];
  double z[2 * kGroup];
  for (Index j = 0; j < count; ++j) {
    for (Index k = 0; k < per; ++k) {
      rows[per * j + k] = data.dense_row(records[j]);
      points[per * j + k] = k == 0 ? x.data() : x_prev->data();
      of[per * j + k] = records[j];
    }
  }
  const Index margins = per * count;
  if (wide::enabled()) {
    wide::dots(rows, points, margins, features_, z, prefetch);
  } else if (eigen_order::verified()) {
    eigen_order::dots(rows, points, margins, features_, z);
  } else {
    for (Index m = 0; m < margins; ++m) {
      z[m] = data.row_dot(of[m], Eigen::Map<const Vec>(points[m], static_cast<Eigen::Index>(features_)));
    }
  }
  if (intercept_)
    for (Index m = 0; m < margins; ++m) z[m] += points[m][features_];  // margin(): the dot, then the bias
  double labels[kGroup];
  for (Index j = 0; j < count; ++j) labels[j] = data.label(records[j]);
  coefficients(z, labels, count, per, s1, s0);
}

ClippedSum MarginModel::clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx,
                                             double clip) const {
  return gradient_sum_from(x, data, idx, clip, nullptr);
}

ClippedSum MarginModel::chained_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                             const SumStart& start) const {
  return gradient_sum_from(x, data, idx, clip, &start);
}

ClippedSum MarginModel::clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                               const IndexList& idx, double clip) const {
  return difference_sum_from(x, x_prev, data, idx, clip, nullptr);
}

ClippedSum MarginModel::chained_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                               const IndexList& idx, double clip, const SumStart& start) const {
  return difference_sum_from(x, x_prev, data, idx, clip, &start);
}

ClippedSum MarginModel::gradient_sum_from(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                          const SumStart* start) const {
  check_point(*this, x, "clipped_gradient_sum");
  check_feature_count(*this, data);
  // With an intercept a row is not a multiple of its record: rows written out.
  if (!intercept_ && !data.is_sparse() && wide::enabled()) {
    // Each row is phi'(z) a: kept as (record, phi'(z)), never written out.
    return clipped_scaled_record_sum(
        2 * kMarginKernel, data, idx, features_, clip, false,
        [this, &x, &data] {
          return
              [this, &x, &data](const Index* records, Index count, double* s1, double*, wide::LinePrefetch* prefetch) {
                dense_coefficients(x, nullptr, data, records, count, s1, nullptr, prefetch);
              };
        },
        start);
  }
  return clipped_row_sum(
      2 * kMarginKernel, data, idx, dim(), clip,
      [this, &x, &data] {
        return [this, &x, &data](const Index* records, Index count, double* const* out) {
          fused_rows(x, data, records, count, out);
        };
      },
      start);
}

ClippedSum MarginModel::difference_sum_from(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                            double clip, const SumStart* start) const {
  check_point(*this, x, "clipped_difference_sum");
  check_point(*this, x_prev, "clipped_difference_sum");
  check_feature_count(*this, data);
  if (!intercept_ && !data.is_sparse() && wide::enabled()) {
    // Each row is phi'(z) a - phi'(z_prev) a: kept as (record, both), never written out.
    return clipped_scaled_record_sum(
        2 * kMarginKernel + 1, data, idx, features_, clip, true,
        [this, &x, &x_prev, &data] {
          return [this, &x, &x_prev, &data](const Index* records, Index count, double* s1, double* s0,
                                            wide::LinePrefetch* prefetch) {
            dense_coefficients(x, &x_prev, data, records, count, s1, s0, prefetch);
          };
        },
        start);
  }
  if (data.is_sparse()) {  // gradient()'s kernel at both points (CSR rows are short)
    return clipped_difference_rows(
        2 * kMarginKernel + 1, data, idx, dim(), x, x_prev, clip,
        [this, &data] {
          return [this, &data](const Vec& at, Index i, Eigen::Map<Vec> out) { gradient_kernel(at, data, i, out); };
        },
        start);
  }
  return clipped_row_sum(
      2 * kMarginKernel + 1, data, idx, dim(), clip,
      [this, &x, &x_prev, &data] {
        return [this, &x, &x_prev, &data](const Index* records, Index count, double* const* out) {
          fused_difference_rows(x, x_prev, data, records, count, out);
        };
      },
      start);
}

}  // namespace detail
}  // namespace dpsosp
