// Predictions from a model's parameters: Model's defaults (a model that
// predicts nothing says so) and the whole-dataset forms (model.hpp).
#include "dpsosp/model.hpp"

#include "dpsosp/error.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {

ModelOptions Model::options() const { return {}; }

double Model::predict(const Vec&, const Dataset&, Index) const {
  throw Error(name() + "::predict: " + name() + " makes no predictions");
}

void Model::class_probabilities(const Vec&, const Dataset&, Index, Eigen::Ref<Vec>) const {
  throw Error(name() + "::class_probabilities: " + name() + " is not a classifier");
}

namespace {

void check_for_prediction(const Model& model, const Vec& x, const Dataset& data, const char* what) {
  detail::check_point(model, x, what);
  if (data.cols() != model.features())
    throw Error(std::string(what) + ": the data have " + std::to_string(data.cols()) + " features per record, " +
                model.name() + " expects " + std::to_string(model.features()));
}

}  // namespace

Vec predict(const Model& model, const Vec& x, const Dataset& data) {
  check_for_prediction(model, x, data, "predict");
  Vec out(static_cast<Eigen::Index>(data.rows()));
  for (Index i = 0; i < data.rows(); ++i) out[static_cast<Eigen::Index>(i)] = model.predict(x, data, i);
  return out;
}

RowMatrix predict_proba(const Model& model, const Vec& x, const Dataset& data) {
  check_for_prediction(model, x, data, "predict_proba");
  if (model.classes() == 0) throw Error("predict_proba: " + model.name() + " is not a classifier");
  RowMatrix out(static_cast<Eigen::Index>(data.rows()), static_cast<Eigen::Index>(model.classes()));
  for (Index i = 0; i < data.rows(); ++i) {
    Eigen::Map<Vec> row(out.row(static_cast<Eigen::Index>(i)).data(), out.cols());
    model.class_probabilities(x, data, i, row);
  }
  return out;
}

}  // namespace dpsosp
