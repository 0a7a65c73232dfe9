// Model options, the default batched and averaged forms, the model factory and
// the validation helpers every model shares.
#include "dpsosp/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "dpsosp/clip.hpp"
#include "engine/clip_rule.hpp"
#include "engine/eigen_order.hpp"
#include "engine/row_workers.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {

namespace detail {

namespace {
[[noreturn]] void bad_label(const Model& model, Index i, double label, const std::string& rule) {
  throw LabelError(model.name() + ": label of record " + std::to_string(i) + " (0-based) is " + format_number(label) +
                   ", expected " + rule);
}
}  // namespace

void check_feature_count(const Model& model, const Dataset& data) {
  if (data.cols() != model.features()) {
    throw Error(model.name() + ": the data have " + std::to_string(data.cols()) + " features per record, expected " +
                std::to_string(model.features()) + " (the model was built for that many)");
  }
}

void check_has_labels(const Model& model, const Dataset& data, const IndexList* rows) {
  if (!data.has_labels() && (rows ? !rows->empty() : data.rows() > 0)) {
    throw Error(model.name() + ": the data have no labels, expected one label per record (" + model.name() +
                " is a supervised model)");
  }
}

namespace {
// Refuses the first label that `ok` refuses (record k: data's k-th, or rows[k]).
// Outside the label set (the model's, or the declared classes: the public shape,
// docs/privacy.md) in words that name no record; otherwise (NaN) naming record k.
template <class Ok>
void check_each_label(const Model& model, const Dataset& data, const IndexList* rows, const std::string& rule,
                      bool label_set, Ok ok) {
  const Index count = rows ? static_cast<Index>(rows->size()) : data.rows();
  for (Index k = 0; k < count; ++k) {
    const double y = data.label(rows ? (*rows)[k] : k);
    if (!ok(y) && !label_set) bad_label(model, k, y, rule);
    if (!ok(y))
      throw LabelError(model.name() + ": a record's label is not " + rule +
                       "; which record is not said, as a refusal must not depend on it");
  }
}
}  // namespace

void check_labels_finite(const Model& model, const Dataset& data, const IndexList* rows) {
  check_each_label(model, data, rows, "a finite number", false, [](double y) { return std::isfinite(y); });
}

void check_labels_binary(const Model& model, const Dataset& data, const IndexList* rows) {
  check_each_label(model, data, rows, "0, 1, -1 or +1 (0 is read as -1)", true,
                   [](double y) { return y == 0.0 || y == 1.0 || y == -1.0; });
}

void check_labels_class(const Model& model, const Dataset& data, Index classes, const IndexList* rows) {
  const double k = static_cast<double>(classes);
  check_each_label(model, data, rows, "an integer in [0, " + std::to_string(classes) + ") (the classes)", true,
                   [k](double y) { return y >= 0.0 && y < k && std::floor(y) == y; });
}

void check_point(const Model& model, const Vec& x, const char* what) {
  if (static_cast<Index>(x.size()) != model.dim()) {
    throw Error(model.name() + "::" + what + ": x has " + std::to_string(x.size()) +
                " entries, expected dim() = " + std::to_string(model.dim()));
  }
}

void check_direction(const Model& model, const Vec& v) {
  if (static_cast<Index>(v.size()) != model.dim()) {
    throw Error(model.name() + "::hvp: v has " + std::to_string(v.size()) +
                " entries, expected dim() = " + std::to_string(model.dim()));
  }
}

double softmax_in_place(Eigen::Ref<Vec> logits) {
  const double top = logits.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index k = 0; k < logits.size(); ++k) {
    logits[k] = std::exp(logits[k] - top);
    sum += logits[k];
  }
  logits /= sum;
  return top + std::log(sum);
}

double cross_entropy(const Vec& logits, Index y) {
  const double top = logits.maxCoeff();
  double sum = 0.0;
  for (Eigen::Index k = 0; k < logits.size(); ++k) sum += std::exp(logits[k] - top);
  return std::log(sum) - (logits[static_cast<Eigen::Index>(y)] - top);
}

