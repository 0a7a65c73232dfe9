// Margin models: the loss depends on x only through z = <a_i, x>.
//   logistic         f = log(1 + exp(-y z)),        y in {-1, +1}
//   sigmoid          f = 1 / (1 + exp(y z)),        y in {-1, +1}
//   cauchy           f = log(1 + (z - y)^2 / 2),    y real
//   phase-retrieval  f = (z^2 - y)^2 / 4,           y real
//   linear           f = huber(z - y),              y real (r^2/2 for |r| <= 1, |r| - 1/2 beyond)
// With phi(z) the scalar loss, grad = phi'(z) a_i and hess v = phi''(z) <a_i, v> a_i,
// so every product costs O(nnz(a_i)) and no d x d matrix is ever formed
// (MarginModel's shared members: margin_model.cpp).
#include <algorithm>
#include <cmath>

#include "engine/clipped_sum.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {
namespace detail {
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
  void coefficients(const double* z, const double* labels, Index count, Index per, double* s1, double* s0) const final {
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

namespace {

template <class M>
ModelInfo margin_row(std::string name, std::string summary) {
  ModelInfo r;
  r.name = std::move(name);
  r.summary = std::move(summary);
  r.parameters = [](Index features, const ModelOptions& o, Index) {
    return static_cast<double>(features) + (o.fit_intercept ? 1 : 0);
  };
  r.make = [](Index features, const ModelOptions& o, Index) -> std::unique_ptr<Model> {
    return std::make_unique<M>(features, o.fit_intercept);
  };
  return r;
}

}  // namespace

std::vector<ModelInfo> margin_model_rows() {
  ModelInfo logistic = margin_row<LogisticModel>("logistic", "log(1 + exp(-y z)), labels 0/1 or -1/+1");
  ModelInfo sigmoid = margin_row<SigmoidLossModel>("sigmoid", "1 / (1 + exp(y z)) (non-convex), labels 0/1 or -1/+1");
  for (ModelInfo* m : {&logistic, &sigmoid}) m->binary = m->intercept_by_default = m->scales_by_default = true;
  ModelInfo cauchy = margin_row<CauchyModel>("cauchy", "log(1 + (z - y)^2 / 2) (robust, non-convex), real y");
  ModelInfo linear = margin_row<LinearModel>("linear", "Huber(z - y) (least squares within 1), real y");
  for (ModelInfo* m : {&cauchy, &linear}) m->regression = m->intercept_by_default = m->scales_by_default = true;
  ModelInfo phase = margin_row<PhaseRetrievalModel>("phase-retrieval", "(z^2 - y)^2 / 4 (strict saddles), real y");
  return {logistic, sigmoid, cauchy, phase, linear};
}

}  // namespace detail
}  // namespace dpsosp
