// Margin models: the loss depends on x only through z = <a_i, x>.
//   logistic         f = log(1 + exp(-y z)),        y in {-1, +1}
//   sigmoid          f = 1 / (1 + exp(y z)),        y in {-1, +1}
//   cauchy           f = log(1 + (z - y)^2 / 2),    y real
//   phase-retrieval  f = (z^2 - y)^2 / 4,           y real
//   linear           f = huber(z - y),              y real (r^2/2 for |r| <= 1, |r| - 1/2 beyond)
// With phi(z) the scalar loss, grad = phi'(z) a_i and hess v = phi''(z) <a_i, v> a_i,
// so every product costs O(nnz(a_i)) and no d x d matrix is ever formed.
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

void MarginModel::batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx,
                                  RowMatrix& out) const {
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
    return clipped_scaled_record_sum(2 * kMarginKernel, data, idx, features_, clip, false, [this, &x, &data] {
      return [this, &x, &data](const Index* records, Index count, double* s1, double*,
                               wide::LinePrefetch* prefetch) {
        dense_coefficients(x, nullptr, data, records, count, s1, nullptr, prefetch);
      };
    }, start);
  }
  return clipped_row_sum(2 * kMarginKernel, data, idx, dim(), clip, [this, &x, &data] {
    return [this, &x, &data](const Index* records, Index count, double* const* out) {
      fused_rows(x, data, records, count, out);
    };
  }, start);
}

ClippedSum MarginModel::difference_sum_from(const Vec& x, const Vec& x_prev, const Dataset& data,
                                            const IndexList& idx, double clip, const SumStart* start) const {
  check_point(*this, x, "clipped_difference_sum");
  check_point(*this, x_prev, "clipped_difference_sum");
  check_feature_count(*this, data);
  if (!intercept_ && !data.is_sparse() && wide::enabled()) {
    // Each row is phi'(z) a - phi'(z_prev) a: kept as (record, both), never written out.
    return clipped_scaled_record_sum(2 * kMarginKernel + 1, data, idx, features_, clip, true,
                                     [this, &x, &x_prev, &data] {
      return [this, &x, &x_prev, &data](const Index* records, Index count, double* s1, double* s0,
                                        wide::LinePrefetch* prefetch) {
        dense_coefficients(x, &x_prev, data, records, count, s1, s0, prefetch);
      };
    }, start);
  }
  if (data.is_sparse()) {  // gradient()'s kernel at both points (CSR rows are short)
    return clipped_difference_rows(2 * kMarginKernel + 1, data, idx, dim(), x, x_prev, clip, [this, &data] {
      return [this, &data](const Vec& at, Index i, Eigen::Map<Vec> out) { gradient_kernel(at, data, i, out); };
    }, start);
  }
  return clipped_row_sum(2 * kMarginKernel + 1, data, idx, dim(), clip, [this, &x, &x_prev, &data] {
    return [this, &x, &x_prev, &data](const Index* records, Index count, double* const* out) {
      fused_difference_rows(x, x_prev, data, records, count, out);
    };
  }, start);
}

namespace {

// Labels {0, 1, -1, +1} with 0 read as -1.
double sign_label(double label) { return label > 0 ? 1.0 : -1.0; }

// A built-in margin model D: the engine's coefficients through D's own target
// and dphi, direct (inlined) calls since D is final. D declares dphi public,
// and target comes from its kind of label below (the classes are internal to
// this file).
template <class D>
class BuiltInMarginModel : public MarginModel {
 public:
  using MarginModel::MarginModel;

 protected:
  void coefficients(const double* z, const double* labels, Index count, Index per, double* s1,
                    double* s0) const final {
    const D& model = static_cast<const D&>(*this);
    for (Index j = 0; j < count; ++j) {
      const double y = model.target(labels[j]);
      s1[j] = model.dphi(z[per * j], y);
      if (per == 2) s0[j] = model.dphi(z[per * j + 1], y);
    }
  }
};

// A classifier on labels {0, 1, -1, +1}, 0 read as -1: a record is predicted
// right when its margin has its label's sign.
template <class D>
class BinaryMarginModel : public BuiltInMarginModel<D> {
 public:
  using BuiltInMarginModel<D>::BuiltInMarginModel;
  void validate(const Dataset& data) const final { check(data, nullptr); }
  void validate_rows(const Dataset& data, const IndexList& rows) const final { check(data, &rows); }
  double target(double label) const final { return sign_label(label); }
  Index classes() const final { return 2; }
  void class_probabilities(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const final {
    check_point(*this, x, "class_probabilities");
    const double z = this->margin(x, data, i);
    out[0] = logistic_sigmoid(-z);
    out[1] = logistic_sigmoid(z);
  }

 protected:
  double predicted(double z) const final { return z > 0 ? 1.0 : 0.0; }
  std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const final {
    return sign_label(data.label(i)) * this->margin(x, data, i) > 0;
  }

 private:
  void check(const Dataset& data, const IndexList* rows) const {
    check_feature_count(*this, data);
    check_has_labels(*this, data, rows);
    check_labels_binary(*this, data, rows);
  }
};

// A regression on real labels, read as they are.
template <class D>
class RealMarginModel : public BuiltInMarginModel<D> {
 public:
  using BuiltInMarginModel<D>::BuiltInMarginModel;
  void validate(const Dataset& data) const final { check(data, nullptr); }
  void validate_rows(const Dataset& data, const IndexList& rows) const final { check(data, &rows); }
  double target(double label) const final { return label; }

