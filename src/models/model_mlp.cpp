// One-hidden-layer tanh network with a softmax output and cross-entropy loss.
//   x = [W1 (h x p, row-major) | b1 (h) | W2 (K x h, row-major) | b2 (K)]
//   forward:  s = W1 a + b1, t = tanh(s), l = W2 t + b2, f = logsumexp(l) - l_y
//   backward: g2 = softmax(l) - e_y, gt = W2^T g2, g1 = gt ⊙ (1 - t^2)
//             grad W2 = g2 t^T, grad b2 = g2, grad W1 = g1 a^T, grad b1 = g1
//   hvp: Pearlmutter's R-operator, i.e. the directional derivative of the
//   backward pass along v = [V1 | c1 | V2 | c2] (forward-over-reverse by hand):
//             Rs = V1 a + c1, Rt = (1 - t^2) ⊙ Rs, Rl = V2 t + W2 Rt + c2
//             Rg2 = pi ⊙ Rl - pi <pi, Rl>
//             R grad W2 = Rg2 t^T + g2 Rt^T, R grad b2 = Rg2
//             Rgt = V2^T g2 + W2^T Rg2, Rg1 = Rgt ⊙ (1 - t^2) - 2 gt ⊙ t ⊙ Rt
//             R grad W1 = Rg1 a^T, R grad b1 = Rg1
// The small layers use explicit dot / axpy loops rather than Eigen's GEMV so
// that every number is computed by the same operations in gradient() and in
// batch_gradients() (their results must agree bit for bit).
#include <cmath>

#include "models/model_internal.hpp"
#include "models/row_kernel_model.hpp"

namespace dpsosp {
namespace detail {
namespace {

class MlpModel final : public RowKernelModel<MlpModel, kMlpKernel> {
 public:
  MlpModel(Index features, Index hidden, Index classes)
      : p_(static_cast<Eigen::Index>(features)),
        h_(static_cast<Eigen::Index>(hidden)),
        k_(static_cast<Eigen::Index>(classes)),
        off_b1_(h_ * p_),
        off_w2_(off_b1_ + h_),
        off_b2_(off_w2_ + k_ * h_),
        dim_(off_b2_ + k_) {}

  std::string name() const override { return "mlp"; }
  Index dim() const override { return static_cast<Index>(dim_); }
  Index classes() const override { return static_cast<Index>(k_); }
  ModelOptions options() const override {
    ModelOptions o;
    o.classes = static_cast<Index>(k_);
    o.hidden = static_cast<Index>(h_);
    return o;
  }
  double predict(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "predict");
    Work w(h_, k_);
    forward(x, data, i, w);
    Eigen::Index best = 0;
    w.out.maxCoeff(&best);
    return static_cast<double>(best);
  }
  void class_probabilities(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "class_probabilities");
    Work w(h_, k_);
    forward(x, data, i, w);
    softmax_in_place(w.out);
    out = w.out;
  }
  Index features() const override { return static_cast<Index>(p_); }
  void validate(const Dataset& data) const override { check(data, nullptr); }
  void validate_rows(const Dataset& data, const IndexList& rows) const override { check(data, &rows); }

  double loss(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "loss");
    const Index y = class_label(*this, data, i, static_cast<Index>(k_));
    Work w(h_, k_);
    forward(x, data, i, w);
    return cross_entropy(w.out, y);
  }