void row_dots(const Dataset& data, Index i, const double* w, Index width, Index stride, Index count, double* out) {
  const Index cols = data.cols();
  const auto n = static_cast<Eigen::Index>(width);
  if (data.is_sparse() || i >= data.rows() || width != cols || !eigen_order::verified()) {  // row_dot reports errors
    for (Index k = 0; k < count; ++k) out[k] = data.row_dot(i, Eigen::Map<const Vec>(w + k * stride, n));
    return;
  }
  const double* row = data.dense_row(i);
  constexpr Index kChunk = 8;
  const double* rows[kChunk] = {row, row, row, row, row, row, row, row};
  const double* ws[kChunk] = {};
  for (Index k0 = 0; k0 < count; k0 += kChunk) {
    const Index m = std::min(kChunk, count - k0);
    for (Index k = 0; k < m; ++k) ws[k] = w + (k0 + k) * stride;
    eigen_order::dots(rows, ws, m, cols, out + k0);
  }
}

Index class_label(const Model& model, const Dataset& data, Index i, Index classes) {
  const double y = data.label(i);
  if (!(y >= 0.0 && y < static_cast<double>(classes) && std::floor(y) == y)) {
    bad_label(model, i, y, "an integer in [0, " + std::to_string(classes) + ")");
  }
  return static_cast<Index>(y);
}

}  // namespace detail

void ModelOptions::Validate() const {
  if (classes == 1) {
    throw Error("ModelOptions::Validate: classes is 1, expected 0 (infer from the labels) or at least 2");
  }
  if (hidden < 1) throw Error("ModelOptions::Validate: hidden is 0, expected at least 1");
  if (rank < 1) throw Error("ModelOptions::Validate: rank is 0, expected at least 1");
}

void Model::batch_gradients(const Vec& x, const Dataset& data, const IndexList& idx, RowMatrix& out) const {
  const Eigen::Index d = static_cast<Eigen::Index>(dim());
  out.resize(static_cast<Eigen::Index>(idx.size()), d);
  for (std::size_t k = 0; k < idx.size(); ++k) {
    Eigen::Map<Vec> row(out.row(static_cast<Eigen::Index>(k)).data(), d);
    gradient(x, data, idx[k], row);
  }
}

namespace {

// The reference form of the clipped sums over blocks of rows: each block's rows
// come from batch_gradients (honouring a subclass's batched form), and a block
// row starts at the same offset from an aligned address as the batch row it
// holds (detail::block_rows is a multiple of the alignment unit), so clipping
// gives the bits of the whole-batch form without its b x d matrix.
// A weighted record's row (Dataset::weight) is clipped, then multiplied by its
// weight in [0, 1]: its norm stays at most the bound (row_workers.hpp,
// add_weighted_row).
template <class BlockRows>
ClippedSum clipped_blocks(const Dataset& data, Index d, const IndexList& idx, double clip, BlockRows block_rows_of,
                          const SumStart* start = nullptr) {
  ClippedSum result;
  result.sum = Vec::Zero(static_cast<Eigen::Index>(d));
  if (start != nullptr) detail::take_chain_start(*start, result.sum, d);
  const Index rows = detail::block_rows(d);
  RowMatrix block;
  IndexList part;
  for (Index k0 = 0; k0 < idx.size(); k0 += rows) {
    const auto end = idx.begin() + static_cast<std::ptrdiff_t>(std::min(idx.size(), k0 + rows));
    part.assign(idx.begin() + static_cast<std::ptrdiff_t>(k0), end);
    block_rows_of(part, block);
    for (Eigen::Index r = 0; r < block.rows(); ++r) {
      auto row = block.row(r).transpose();
      if (clip < std::numeric_limits<double>::infinity()) {
        detail::count_clip(result, detail::clip_given_norm(row, row.norm(), clip));
      }
      if (!data.has_weights()) {
        result.sum += row;
      } else if (const double w = data.weight(part[static_cast<std::size_t>(r)]); w != 0.0) {
        result.sum += w * row;
      }
    }
  }
  return result;
}

}  // namespace

