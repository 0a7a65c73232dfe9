// The clipped gradient oracles (paper Algorithm 3, SPEC section 2.2).
//
// Each output is the mean of clipped per-example vectors. The model's fused
// kernel (Model::clipped_gradient_sum / clipped_difference_sum) computes the
// clipped sum: every per-example vector clipped by clip_to_norm, then added in
// record order, with bits that do not depend on the thread count
// (src/engine/clipped_sum.hpp). Here the sum is divided by the batch size.
#include "dpsosp/oracles.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include "engine/clip_rule.hpp"
#include "data/dataset_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {

bool clip_to_norm(Eigen::Ref<Vec> v, double c) {
  if (!(c < std::numeric_limits<double>::infinity())) return false;
  return detail::clip_given_norm(v, v.norm(), c) != detail::kKept;
}

namespace {

OracleOutput mean_of(ClippedSum s, Index rows) {
  OracleOutput out;
  out.batch = rows;
  out.clipped = s.clipped;
  out.nonfinite = s.nonfinite;
  out.value = std::move(s.sum);
  if (rows > 0) out.value /= static_cast<double>(rows);
  return out;
}

void check_dim(const Model& model, const Vec& x, const char* who) {
  if (static_cast<Index>(x.size()) != model.dim()) {
    throw Error(std::string(who) + ": point has " + std::to_string(x.size()) +
                " entries, the model has dimension " + std::to_string(model.dim()));
  }
}

}  // namespace

GradientOracles::GradientOracles(const Model& model, const Dataset& data, SamplePool& pool)
    : model_(model), data_(data), pool_(pool) {
  if (pool.size() != data.rows()) {
    throw Error("GradientOracles: the sample pool has " + std::to_string(pool.size()) +
                " records, the dataset " + std::to_string(data.rows()));
  }
  if (detail::DatasetLayout::reads_order_of(pool, data)) stored_ = detail::DatasetLayout::stored_rows(data);
}

IndexList GradientOracles::next_batch(Index b, const Dataset*& from) {
  if (!stored_) {
    from = &data_;
    return pool_.draw(b);
  }
  // Stored row k holds the pool's k-th record: the batch is the next b rows.
  const Index first = detail::DatasetLayout::advance(pool_, b);
  IndexList rows(b);
  for (Index k = 0; k < b; ++k) rows[k] = first + k;
  from = &*stored_;
  return rows;
}

OracleOutput GradientOracles::o1_on(const Vec& x, const IndexList& records, double clip) {
  check_dim(model_, x, "GradientOracles::o1");
  if (records.empty()) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  ClippedSum sum = model_.clipped_gradient_sum(x, data_, records, clip);
  gradient_evaluations_ += records.size();
  return mean_of(std::move(sum), records.size());
}

OracleOutput GradientOracles::o1(const Vec& x, Index b, double clip) {
  if (b == 0) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  check_dim(model_, x, "GradientOracles::o1");
  const Dataset* from = nullptr;
  const IndexList records = next_batch(b, from);
  ClippedSum sum = model_.clipped_gradient_sum(x, *from, records, clip);
  gradient_evaluations_ += records.size();
  return mean_of(std::move(sum), records.size());
}

OracleOutput GradientOracles::o2(const Vec& x, const Vec& x_prev, Index b, double clip) {
  check_dim(model_, x, "GradientOracles::o2");
  check_dim(model_, x_prev, "GradientOracles::o2");
  if (b == 0) throw Error("GradientOracles::o2: batch size must be at least 1, got 0");
  const Dataset* from = nullptr;
  const IndexList records = next_batch(b, from);
  ClippedSum sum = model_.clipped_difference_sum(x, x_prev, *from, records, clip);
  gradient_evaluations_ += 2 * records.size();
  return mean_of(std::move(sum), records.size());
}

OracleOutput GradientOracles::o2_consistent(const Vec& x, const Vec& x_prev, Index b, double inner_clip,
                                            double clip) {
  check_dim(model_, x, "GradientOracles::o2_consistent");
  check_dim(model_, x_prev, "GradientOracles::o2_consistent");
  if (b == 0) throw Error("GradientOracles::o2_consistent: batch size must be at least 1, got 0");
  const Dataset* from = nullptr;
  const IndexList records = next_batch(b, from);
  ClippedSum sum = model_.clipped_consistent_difference_sum(x, x_prev, *from, records, inner_clip, clip);
  gradient_evaluations_ += 2 * records.size();
  return mean_of(std::move(sum), records.size());
}

}  // namespace dpsosp
