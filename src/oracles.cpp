// The clipped gradient oracles (paper Algorithm 3, SPEC section 2.2).
//
// Determinism: per-example gradients are computed into rows of a buffer (any
// thread may compute any row), clipped row by row, then summed in record order
// by one thread. The result is therefore bit-identical for every thread count.
#include "dpsosp/oracles.hpp"

#include <cmath>
#include <limits>

#include "dpsosp/error.hpp"

namespace dpsosp {

bool clip_to_norm(Eigen::Ref<Vec> v, double c) {
  if (!(c < std::numeric_limits<double>::infinity())) return false;
  const double norm = v.norm();
  if (norm <= c) return false;
  if (c <= 0.0) {
    v.setZero();
  } else {
    v *= c / norm;
  }
  return true;
}

namespace {

// Clips every row of g to norm c, then returns the mean of the rows (summed in
// row order) and the number of rows clipped.
OracleOutput clipped_mean(RowMatrix& g, double c) {
  OracleOutput out;
  const Eigen::Index rows = g.rows();
  out.batch = static_cast<Index>(rows);
  out.value = Vec::Zero(g.cols());
  for (Eigen::Index i = 0; i < rows; ++i) {
    if (clip_to_norm(g.row(i).transpose(), c)) ++out.clipped;
  }
  for (Eigen::Index i = 0; i < rows; ++i) out.value += g.row(i).transpose();
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
}

OracleOutput GradientOracles::o1_on(const Vec& x, const IndexList& records, double clip) {
  check_dim(model_, x, "GradientOracles::o1");
  if (records.empty()) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  model_.batch_gradients(x, data_, records, buffer_a_);
  gradient_evaluations_ += records.size();
  return clipped_mean(buffer_a_, clip);
}

OracleOutput GradientOracles::o1(const Vec& x, Index b, double clip) {
  if (b == 0) throw Error("GradientOracles::o1: batch size must be at least 1, got 0");
  return o1_on(x, pool_.draw(b), clip);
}

OracleOutput GradientOracles::o2(const Vec& x, const Vec& x_prev, Index b, double clip) {
  check_dim(model_, x, "GradientOracles::o2");
  check_dim(model_, x_prev, "GradientOracles::o2");
  if (b == 0) throw Error("GradientOracles::o2: batch size must be at least 1, got 0");
  const IndexList records = pool_.draw(b);
  model_.batch_gradients(x, data_, records, buffer_a_);
  model_.batch_gradients(x_prev, data_, records, buffer_b_);
  gradient_evaluations_ += 2 * records.size();
  buffer_a_ -= buffer_b_;
  return clipped_mean(buffer_a_, clip);
}

}  // namespace dpsosp
