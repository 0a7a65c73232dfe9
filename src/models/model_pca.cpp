// Matrix factorisation / streaming PCA: f(U; z) = ||U U^T - z z^T||_F^2 / 4.
//   x = vec(U), U is p x r column-major; the record z is the whole feature row.
//   With G = U^T U and w = U^T z:
//     f        = (||G||_F^2 - 2 ||w||^2 + ||z||^4) / 4
//     grad     = (U U^T - z z^T) U = U G - z w^T
//     hess V   = V G + U (V^T U + U^T V) - z (z^T V)
//   Everything is O(p r^2 + r nnz(z)); no p x p matrix is formed.
//   The model is unsupervised: validate() refuses labelled data, because a
//   label column read as a label would silently drop a coordinate of z.
#include "engine/clipped_sum.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {
namespace detail {
namespace {

using ColMatrix = Eigen::MatrixXd;

class PcaModel final : public Model {
 public:
  PcaModel(Index features, Index rank) : p_(static_cast<Eigen::Index>(features)), r_(static_cast<Eigen::Index>(rank)) {}
  std::string name() const override { return "pca"; }
  Index dim() const override { return static_cast<Index>(p_ * r_); }
  Index features() const override { return static_cast<Index>(p_); }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    if (data.has_labels()) {
      throw Error("pca: the data have labels, expected none (pca is unsupervised and reads every column "
                  "as a coordinate of z; load the data without a label column)");
    }
  }

  double loss(const Vec& x, const Dataset& data, Index i) const override {
    check_point(*this, x, "loss");
    const Eigen::Map<const ColMatrix> u(x.data(), p_, r_);
    const ColMatrix gram = u.transpose() * u;
    const double zz = data.row_squared_norm(i);
    double ww = 0.0;
    for (Eigen::Index c = 0; c < r_; ++c) {
      const double w = data.row_dot(i, u.col(c));
      ww += w * w;
    }
    return 0.25 * (gram.squaredNorm() - 2.0 * ww + zz * zz);
  }

  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "gradient");
    const Eigen::Map<const ColMatrix> u(x.data(), p_, r_);
    const ColMatrix gram = u.transpose() * u;
    gradient_kernel(u, gram, data, i, out);
  }

  /// One fused, threaded pass (src/engine/clipped_sum.hpp). G = U^T U does not depend
  /// on the record, so each kernel computes it once (by the same expression,
  /// hence the same bits) instead of once per record.
  ClippedSum clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx,
                                  double clip) const override {
    check_point(*this, x, "clipped_gradient_sum");
    return clipped_gradient_rows(2 * kOtherKernel, data, idx, dim(), x, clip, row_kernels(data));
  }
  ClippedSum clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip) const override {
    check_point(*this, x, "clipped_difference_sum");
    check_point(*this, x_prev, "clipped_difference_sum");
    return clipped_difference_rows(2 * kOtherKernel + 1, data, idx, dim(), x, x_prev, clip, row_kernels(data));
  }

  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    check_point(*this, x, "hvp");
    check_direction(*this, v);
    const Eigen::Map<const ColMatrix> u(x.data(), p_, r_);
    const Eigen::Map<const ColMatrix> dir(v.data(), p_, r_);
    Eigen::Map<ColMatrix> h(out.data(), p_, r_);
    const ColMatrix gram = u.transpose() * u;
    const ColMatrix cross = dir.transpose() * u;  // V^T U
    const ColMatrix sym = cross + cross.transpose();
    h.noalias() = dir * gram;
    h.noalias() += u * sym;
    for (Eigen::Index c = 0; c < r_; ++c) data.row_axpy(i, -data.row_dot(i, dir.col(c)), h.col(c));
  }

 private:
  // out = U G - z (U^T z)^T, G = U^T U given.
  void gradient_kernel(const Eigen::Map<const ColMatrix>& u, const ColMatrix& gram, const Dataset& data, Index i,
                       Eigen::Ref<Vec> out) const {
    Eigen::Map<ColMatrix> g(out.data(), p_, r_);
    g.noalias() = u * gram;
    for (Eigen::Index c = 0; c < r_; ++c) data.row_axpy(i, -data.row_dot(i, u.col(c)), g.col(c));
  }

  // Per-thread row kernels: the Gram matrix of each point seen, kept for the
  // kernel's rows (an O2 kernel sees two points, x and x_prev, alternately).
  struct RowKernel {
    const PcaModel* model;
    const Dataset* data;
    const double* point[2] = {nullptr, nullptr};
    ColMatrix gram[2];
    void operator()(const Vec& at, Index i, Eigen::Map<Vec> out) {
      const Eigen::Map<const ColMatrix> u(at.data(), model->p_, model->r_);
      int slot = point[0] == at.data() ? 0 : (point[1] == at.data() ? 1 : -1);
      if (slot < 0) {
        slot = point[0] == nullptr ? 0 : 1;
        point[slot] = at.data();
        gram[slot] = u.transpose() * u;
      }
      model->gradient_kernel(u, gram[slot], *data, i, out);
    }
  };
  struct RowKernels {
    const PcaModel* model;
    const Dataset* data;
    RowKernel operator()() const { return RowKernel{model, data, {nullptr, nullptr}, {}}; }
  };
  RowKernels row_kernels(const Dataset& data) const { return RowKernels{this, &data}; }

  Eigen::Index p_;
  Eigen::Index r_;
};

}  // namespace

std::unique_ptr<Model> make_pca(Index features, Index rank) { return std::make_unique<PcaModel>(features, rank); }

}  // namespace detail
}  // namespace dpsosp
