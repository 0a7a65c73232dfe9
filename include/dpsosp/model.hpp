// dpsosp: per-example objectives. The library clips each example's gradient,
// so a model gives per-example losses, gradients and Hessian-vector products,
// and a batched form that computes many per-example gradients at once.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/clip.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/record_file.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// A Hessian-vector product at a fixed point: out = H v (resized to v's size).
using HvpFunction = std::function<void(const Vec& v, Vec& out)>;

/// Shape parameters of the models that need them.
struct ModelOptions {
  /// softmax / mlp: number of classes; 0 = infer from the labels (max label + 1).
  Index classes = 0;
  /// mlp: hidden units.
  Index hidden = 32;
  /// pca: rank r of U (x = vec(U), U is p x r, column-major).
  Index rank = 1;
  /// logistic, sigmoid, cauchy, phase-retrieval, softmax: a bias in each
  /// margin (logit), as if every record had a last feature equal to 1; x gains
  /// one entry per margin at its end (docs/models.md). pca and mlp refuse it
  /// (mlp has biases of its own; center the data for pca).
  bool fit_intercept = false;
  /// Throws Error naming the field when a value is invalid.
  void Validate() const;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual std::string name() const = 0;
  /// Dimension d of the parameter vector x.
  virtual Index dim() const = 0;
  /// Number of features each record must have.
  virtual Index features() const = 0;
  /// Throws Error when the data do not fit the model (feature count, labels
  /// invalid for the model: the message names the first bad record).
  virtual void validate(const Dataset& data) const = 0;
  /// validate() for the records `rows` of data alone, as if they were a
  /// dataset of their own (a message names a record by its place in rows): a
  /// streamed run checks each batch as it reads it. The default validates
  /// data.subset(rows); the built-in models check the rows in place.
  virtual void validate_rows(const Dataset& data, const IndexList& rows) const;

  virtual double loss(const Vec& x, const Dataset& data, Index i) const = 0;
  /// out = grad f(x; z_i); out has dim() entries.
  virtual void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const = 0;
  /// out = hess f(x; z_i) v.
  virtual void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const = 0;
  /// Row k of out (resized to idx.size() x dim()) = grad f(x; z_idx[k]).
  /// Must agree exactly with gradient(). The default loops over gradient().
  virtual void batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const;

  /// The oracles' fused kernel: the sum over the records idx, in that order, of
  /// clip_to_norm(grad f(x; z), clip) (clip = +inf: no clipping), and how many
  /// were clipped. Must agree bit for bit with its reference form: the rows of
  /// batch_gradients(), each clipped by clip_to_norm, added in order to a zero
  /// vector. The default is that form, over blocks of rows (no b x d matrix);
  /// the built-in models override it with one fused, threaded pass that gives
  /// the same bits for every thread count.
  virtual ClippedSum clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip) const;
  /// As clipped_gradient_sum for the differences grad f(x; z) - grad f(x_prev; z)
  /// (reference form: the rows of batch_gradients at x minus those at x_prev).
  virtual ClippedSum clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                            double clip) const;
  /// The consistent O2 of spider-mf-adaptive: the sum over idx of
  /// clip_to_norm(g(x) - g(x_prev), clip) with g(.) = clip_to_norm(grad f(.; z),
  /// inner_clip), the difference of the gradients O1 would use. Reference
  /// form: the rows of batch_gradients at x and at x_prev, each clipped at
  /// inner_clip, subtracted, clipped at clip, added in order. clipped counts
  /// the outer clips. softmax, mlp and pca run it fused and threaded.
  virtual ClippedSum clipped_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                                       const IndexList& idx, double inner_clip, double clip) const;
  /// One share of a batch's clipped sum, for data-parallel runs: the sum of
  /// start's vector and, in order, the clipped vectors of idx (clipped counts:
  /// these records' alone). Bit for bit what clipped_gradient_sum gives for the
  /// whole batch when start gives the sum of the records before idx, computed
  /// the same way, and idx starts at a batch row that is a multiple of
  /// kShareUnit. start is called once, on the calling thread; the built-in
  /// models compute the rows before they call it (so a process computes while
  /// it waits for the processes before it), the default calls it first.
  virtual ClippedSum chained_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                          const SumStart& start) const;
  /// As chained_gradient_sum for clipped_difference_sum.
  virtual ClippedSum chained_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                            double clip, const SumStart& start) const;
  /// As chained_gradient_sum for clipped_consistent_difference_sum.
  virtual ClippedSum chained_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                                       const IndexList& idx, double inner_clip, double clip,
                                                       const SumStart& start) const;
  /// Batch rows per unit of the shares of chained sums: a share must start at
  /// a multiple of it (where the fused kernels' row groups and the alignment
  /// of their scratch rows begin anew).
  static Index share_unit();

  /// The options that shape the model: make_model(name(), features(),
  /// options()) builds the same model. The default is ModelOptions{}.
  virtual ModelOptions options() const;
  /// Classes of a classifier (2 for logistic and sigmoid); 0 for the others.
  virtual Index classes() const { return 0; }
  /// The prediction for record i (its label may be absent): a classifier's
  /// class (logistic, sigmoid: 1 for a positive margin, else 0, the class the
  /// labels 0 and -1 both name; softmax, mlp: the argmax of the logits), a
  /// regression's fitted value (cauchy: the margin; phase retrieval: its
  /// square). pca throws (it predicts nothing; x spans its subspace).
  virtual double predict(const Vec& x, const Dataset& data, Index i) const;
  /// A classifier's class probabilities for record i (classes() entries:
  /// softmax of the logits; logistic and sigmoid: 1 - s, s with s the sigmoid
  /// of the margin). Other models throw.
  virtual void class_probabilities(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const;
  /// Classifiers: whether the model at x predicts record i's label (argmax of
  /// the logits, or the sign of the margin); other models return std::nullopt.
  virtual std::optional<bool> correct(const Vec& x, const Dataset& data, Index i) const;
  /// Fraction of the records predicted correctly; NaN for models that do not classify.
  double accuracy(const Vec& x, const Dataset& data) const;

  /// The mean Hessian over the records idx at x as an operator, for many
  /// products at one point (the certificate's Lanczos): v -> mean_hvp(x, data,
  /// idx, v) up to rounding, the same bits for any thread count. The default
  /// runs hvp() per record on the engine's threads; softmax and the margin
  /// models on dense data keep what depends on x alone (probabilities,
  /// curvatures) and apply two matrix products over the records. The operator
  /// refers to data and idx, which must outlive it.
  virtual HvpFunction mean_hessian(const Vec& x, const Dataset& data, const IndexList& idx) const;

  /// Means over the records idx (convenience for certificates and references).
  double mean_loss(const Vec& x, const Dataset& data, const IndexList& idx) const;
  Vec mean_gradient(const Vec& x, const Dataset& data, const IndexList& idx) const;
  Vec mean_hvp(const Vec& x, const Dataset& data, const IndexList& idx, const Vec& v) const;
};

