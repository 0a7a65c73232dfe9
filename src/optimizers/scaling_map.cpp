// The unit map of a scaled run (include/dpsosp/scaling.hpp): records onto
// the unit box, predictions and x back to the user's units.
#include <algorithm>

#include "dpsosp/error.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {

std::pair<std::vector<double>, double> Scaling::outside_box(const Dataset& data) const {
  const Index n = data.rows(), p = maps_features() ? data.cols() : 0;
  std::vector<double> features(static_cast<std::size_t>(p), 0.0);
  double target = has_target && data.has_labels() ? 0.0 : -1.0;
  Vec row(data.cols());
  for (Index i = 0; i < n; ++i) {
    if (p > 0) data.row_dense(i, row);
    for (Index j = 0; j < p; ++j) features[static_cast<std::size_t>(j)] += row[j] < lower[j] || row[j] > upper[j];
    if (target >= 0) target += data.label(i) < y_lower || data.label(i) > y_upper;
  }
  const double share = n > 0 ? 1.0 / static_cast<double>(n) : 0.0;
  for (double& f : features) f *= share;
  return {features, target >= 0 ? target * share : -1.0};
}

Dataset Scaling::apply(const Dataset& data) const {
  const Index n = data.rows(), p = data.cols();
  if (maps_features() && static_cast<Index>(lower.size()) != p)
    throw Error("scaling: the records have " + std::to_string(p) + " features, the scaling " +
                std::to_string(lower.size()));
  RowMatrix z(n, p);
  Vec row(p);
  for (Index i = 0; i < n; ++i) {
    data.row_dense(i, row);
    if (maps_features()) {
      for (Index j = 0; j < p; ++j) {
        const double c = 0.5 * (lower[j] + upper[j]), h = 0.5 * (upper[j] - lower[j]);
        row[j] = (std::clamp(row[j], lower[j], upper[j]) - c) / h;
      }
    }
    if (normalize) {
      const double norm = row.norm();
      if (norm > 0) row /= norm;
    }
    z.row(i) = row.transpose();
  }
  Vec labels = data.has_labels() ? Vec(data.labels().size()) : Vec();
  for (Index i = 0; i < static_cast<Index>(labels.size()); ++i) {
    const double y = data.label(i);
    if (has_target) {
      const double c = 0.5 * (y_lower + y_upper), h = 0.5 * (y_upper - y_lower);
      labels[i] = (std::clamp(y, y_lower, y_upper) - c) / h;
    } else {
      labels[i] = y;
    }
  }
  Dataset out(std::move(z), std::move(labels));
  out.set_weights(data.record_weights());  // a record keeps its weight (sample_weight)
  return out;
}

double Scaling::target_to_user(double v) const {
  if (!has_target) return v;
  // The target's box is public: a prediction outside it is clamped into it.
  return 0.5 * (y_lower + y_upper) + 0.5 * (y_upper - y_lower) * std::clamp(v, -1.0, 1.0);
}

std::optional<Vec> user_units_point(const Model& model, const Vec& x, const Scaling& s) {
  if (s.normalize) return std::nullopt;
  const Index p = model.features();
  const bool softmax = model.name() == "softmax";
  const ModelInfo& info = model_info(model.name());
  const bool margin = info.binary || info.regression;
  if (!(softmax || margin) || !model.options().fit_intercept) return std::nullopt;
  const Index rows = softmax ? model.options().classes : 1;
  if (static_cast<Index>(x.size()) != rows * (p + 1)) return std::nullopt;
  Vec out = x;
  const double yc = s.has_target ? 0.5 * (s.y_lower + s.y_upper) : 0.0;
  const double yh = s.has_target ? 0.5 * (s.y_upper - s.y_lower) : 1.0;
  for (Index r = 0; r < rows; ++r) {
    double offset = x[rows * p + r];
    for (Index j = 0; j < p; ++j) {
      double w = x[r * p + j];
      if (s.maps_features()) {
        const double c = 0.5 * (s.lower[j] + s.upper[j]), h = 0.5 * (s.upper[j] - s.lower[j]);
        w /= h;
        offset -= w * c;
      }
      out[r * p + j] = yh * w;
    }
    out[rows * p + r] = yc + yh * offset;
  }
  return out;
}

}  // namespace dpsosp