ClippedSum Model::clipped_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip) const {
  return clipped_blocks(data, dim(), idx, clip,
                        [&](const IndexList& part, RowMatrix& block) { batch_gradients(x, data, part, block); });
}

ClippedSum Model::clipped_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                         double clip) const {
  RowMatrix at_prev;
  return clipped_blocks(data, dim(), idx, clip, [&](const IndexList& part, RowMatrix& block) {
    batch_gradients(x, data, part, block);
    batch_gradients(x_prev, data, part, at_prev);
    block -= at_prev;
  });
}

namespace {

// The reference form of the consistent O2 (from zero, or from a chain's start).
ClippedSum consistent_blocks(const Model& m, const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                             double inner_clip, double clip, const SumStart* start) {
  RowMatrix at_prev;
  return clipped_blocks(
      data, m.dim(), idx, clip,
      [&](const IndexList& part, RowMatrix& block) {
        m.batch_gradients(x, data, part, block);
        m.batch_gradients(x_prev, data, part, at_prev);
        for (Eigen::Index r = 0; r < block.rows(); ++r) {
          auto g = block.row(r).transpose();
          auto g_prev = at_prev.row(r).transpose();
          clip_to_norm(g, inner_clip);
          clip_to_norm(g_prev, inner_clip);
          g -= g_prev;
        }
      },
      start);
}

}  // namespace

ClippedSum Model::clipped_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                                    const IndexList& idx, double inner_clip, double clip) const {
  return consistent_blocks(*this, x, x_prev, data, idx, inner_clip, clip, nullptr);
}

ClippedSum Model::chained_consistent_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data,
                                                    const IndexList& idx, double inner_clip, double clip,
                                                    const SumStart& start) const {
  return consistent_blocks(*this, x, x_prev, data, idx, inner_clip, clip, &start);
}

ClippedSum Model::chained_gradient_sum(const Vec& x, const Dataset& data, const IndexList& idx, double clip,
                                       const SumStart& start) const {
  return clipped_blocks(
      data, dim(), idx, clip, [&](const IndexList& part, RowMatrix& block) { batch_gradients(x, data, part, block); },
      &start);
}

ClippedSum Model::chained_difference_sum(const Vec& x, const Vec& x_prev, const Dataset& data, const IndexList& idx,
                                         double clip, const SumStart& start) const {
  RowMatrix at_prev;
  return clipped_blocks(
      data, dim(), idx, clip,
      [&](const IndexList& part, RowMatrix& block) {
        batch_gradients(x, data, part, block);
        batch_gradients(x_prev, data, part, at_prev);
        block -= at_prev;
      },
      &start);
}

Index Model::share_unit() { return detail::kStretchUnit; }

double Model::mean_loss(const Vec& x, const Dataset& data, const IndexList& idx) const {
  if (idx.empty()) throw Error(name() + "::mean_loss: no records given, expected at least one");
  double sum = 0.0;
  for (Index i : idx) {
    const double w = data.weight(i);  // weighted: (1/m) sum w_i f(x; z_i), weight 0 adds nothing
    if (w != 0.0) sum += w == 1.0 ? loss(x, data, i) : w * loss(x, data, i);
  }
  return sum / static_cast<double>(idx.size());
}

Vec Model::mean_gradient(const Vec& x, const Dataset& data, const IndexList& idx) const {
  if (idx.empty()) throw Error(name() + "::mean_gradient: no records given, expected at least one");
  Vec sum = Vec::Zero(static_cast<Eigen::Index>(dim()));
  Vec g(static_cast<Eigen::Index>(dim()));
  for (Index i : idx) {
    const double w = data.weight(i);
    if (w == 0.0) continue;
    gradient(x, data, i, g);
    if (w == 1.0) {
      sum += g;
    } else {
      sum += w * g;
    }
  }
  return sum / static_cast<double>(idx.size());
}

void Model::validate_rows(const Dataset& data, const IndexList& rows) const { validate(data.subset(rows)); }