/// A model's row in the model table: what the front ends, the scale and
/// make_model know of it. Each model's file defines its row
/// (src/models/model_*.cpp); model.cpp lists them (docs/architecture.md, "A model").
struct ModelInfo {
  std::string name;
  std::string summary;                ///< one line: the loss, the labels
  bool labeled = true;                ///< its records carry labels (pca: none)
  bool classifier = false;            ///< labels are class indices 0 .. K-1: reads classes (softmax, mlp)
  bool binary = false;                ///< two classes, labels 0/1 or -1/+1 (logistic, sigmoid)
  bool regression = false;            ///< a real target, scaled with the features (linear, cauchy)
  bool intercept_by_default = false;  ///< the run's default for loaded records (fit_intercept)
  bool scales_by_default = false;     ///< the private scale estimate on loaded tables (scaling.hpp)
  bool reads_hidden = false;          ///< ModelOptions::hidden (mlp)
  bool reads_rank = false;            ///< ModelOptions::rank (pca)
  /// Why fit_intercept is refused; empty where the model takes one.
  std::string no_intercept;
  /// Its parameter count for `features` columns and `classes` (resolved for a
  /// classifier): make_model refuses more than 2^31 - 1.
  double (*parameters)(Index features, const ModelOptions& options, Index classes) = nullptr;
  /// Builds it (options valid, classes resolved for a classifier).
  std::unique_ptr<Model> (*make)(Index features, const ModelOptions& options, Index classes) = nullptr;
};
/// Every model, in the order help texts list them.
const std::vector<ModelInfo>& model_table();
/// The row of `name`; throws Error "unknown model 'NAME', expected one of ...".
const ModelInfo& model_info(const std::string& name);
/// The row of `name`, or null where the table has none (a caller's model).
inline const ModelInfo* find_model_info(const std::string& name) {
  for (const ModelInfo& m : model_table())
    if (m.name == name) return &m;
  return nullptr;
}

/// Model names: logistic, sigmoid, cauchy, phase-retrieval, pca, softmax, mlp, linear.
/// `features` is the number of feature columns of the data; `data` (may be null)
/// lets softmax/mlp infer the class count.
std::unique_ptr<Model> make_model(const std::string& name, Index features, const ModelOptions& options = {},
                                  const Dataset* data = nullptr);
/// The same for the records of a record file, which are not in memory: the
/// class count of softmax / mlp, unless set, is inferred from the header's
/// label range as make_model infers it from the labels (max + 1, at least 2);
/// a streamed run checks the range against the records.
std::unique_ptr<Model> make_model(const std::string& name, const RecordFileInfo& records,
                                  const ModelOptions& options = {});
/// The list of model names, for help texts.
std::vector<std::string> model_names();

/// Model::predict for every record of `data` (which needs features() columns
/// and no labels); throws Error naming the model when x or data do not fit it.
Vec predict(const Model& model, const Vec& x, const Dataset& data);
/// Model::class_probabilities for every record: n x classes().
RowMatrix predict_proba(const Model& model, const Vec& x, const Dataset& data);

}  // namespace dpsosp
