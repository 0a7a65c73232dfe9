// Multiclass softmax regression.
//   x = vec(W), W is K x p stored row-major: x[k*p + j] = W_kj.
//   logits l = W a, pi = softmax(l), f = logsumexp(l) - l_y.
//   grad W_k = (pi_k - [k = y]) a.
//   The Hessian in the logits is diag(pi) - pi pi^T, so for a direction V
//   (K x p, same layout) with u = V a: hess v rows = (pi ⊙ u - pi <pi, u>)_k a.
//   With an intercept x = [vec(W), c]: l = W a + c, the record read as [a, 1]
//   in each row, so grad c_k = pi_k - [k = y] and hess v in c is the row's
//   coefficient.
#include <memory>

#include "models/hessian_internal.hpp"
#include "models/model_internal.hpp"
#include "models/row_kernel_model.hpp"

namespace dpsosp {
namespace detail {
namespace {

class SoftmaxModel final : public RowKernelModel<SoftmaxModel, kSoftmaxKernel> {
 public:
  SoftmaxModel(Index features, Index classes, bool intercept)
      : features_(features), classes_(classes), intercept_(intercept) {}
  std::string name() const override { return "softmax"; }
  Index dim() const override { return (features_ + (intercept_ ? 1 : 0)) * classes_; }
  Index features() const override { return features_; }
  Index classes() const override { return classes_; }
  ModelOptions options() const override {
    ModelOptions o;
    o.classes = classes_;
    o.fit_intercept = intercept_;
    return o;
  }
  double predict(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "predict");
    Vec logits(static_cast<Eigen::Index>(classes_));
    compute_logits(x, data, i, logits);
    Eigen::Index best = 0;
    logits.maxCoeff(&best);
    return static_cast<double>(best);
  }
  void class_probabilities(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "class_probabilities");
    compute_logits(x, data, i, out);
    softmax_in_place(out);
  }
  void validate(const Dataset& data) const override { check(data, nullptr); }
  void validate_rows(const Dataset& data, const IndexList& rows) const override { check(data, &rows); }

  double loss(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "loss");
    const Index y = class_label(*this, data, i, classes_);
    Vec logits(static_cast<Eigen::Index>(classes_));
    compute_logits(x, data, i, logits);
    return cross_entropy(logits, y);
  }