Vec Model::mean_hvp(const Vec& x, const Dataset& data, const IndexList& idx, const Vec& v) const {
  if (idx.empty()) throw Error(name() + "::mean_hvp: no records given, expected at least one");
  Vec sum = Vec::Zero(static_cast<Eigen::Index>(dim()));
  Vec h(static_cast<Eigen::Index>(dim()));
  for (Index i : idx) {
    const double w = data.weight(i);
    if (w == 0.0) continue;
    hvp(x, data, i, v, h);
    if (w == 1.0) {
      sum += h;
    } else {
      sum += w * h;
    }
  }
  return sum / static_cast<double>(idx.size());
}

const std::vector<ModelInfo>& model_table() {
  static const std::vector<ModelInfo> table = [] {
    std::vector<ModelInfo> rows = detail::margin_model_rows();
    for (ModelInfo r : {detail::softmax_row(), detail::mlp_row(), detail::pca_row()}) rows.push_back(std::move(r));
    return rows;
  }();
  return table;
}

const ModelInfo& model_info(const std::string& name) {
  if (const ModelInfo* m = find_model_info(name)) return *m;
  std::string list;
  for (const ModelInfo& m : model_table()) list += (list.empty() ? "" : ", ") + m.name;
  throw Error("unknown model '" + name + "', expected one of " + list);
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ModelInfo& m : model_table()) names.push_back(m.name);
  return names;
}

namespace {

// max label + 1 (at least 2), reading the labels of `data`; the messages follow
// those of validate(), since a bad label is what makes inference impossible.
Index infer_classes(const std::string& name, const Dataset& data) {
  if (!data.has_labels() || data.rows() == 0) {
    throw Error(name + " cannot infer the number of classes: the data have no labels; declare them (classes)");
  }
  double top = 0.0;
  for (Index i = 0; i < data.rows(); ++i) {
    const double y = data.label(i);
    if (!(y >= 0.0 && std::floor(y) == y && y < 1e9)) {
      throw LabelError(name + ": label of record " + std::to_string(i) + " (0-based) is " + detail::format_number(y) +
                       ", expected a non-negative integer (a class index)");
    }
    if (y > top) top = y;
  }
  return std::max<Index>(2, static_cast<Index>(top) + 1);
}

// Parameter counts beyond this would not fit in memory anyway; refusing them
// early turns an absurd option (or label) into a clear message, not bad_alloc.
constexpr double kMaxParameters = 2147483647.0;

void check_size(const std::string& name, double parameters) {
  if (parameters > kMaxParameters) {
    throw Error(name + " would have " + detail::format_number(parameters) + " parameters, expected at most " +
                detail::format_number(kMaxParameters));
  }
}

}  // namespace

std::unique_ptr<Model> make_model(const std::string& name, Index features, const ModelOptions& options,
                                  const Dataset* data) {
  options.Validate();
  const ModelInfo& info = model_info(name);
  if (features < 1) throw Error(name + " needs at least 1 feature, got 0");
  if (options.fit_intercept && !info.no_intercept.empty())
    throw OptionError("fit_intercept", ": " + name + " " + info.no_intercept);
  // A classifier's class count comes from the options or the labels.
  Index classes = options.classes;
  if (info.classifier && classes == 0) {
    if (data == nullptr) {
      throw Error(name +
                  " needs the number of classes: declare them (classes), or pass the data to infer them "
                  "from the labels");
    }
    classes = infer_classes(name, *data);
  }
  check_size(name, info.parameters(features, options, classes));
  return info.make(features, options, classes);
}

std::optional<bool> Model::correct(const Vec&, const Dataset&, Index) const { return std::nullopt; }

double Model::accuracy(const Vec& x, const Dataset& data) const {
  if (data.rows() == 0) return std::numeric_limits<double>::quiet_NaN();
  Index right = 0;
  for (Index i = 0; i < data.rows(); ++i) {
    const std::optional<bool> c = correct(x, data, i);
    if (!c) return std::numeric_limits<double>::quiet_NaN();
    if (*c) ++right;
  }
  return static_cast<double>(right) / static_cast<double>(data.rows());
}

}  // namespace dpsosp
