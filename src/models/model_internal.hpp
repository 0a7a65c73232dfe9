// dpsosp internals shared by the model implementations (not installed).
#pragma once
#include <cmath>
#include <memory>
#include <string>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/types.hpp"
#include "engine/wide_kernels.hpp"

namespace dpsosp {
namespace detail {

/// Shortest decimal text that reads back as v ("2.5", "0.1", "nan", "inf").
std::string format_number(double v);

/// Throws unless data.cols() == model.features(); the message names the model.
void check_feature_count(const Model& model, const Dataset& data);
// The label checks read every record of data, or with `rows` the records
// listed (Model::validate_rows); a message names a record by its place among
// those checked.
/// Throws unless the data carry one label per record.
void check_has_labels(const Model& model, const Dataset& data, const IndexList* rows = nullptr);
/// Throws at the first label that is not finite.
void check_labels_finite(const Model& model, const Dataset& data, const IndexList* rows = nullptr);
/// Throws at the first label outside {0, 1, -1, +1}.
void check_labels_binary(const Model& model, const Dataset& data, const IndexList* rows = nullptr);
/// Throws at the first label that is not an integer in [0, classes).
void check_labels_class(const Model& model, const Dataset& data, Index classes, const IndexList* rows = nullptr);
/// Throws unless x has model.dim() entries; `what` names the method.
void check_point(const Model& model, const Vec& x, const char* what);
/// Throws unless v has model.dim() entries (directions of hvp).
void check_direction(const Model& model, const Vec& v);

/// log(1 + exp(t)) without overflow or loss of precision for large |t|.
inline double softplus(double t) { return t > 0 ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t)); }
/// 1 / (1 + exp(-t)), never exp of a large positive number.
inline double logistic_sigmoid(double t) {
  if (t >= 0) return 1.0 / (1.0 + std::exp(-t));
  const double e = std::exp(t);
  return e / (1.0 + e);
}

/// In place: logits -> probabilities (softmax with max subtraction); returns
/// log-sum-exp of the logits.
double softmax_in_place(Eigen::Ref<Vec> logits);

/// -log softmax(logits)_y = log sum_k exp(l_k - max) - (l_y - max): the shift
/// keeps both terms small, so large logits lose no precision.
double cross_entropy(const Vec& logits, Index y);

/// out[k] = data.row_dot(i, w_k) for k < count, w_k = the `width` doubles at
/// w + k * stride: the same numbers (and the same errors), computed side by
/// side (eigen_order.hpp) for a dense record, so the dot products do not wait
/// for each other.
void row_dots(const Dataset& data, Index i, const double* w, Index width, Index stride, Index count, double* out);

/// Index of the class of record i (the label, already validated as an integer
/// in [0, classes)); throws if it is not, so an unvalidated dataset never reads
/// out of bounds.
Index class_label(const Model& model, const Dataset& data, Index i, Index classes);

/// Models whose loss depends on x only through the margin z = <a_i, x>:
/// f = phi(z, y), grad = phi'(z) a_i, hess v = phi''(z) <a_i, v> a_i.
/// Subclasses give phi and its first two derivatives in z.
/// With an intercept (ModelOptions::fit_intercept) z = <a_i, w> + c for
/// x = [w, c]: the record read as [a_i, 1], the bias gradient phi'(z).
class MarginModel : public Model {
 public:
  MarginModel(Index features, bool intercept) : features_(features), intercept_(intercept) {}
  Index dim() const final { return features_ + (intercept_ ? 1 : 0); }
  Index features() const final { return features_; }
  ModelOptions options() const final {
    ModelOptions o;
    o.fit_intercept = intercept_;
    return o;
  }
  double predict(const Vec& x, const Dataset& data, Index i) const final;
  /// Dense data: the curvatures kept, two products over the records (hessian.cpp).
  HvpFunction mean_hessian(const Vec& x, const Dataset& data, const IndexList& idx) const final;

  double loss(const Vec& x, const Dataset& data, Index i) const final;
  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const final;
  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const final;
  /// One margin per record and one scaled copy of the record per row: the very
  /// operations of gradient(), so the rows agree with it bit for bit.
  void batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const final;
  /// One fused pass (src/engine/clipped_sum.hpp); each row is phi'(z) a_i computed
  /// as in gradient() (see fused_row), for O2 both margins from one read.
  ClippedSum clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip) const final;
  ClippedSum clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip) const final;
  /// The same passes continued from a chain's start (Model::chained_gradient_sum).
  ClippedSum chained_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                  const SumStart& start) const final;
  ClippedSum chained_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                    double clip, const SumStart& start) const final;

 protected:
  /// The label as the model reads it (e.g. 0 -> -1 for the classifiers).
  virtual double target(double label) const = 0;
  virtual double phi(double z, double y) const = 0;
  virtual double dphi(double z, double y) const = 0;
  virtual double d2phi(double z, double y) const = 0;
  /// s1[j] = dphi(z[per j], y_j) and, when per == 2, s0[j] = dphi(z[per j + 1], y_j),
  /// y_j = target(labels[j]), for j < count: the engine's coefficients, a group
  /// of records at a time. The built-in models implement it with their own
  /// target and dphi called directly (BuiltInMarginModel in model_linear.cpp):
  /// one virtual call a group, not two or three a record.
  virtual void coefficients(const double* z, const double* labels, Index count, Index per, double* s1,
                            double* s0) const = 0;
  /// The prediction from the margin z (model.hpp, Model::predict).
  virtual double predicted(double z) const = 0;
  /// z = <a_i, w> (+ c): row_dot, then the bias.
  double margin(const Vec& x, const Dataset& data, Index i) const;

 private:
  // out = phi'(z_i) a_i, shared by gradient() and batch_gradients().
  void gradient_kernel(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const;
  // The fused engine's rows (src/engine/clipped_sum.hpp) for count <= kGroup records:
  // out[j] = s a_j (O1), out[j] = s1 a_j - s0 a_j (O2, dense records), the
  // margins as row_dot computes them and each product s a_jk rounded as in
  // gradient().
  void fused_rows(const Vec& x, const Dataset& data, const Index* records, Index count, double* const* out) const;
  void fused_difference_rows(const Vec& x, const Vec& x_prev, const Dataset& data, const Index* records, Index count,
                             double* const* out) const;
  // The coefficients of those rows, s1[j] = phi'(<a_j, x>) and (x_prev given)
  // s0[j] = phi'(<a_j, x_prev>), for dense records; also the engine's
  // ScaledRecordWorker's, which never writes the rows out (and passes a
  // prefetch for the margins' loop to step).
  void dense_coefficients(const Vec& x, const Vec* x_prev, const Dataset& data, const Index* records, Index count,
                          double* s1, double* s0, wide::LinePrefetch* prefetch = nullptr) const;
  // The clipped sums, from zero (start null) or from a chain's start.
  ClippedSum gradient_sum_from(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                               const SumStart* start) const;
  ClippedSum difference_sum_from(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                 double clip, const SumStart* start) const;
  Index features_;
  bool intercept_;
};

// The model table's rows (model.hpp), each defined in its model's file;
// model.cpp lists them.
std::vector<ModelInfo> margin_model_rows();  // model_linear.cpp: logistic, sigmoid, cauchy, phase-retrieval, linear
ModelInfo softmax_row();                     // model_softmax.cpp
ModelInfo mlp_row();                         // model_mlp.cpp
ModelInfo pca_row();                         // model_pca.cpp

}  // namespace detail
}  // namespace dpsosp