  std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "correct");
    const Index y = class_label(*this, data, i, static_cast<Index>(k_));
    Work w(h_, k_);
    forward(x, data, i, w);
    Eigen::Index best = 0;
    w.out.maxCoeff(&best);
    return static_cast<Index>(best) == y;
  }

  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "gradient");
    Work w(h_, k_);
    gradient_kernel(x, data, i, w, out);
  }

  /// Forward and backward passes over the batch with one workspace; each row
  /// goes through gradient()'s kernel, hence bit-identical rows.
  void batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const override {
    check_point(*this, x, "batch_gradients");
    out.resize(static_cast<Eigen::Index>(idx.size()), dim_);
    Work w(h_, k_);
    for (std::size_t k = 0; k < idx.size(); ++k) {
      gradient_kernel(x, data, idx[k], w, Eigen::Map<Vec>(out.row(static_cast<Eigen::Index>(k)).data(), dim_));
    }
  }

  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "hvp");
    check_direction(*this, v);
    const Index y = class_label(*this, data, i, static_cast<Index>(k_));
    Work w(h_, k_);
    forward(x, data, i, w);
    softmax_in_place(w.out);  // pi
    Vec& pi = w.out;
    Vec g2 = pi;
    g2[static_cast<Eigen::Index>(y)] -= 1.0;

    // R-forward.
    Vec rt(h_);
    row_dots(data, i, v.data(), static_cast<Index>(p_), static_cast<Index>(p_), static_cast<Index>(h_),
             rt.data());  // V1 a
    for (Eigen::Index j = 0; j < h_; ++j) {
      const double rs = rt[j] + v[off_b1_ + j];
      rt[j] = (1.0 - w.t[j] * w.t[j]) * rs;
    }
    Vec rl(k_);
    for (Eigen::Index k = 0; k < k_; ++k) {
      rl[k] = w2_row(v, k).dot(w.t) + w2_row(x, k).dot(rt) + v[off_b2_ + k];
    }
    const double mean_rl = pi.dot(rl);
    Vec rg2(k_);
    for (Eigen::Index k = 0; k < k_; ++k) rg2[k] = pi[k] * (rl[k] - mean_rl);

    // R-backward, output layer.
    for (Eigen::Index k = 0; k < k_; ++k) {
      auto row = out.segment(off_w2_ + k * h_, h_);
      row = rg2[k] * w.t + g2[k] * rt;
      out[off_b2_ + k] = rg2[k];
    }
    // Hidden layer: gt = W2^T g2 and its R-derivative Rgt = V2^T g2 + W2^T Rg2.
    Vec gt = Vec::Zero(h_);
    Vec rgt = Vec::Zero(h_);
    for (Eigen::Index k = 0; k < k_; ++k) {
      gt += g2[k] * w2_row(x, k);
      rgt += g2[k] * w2_row(v, k) + rg2[k] * w2_row(x, k);
    }
    out.head(off_w2_).setZero();
    for (Eigen::Index j = 0; j < h_; ++j) {
      const double t = w.t[j];
      const double rg1 = rgt[j] * (1.0 - t * t) - 2.0 * gt[j] * t * rt[j];
      out[off_b1_ + j] = rg1;
      data.row_axpy(i, rg1, out.segment(j * p_, p_));
    }
  }

 private:
  void check(const Dataset& data, const IndexList* rows) const {
    check_feature_count(*this, data);
    check_has_labels(*this, data, rows);
    check_labels_class(*this, data, static_cast<Index>(k_), rows);
  }
  // Scratch of one forward / backward pass.
  struct Work {
    Work(Eigen::Index hidden, Eigen::Index classes) : t(hidden), out(classes), back(hidden) {}
    Vec t;     // tanh(W1 a + b1)
    Vec out;   // logits, then probabilities, then g2
    Vec back;  // W2^T g2
  };

  Eigen::Map<const Vec> w1_row(const Vec& x, Eigen::Index j) const {
    return Eigen::Map<const Vec>(x.data() + j * p_, p_);
  }
  Eigen::Map<const Vec> w2_row(const Vec& x, Eigen::Index k) const {
    return Eigen::Map<const Vec>(x.data() + off_w2_ + k * h_, h_);
  }

  // w.t = hidden activations, w.out = logits.
  void forward(const Vec& x, const Dataset& data, Index i, Work& w) const {
    row_dots(data, i, x.data(), static_cast<Index>(p_), static_cast<Index>(p_), static_cast<Index>(h_),
             w.t.data());  // W1 a
    for (Eigen::Index j = 0; j < h_; ++j) w.t[j] = std::tanh(w.t[j] + x[off_b1_ + j]);
    for (Eigen::Index k = 0; k < k_; ++k) w.out[k] = w2_row(x, k).dot(w.t) + x[off_b2_ + k];
  }

  // gradient()'s kernel; RowKernelModel runs it on the fused engine's rows.
  friend class RowKernelModel<MlpModel, kMlpKernel>;
  Work make_scratch() const { return Work(h_, k_); }
  void gradient_kernel(const Vec& x, const Dataset& data, Index i, Work& w, Eigen::Ref<Vec> out) const {
    const Index y = class_label(*this, data, i, static_cast<Index>(k_));
    forward(x, data, i, w);
    softmax_in_place(w.out);
    w.out[static_cast<Eigen::Index>(y)] -= 1.0;  // g2
    for (Eigen::Index k = 0; k < k_; ++k) {
      out.segment(off_w2_ + k * h_, h_) = w.out[k] * w.t;
      out[off_b2_ + k] = w.out[k];
    }
    w.back.setZero();
    for (Eigen::Index k = 0; k < k_; ++k) w.back += w.out[k] * w2_row(x, k);
    out.head(off_w2_).setZero();
    for (Eigen::Index j = 0; j < h_; ++j) {
      const double g1 = w.back[j] * (1.0 - w.t[j] * w.t[j]);
      out[off_b1_ + j] = g1;
      data.row_axpy(i, g1, out.segment(j * p_, p_));
    }
  }

  Eigen::Index p_, h_, k_;
  Eigen::Index off_b1_, off_w2_, off_b2_, dim_;
};

}  // namespace

ModelInfo mlp_row() {
  ModelInfo r;
  r.name = "mlp";
  r.summary = "one hidden tanh layer, softmax output (cross-entropy), labels 0 .. K-1";
  r.classifier = r.scales_by_default = r.reads_hidden = true;
  r.no_intercept = "has biases of its own";
  r.parameters = [](Index features, const ModelOptions& o, Index classes) {
    const double h = static_cast<double>(o.hidden), k = static_cast<double>(classes);
    return h * static_cast<double>(features) + h + k * h + k;
  };
  r.make = [](Index features, const ModelOptions& o, Index classes) -> std::unique_ptr<Model> {
    return std::make_unique<MlpModel>(features, o.hidden, classes);
  };
  return r;
}

}  // namespace detail
}  // namespace dpsosp