 private:
  void check(const Dataset& data, const IndexList* rows) const {
    check_feature_count(*this, data);
    check_has_labels(*this, data, rows);
    check_labels_finite(*this, data, rows);
  }
};

class LogisticModel final : public BinaryMarginModel<LogisticModel> {
 public:
  using BinaryMarginModel::BinaryMarginModel;
  std::string name() const override { return "logistic"; }
  // softplus(-y z) never overflows: it branches on the sign of the exponent.
  double phi(double z, double y) const override { return softplus(-y * z); }
  // d/dz = -y sigma(-y z)
  double dphi(double z, double y) const override { return -y * logistic_sigmoid(-y * z); }
  // d2/dz2 = sigma(m) sigma(-m), each factor computed without overflow.
  double d2phi(double z, double y) const override {
    const double m = y * z;
    return logistic_sigmoid(m) * logistic_sigmoid(-m);
  }
};

class SigmoidLossModel final : public BinaryMarginModel<SigmoidLossModel> {
 public:
  using BinaryMarginModel::BinaryMarginModel;
  std::string name() const override { return "sigmoid"; }
  // f = s with s = sigma(-m), m = y z. ds/dz = -y s (1 - s) and
  // d2s/dz2 = y^2 s (1 - s) (1 - 2s); 1 - s = sigma(m) and 1 - 2s = tanh(m / 2).
  double phi(double z, double y) const override { return logistic_sigmoid(-y * z); }
  double dphi(double z, double y) const override {
    const double m = y * z;
    return -y * logistic_sigmoid(-m) * logistic_sigmoid(m);
  }
  double d2phi(double z, double y) const override {
    const double m = y * z;
    return logistic_sigmoid(-m) * logistic_sigmoid(m) * std::tanh(0.5 * m);
  }
};

class CauchyModel final : public RealMarginModel<CauchyModel> {
 public:
  using RealMarginModel::RealMarginModel;
  std::string name() const override { return "cauchy"; }
  double predicted(double z) const override { return z; }
  // f = log(1 + r^2/2), f' = 2r / (2 + r^2), f'' = 2 (2 - r^2) / (2 + r^2)^2, r = z - y.
  // For |r| > 1 the forms are rewritten in q = 1/r so that r^2 never overflows.
  double phi(double z, double y) const override {
    const double r = z - y;
    const double a = std::abs(r);
    if (a < 1e100) return std::log1p(0.5 * r * r);
    return 2.0 * std::log(a) + std::log1p(2.0 / (r * r)) - std::log(2.0);
  }
  double dphi(double z, double y) const override {
    const double r = z - y;
    if (std::abs(r) <= 1.0) return 2.0 * r / (2.0 + r * r);
    return 2.0 / (r + 2.0 / r);
  }
  double d2phi(double z, double y) const override {
    const double r = z - y;
    if (std::abs(r) <= 1.0) {
      const double s = 2.0 + r * r;
      return 2.0 * (2.0 - r * r) / (s * s);
    }
    const double q2 = 1.0 / (r * r);
    const double s = 2.0 * q2 + 1.0;
    return 2.0 * q2 * (2.0 * q2 - 1.0) / (s * s);
  }
};

// Least squares with the Huber loss at threshold 1: f = r^2 / 2 for |r| <= 1
// and |r| - 1/2 beyond, r = z - y. Its derivative clamp(r, -1, 1) is bounded,
// so a record's gradient is at most ||[a, 1]|| whatever its target: on a unit
// scale (scaling.hpp: features and target in [-1, 1]) the squared loss where
// the fit is within the target's range, and the clip rarely binds.
class LinearModel final : public RealMarginModel<LinearModel> {
 public:
  using RealMarginModel::RealMarginModel;
  std::string name() const override { return "linear"; }
  double predicted(double z) const override { return z; }
  double phi(double z, double y) const override {
    const double r = z - y;
    const double a = std::abs(r);
    return a <= 1.0 ? 0.5 * r * r : a - 0.5;
  }
  double dphi(double z, double y) const override { return std::clamp(z - y, -1.0, 1.0); }
  double d2phi(double z, double y) const override { return std::abs(z - y) <= 1.0 ? 1.0 : 0.0; }
};

class PhaseRetrievalModel final : public RealMarginModel<PhaseRetrievalModel> {
 public:
  using RealMarginModel::RealMarginModel;
  std::string name() const override { return "phase-retrieval"; }
  double predicted(double z) const override { return z * z; }
  // f = (z^2 - y)^2 / 4, f' = (z^2 - y) z, f'' = 3 z^2 - y.
  double phi(double z, double y) const override {
    const double e = z * z - y;
    return 0.25 * e * e;
  }
  double dphi(double z, double y) const override { return (z * z - y) * z; }
  double d2phi(double z, double y) const override { return 3.0 * z * z - y; }
};

}  // namespace

std::unique_ptr<Model> make_logistic(Index features, bool intercept) {
  return std::make_unique<LogisticModel>(features, intercept);
}
std::unique_ptr<Model> make_sigmoid(Index features, bool intercept) {
  return std::make_unique<SigmoidLossModel>(features, intercept);
}
std::unique_ptr<Model> make_cauchy(Index features, bool intercept) {
  return std::make_unique<CauchyModel>(features, intercept);
}
std::unique_ptr<Model> make_linear(Index features, bool intercept) {
  return std::make_unique<LinearModel>(features, intercept);
}
std::unique_ptr<Model> make_phase_retrieval(Index features, bool intercept) {
  return std::make_unique<PhaseRetrievalModel>(features, intercept);
}

}  // namespace detail
}  // namespace dpsosp