  std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const override {
    const Index y = class_label(*this, data, i, classes_);
    Vec logits(static_cast<Eigen::Index>(classes_));
    compute_logits(x, data, i, logits);
    Eigen::Index best = 0;
    logits.maxCoeff(&best);
    return static_cast<Index>(best) == y;
  }

  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "gradient");
    Vec work(static_cast<Eigen::Index>(classes_));
    gradient_kernel(x, data, i, work, out);
  }

  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "hvp");
    check_direction(*this, v);
    Vec pi(static_cast<Eigen::Index>(classes_));
    compute_logits(x, data, i, pi);
    softmax_in_place(pi);
    Vec u(static_cast<Eigen::Index>(classes_));
    row_dots(data, i, v.data(), features_, features_, classes_, u.data());
    if (intercept_) u += v.tail(static_cast<Eigen::Index>(classes_));
    const double mean_u = pi.dot(u);
    out.setZero();
    for (Index k = 0; k < classes_; ++k) {
      const Eigen::Index kk = static_cast<Eigen::Index>(k);
      data.row_axpy(i, pi[kk] * (u[kk] - mean_u), block(out, k));
      if (intercept_) out[bias_at(k)] += pi[kk] * (u[kk] - mean_u);
    }
  }

  /// Dense data: the probabilities at x kept (m x K); a product is then
  /// U = A V^T (+ c), R = P ⊙ (U - rowsum(P ⊙ U)), H v = R^T A / m (rows of W), R's column sums (biases).
  HvpFunction mean_hessian(const Vec& x, const Dataset& data, const IndexList& idx) const override {
    // Weighted records (Dataset::weight): the default form, which weighs each record's product.
    if (data.is_sparse() || idx.empty() || data.has_weights()) return Model::mean_hessian(x, data, idx);
    check_point(*this, x, "mean_hessian");
    check_feature_count(*this, data);
    auto block = std::make_shared<const RecordBlock>(data, idx);
    auto pi = std::make_shared<RowMatrix>(static_cast<Eigen::Index>(idx.size()), static_cast<Eigen::Index>(classes_));
    for (Index k = 0; k < idx.size(); ++k) {
      Eigen::Map<Vec> row(pi->row(static_cast<Eigen::Index>(k)).data(), static_cast<Eigen::Index>(classes_));
      compute_logits(x, data, idx[k], row);
      softmax_in_place(row);
    }
    const auto p = static_cast<Eigen::Index>(features_), K = static_cast<Eigen::Index>(classes_);
    return [this, block, pi, p, K](const Vec& v, Vec& out) {
      check_direction(*this, v);
      const Eigen::Map<const RowMatrix> w(v.data(), K, p);
      const Vec sum = chunked_sum(block->size(), dim(), [&](Index begin, Index end, Eigen::Ref<Vec> part) {
        const auto a = block->rows(begin, end);
        const auto probabilities = pi->middleRows(static_cast<Eigen::Index>(begin), a.rows());
        RowMatrix r = a * w.transpose();
        if (intercept_) r.rowwise() += v.tail(K).transpose();
        const Vec mean = probabilities.cwiseProduct(r).rowwise().sum();
        r = probabilities.cwiseProduct(r.colwise() - mean);
        Eigen::Map<RowMatrix>(part.data(), K, p).noalias() = r.transpose() * a;
        if (intercept_) part.tail(K) = r.colwise().sum().transpose();
      });
      out = sum / static_cast<double>(block->size());
    };
  }

  /// Reuses one scratch vector over the batch; each row is computed by the
  /// same kernel as gradient(), so the two agree bit for bit.
  void batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const override {
    check_point(*this, x, "batch_gradients");
    const Eigen::Index d = static_cast<Eigen::Index>(dim());
    out.resize(static_cast<Eigen::Index>(idx.size()), d);
    Vec work(static_cast<Eigen::Index>(classes_));
    for (std::size_t k = 0; k < idx.size(); ++k) {
      gradient_kernel(x, data, idx[k], work, Eigen::Map<Vec>(out.row(static_cast<Eigen::Index>(k)).data(), d));
    }
  }

 private:
  void check(const Dataset& data, const IndexList* rows) const {
    check_feature_count(*this, data);
    check_has_labels(*this, data, rows);
    check_labels_class(*this, data, classes_, rows);
  }
  // Row k of W (or of a direction / gradient laid out like W).
  Eigen::Map<const Vec> block(const Vec& w, Index k) const {
    return Eigen::Map<const Vec>(w.data() + k * features_, static_cast<Eigen::Index>(features_));
  }
  Eigen::Map<Vec> block(Eigen::Ref<Vec> w, Index k) const {
    return Eigen::Map<Vec>(w.data() + k * features_, static_cast<Eigen::Index>(features_));
  }

  // Where the bias of class k sits in x (after the K x p weights).
  Eigen::Index bias_at(Index k) const { return static_cast<Eigen::Index>(classes_ * features_ + k); }

  void compute_logits(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> logits) const {
    row_dots(data, i, x.data(), features_, features_, classes_, logits.data());
    if (intercept_)
      for (Index k = 0; k < classes_; ++k) logits[static_cast<Eigen::Index>(k)] += x[bias_at(k)];
  }

  // gradient()'s kernel; RowKernelModel runs it on the fused engine's rows.
  friend class RowKernelModel<SoftmaxModel, kSoftmaxKernel>;
  Vec make_scratch() const { return Vec(static_cast<Eigen::Index>(classes_)); }
  void gradient_kernel(const Vec& x, const Dataset& data, Index i, Vec& work, Eigen::Ref<Vec> out) const {
    const Index y = class_label(*this, data, i, classes_);
    compute_logits(x, data, i, work);
    softmax_in_place(work);
    work[static_cast<Eigen::Index>(y)] -= 1.0;
    out.setZero();
    for (Index k = 0; k < classes_; ++k) {
      data.row_axpy(i, work[static_cast<Eigen::Index>(k)], block(out, k));
      if (intercept_) out[bias_at(k)] += work[static_cast<Eigen::Index>(k)];
    }
  }

  Index features_;
  Index classes_;
  bool intercept_;
};

}  // namespace

ModelInfo softmax_row() {
  ModelInfo r;
  r.name = "softmax";
  r.summary = "multinomial logistic regression (cross-entropy), labels 0 .. K-1";
  r.classifier = r.intercept_by_default = r.scales_by_default = true;
  r.parameters = [](Index features, const ModelOptions& o, Index classes) {
    return static_cast<double>(classes) * (static_cast<double>(features) + (o.fit_intercept ? 1 : 0));
  };
  r.make = [](Index features, const ModelOptions& o, Index classes) -> std::unique_ptr<Model> {
    return std::make_unique<SoftmaxModel>(features, classes, o.fit_intercept);
  };
  return r;
}

}  // namespace detail
}  // namespace dpsosp
