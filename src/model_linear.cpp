// Margin models: the loss depends on x only through z = <a_i, x>.
//   logistic         f = log(1 + exp(-y z)),        y in {-1, +1}
//   sigmoid          f = 1 / (1 + exp(y z)),        y in {-1, +1}
//   cauchy           f = log(1 + (z - y)^2 / 2),    y real
//   phase-retrieval  f = (z^2 - y)^2 / 4,           y real
// With phi(z) the scalar loss, grad = phi'(z) a_i and hess v = phi''(z) <a_i, v> a_i,
// so every product costs O(nnz(a_i)) and no d x d matrix is ever formed.
#include <cmath>

#include "model_internal.hpp"

namespace dpsosp {
namespace detail {

double MarginModel::loss(const Vec& x, const Dataset& data, Index i) const {
  check_point(*this, x, "loss");
  return phi(data.row_dot(i, x), target(data.label(i)));
}

void MarginModel::gradient_kernel(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const {
  const double z = data.row_dot(i, x);
  out.setZero();
  data.row_axpy(i, dphi(z, target(data.label(i))), out);
}

void MarginModel::gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const {
  check_point(*this, x, "gradient");
  gradient_kernel(x, data, i, out);
}

void MarginModel::hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const {
  check_point(*this, x, "hvp");
  check_direction(*this, v);
  const double z = data.row_dot(i, x);
  const double curvature = d2phi(z, target(data.label(i)));
  out.setZero();
  data.row_axpy(i, curvature * data.row_dot(i, v), out);
}

void MarginModel::batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx,
                                  RowMatrix& out) const {
  check_point(*this, x, "batch_gradients");
  const Eigen::Index d = static_cast<Eigen::Index>(features_);
  out.resize(static_cast<Eigen::Index>(idx.size()), d);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    gradient_kernel(x, data, idx[k], Eigen::Map<Vec>(out.row(static_cast<Eigen::Index>(k)).data(), d));
  }
}

namespace {

// Labels {0, 1, -1, +1} with 0 read as -1.
double sign_label(double label) { return label > 0 ? 1.0 : -1.0; }

class LogisticModel final : public MarginModel {
 public:
  using MarginModel::MarginModel;
  std::string name() const override { return "logistic"; }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    check_has_labels(*this, data);
    check_labels_binary(*this, data);
  }

 protected:
  std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const override {
    return sign_label(data.label(i)) * data.row_dot(i, x) > 0;
  }
  double target(double label) const override { return sign_label(label); }
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

class SigmoidLossModel final : public MarginModel {
 public:
  using MarginModel::MarginModel;
  std::string name() const override { return "sigmoid"; }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    check_has_labels(*this, data);
    check_labels_binary(*this, data);
  }

 protected:
  std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const override {
    return sign_label(data.label(i)) * data.row_dot(i, x) > 0;
  }
  double target(double label) const override { return sign_label(label); }
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

class CauchyModel final : public MarginModel {
 public:
  using MarginModel::MarginModel;
  std::string name() const override { return "cauchy"; }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    check_has_labels(*this, data);
    check_labels_finite(*this, data);
  }

 protected:
  double target(double label) const override { return label; }
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

class PhaseRetrievalModel final : public MarginModel {
 public:
  using MarginModel::MarginModel;
  std::string name() const override { return "phase-retrieval"; }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    check_has_labels(*this, data);
    check_labels_finite(*this, data);
  }

 protected:
  double target(double label) const override { return label; }
  // f = (z^2 - y)^2 / 4, f' = (z^2 - y) z, f'' = 3 z^2 - y.
  double phi(double z, double y) const override {
    const double e = z * z - y;
    return 0.25 * e * e;
  }
  double dphi(double z, double y) const override { return (z * z - y) * z; }
  double d2phi(double z, double y) const override { return 3.0 * z * z - y; }
};

}  // namespace

std::unique_ptr<Model> make_logistic(Index features) { return std::make_unique<LogisticModel>(features); }
std::unique_ptr<Model> make_sigmoid(Index features) { return std::make_unique<SigmoidLossModel>(features); }
std::unique_ptr<Model> make_cauchy(Index features) { return std::make_unique<CauchyModel>(features); }
std::unique_ptr<Model> make_phase_retrieval(Index features) {
  return std::make_unique<PhaseRetrievalModel>(features);
}

}  // namespace detail
}  // namespace dpsosp
