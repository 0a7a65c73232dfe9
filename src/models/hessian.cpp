// The mean Hessian as an operator (Model::mean_hessian): the default, hvp()
// per record on the engine's threads, and the margin models' two products
// over the records with the curvatures phi''(z_i) kept.
#include <limits>
#include <memory>

#include "dpsosp/model.hpp"
#include "engine/clipped_sum.hpp"
#include "models/hessian_internal.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {

HvpFunction Model::mean_hessian(const Vec& x, const Dataset& data, const IndexList& idx) const {
  detail::check_point(*this, x, "mean_hessian");
  if (idx.empty()) throw Error(name() + "::mean_hessian: no records given, expected at least one");
  const Index d = dim();
  return [this, x, &data, &idx, d](const Vec& v, Vec& out) {
    detail::check_direction(*this, v);
    // The engine's sum of per-record vectors, unclipped: rows added in record order.
    constexpr double kNoClip = std::numeric_limits<double>::infinity();
    const auto rows_of = [this, &x, &data, &v, d] {
      return [this, &x, &data, &v, d](const Index* records, Index count, double* const* rows) {
        for (Index j = 0; j < count; ++j)
          hvp(x, data, records[j], v, Eigen::Map<Vec>(rows[j], static_cast<Eigen::Index>(d)));
      };
    };
    const ClippedSum s = detail::clipped_row_sum(detail::kHvpKind, data, idx, d, kNoClip, rows_of);
    out = s.sum / static_cast<double>(idx.size());
  };
}

namespace detail {

// H v = (1/m) sum_i phi''(z_i) <[a_i, 1], v> [a_i, 1]: A^T (c ⊙ (A w + v_c)).
HvpFunction MarginModel::mean_hessian(const Vec& x, const Dataset& data, const IndexList& idx) const {
  // Weighted records (Dataset::weight): the default form, which weighs each record's product.
  if (data.is_sparse() || idx.empty() || data.has_weights()) return Model::mean_hessian(x, data, idx);
  check_point(*this, x, "mean_hessian");
  check_feature_count(*this, data);
  auto block = std::make_shared<const RecordBlock>(data, idx);
  auto curvature = std::make_shared<Vec>(static_cast<Eigen::Index>(idx.size()));
  for (Index k = 0; k < idx.size(); ++k)
    (*curvature)[static_cast<Eigen::Index>(k)] = d2phi(margin(x, data, idx[k]), target(data.label(idx[k])));
  const auto p = static_cast<Eigen::Index>(features_);
  const bool bias = intercept_;
  return [this, block, curvature, p, bias](const Vec& v, Vec& out) {
    check_direction(*this, v);
    const Vec w = v.head(p);
    const double c = bias ? v[p] : 0.0;
    const Vec sum = chunked_sum(block->size(), dim(), [&](Index begin, Index end, Eigen::Ref<Vec> part) {
      const auto a = block->rows(begin, end);
      const Vec t = ((a * w).array() + c)
                        .matrix()
                        .cwiseProduct(curvature->segment(static_cast<Eigen::Index>(begin),
                                                         static_cast<Eigen::Index>(end - begin)));
      part.head(p).noalias() = a.transpose() * t;
      if (bias) part[p] = t.sum();
    });
    out = sum / static_cast<double>(block->size());
  };
}

}  // namespace detail
}  // namespace dpsosp
