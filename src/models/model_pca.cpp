// Matrix factorisation / streaming PCA: f(U; z) = ||U U^T - z z^T||_F^2 / 4.
//   x = vec(U), U is p x r column-major; the record z is the whole feature row.
//   With G = U^T U and w = U^T z:
//     f        = (||G||_F^2 - 2 ||w||^2 + ||z||^4) / 4
//     grad     = (U U^T - z z^T) U = U G - z w^T
//     hess V   = V G + U (V^T U + U^T V) - z (z^T V)
//   Everything is O(p r^2 + r nnz(z)); no p x p matrix is formed.
//   The model is unsupervised: validate() refuses labelled data, because a
//   label column read as a label would silently drop a coordinate of z.
#include "models/model_internal.hpp"
#include "models/row_kernel_model.hpp"

namespace dpsosp {
namespace detail {
namespace {

using ColMatrix = Eigen::MatrixXd;

class PcaModel final : public RowKernelModel<PcaModel, kOtherKernel> {
 public:
  PcaModel(Index features, Index rank) : p_(static_cast<Eigen::Index>(features)), r_(static_cast<Eigen::Index>(rank)) {}
  std::string name() const override { return "pca"; }
  ModelOptions options() const override {
    ModelOptions o;
    o.rank = static_cast<Index>(r_);
    return o;
  }
  Index dim() const override { return static_cast<Index>(p_ * r_); }
  Index features() const override { return static_cast<Index>(p_); }
  // Labels are the dataset's, not a record's: the rows change nothing.
  void validate_rows(const Dataset& data, const IndexList&) const override { validate(data); }
  void validate(const Dataset& data) const override {
    check_feature_count(*this, data);
    if (data.has_labels()) {
      throw Error(
          "pca: the data have labels, expected none (pca is unsupervised and reads every column "
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

  // The fused engine's kernel (RowKernelModel): G = U^T U does not depend on
  // the record, so a thread computes it once per point (by the same
  // expression, hence the same bits) instead of once per record, and keeps it
  // for the point's rows (an O2 kernel sees two points, x and x_prev,
  // alternately).
  friend class RowKernelModel<PcaModel, kOtherKernel>;
  struct GramCache {
    const double* point[2] = {nullptr, nullptr};
    ColMatrix gram[2];
  };
  GramCache make_scratch() const { return GramCache{}; }
  void gradient_kernel(const Vec& at, const Dataset& data, Index i, GramCache& cache, Eigen::Ref<Vec> out) const {
    const Eigen::Map<const ColMatrix> u(at.data(), p_, r_);
    int slot = cache.point[0] == at.data() ? 0 : (cache.point[1] == at.data() ? 1 : -1);
    if (slot < 0) {
      slot = cache.point[0] == nullptr ? 0 : 1;
      cache.point[slot] = at.data();
      cache.gram[slot] = u.transpose() * u;
    }
    gradient_kernel(u, cache.gram[slot], data, i, out);
  }

  Eigen::Index p_;
  Eigen::Index r_;
};

}  // namespace

ModelInfo pca_row() {
  ModelInfo r;
  r.name = "pca";
  r.summary = "||U U^T - z z^T||^2 / 4, the principal subspace of rank r (strict saddle at 0), no labels";
  r.labeled = false;
  r.reads_rank = true;
  r.no_intercept = "has no intercept (center the data instead)";
  r.parameters = [](Index features, const ModelOptions& o, Index) {
    return static_cast<double>(features) * static_cast<double>(o.rank);
  };
  r.make = [](Index features, const ModelOptions& o, Index) -> std::unique_ptr<Model> {
    return std::make_unique<PcaModel>(features, o.rank);
  };
  return r;
}

}  // namespace detail
}  // namespace dpsosp
