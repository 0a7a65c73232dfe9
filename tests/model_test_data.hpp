// Tests: the small problems the model tests share (model_test.cpp,
// model_factory_test.cpp, model_closed_forms_test.cpp).
#pragma once
#include <cmath>
#include <string>

#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"

namespace dpsosp::testing::model_data {

constexpr Index kRecords = 12;
constexpr Index kFeatures = 6;
constexpr Index kClasses = 3;
constexpr Index kZeroRow = 3;  // an all-zero record: an empty row in CSR

inline ModelOptions test_options() {
  ModelOptions o;
  o.classes = kClasses;
  o.hidden = 4;
  o.rank = 2;
  return o;
}

inline Vec gaussian(Index size, std::uint32_t stream, double scale = 1.0) {
  Vec v(static_cast<Eigen::Index>(size));
  GaussianStream(2024, StreamPurpose::kTest, stream).fill(v, scale);
  return v;
}

// Features with about 40% zeros (so that CSR storage differs from dense) and one
// all-zero row.
inline RowMatrix test_features() {
  RowMatrix a(kRecords, kFeatures);
  GaussianStream rng(7, StreamPurpose::kTest, 1);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const double value = rng.next();
      a(i, j) = rng.uniform() < 0.4 ? 0.0 : value;
    }
  }
  a.row(kZeroRow).setZero();
  return a;
}

// Labels that fit the model: signs, real targets, classes, or none (pca).
inline Vec test_labels(const std::string& model, const RowMatrix& a) {
  const Eigen::Index n = a.rows();
  Vec y(n);
  if (model == "pca") return Vec();
  if (model == "logistic" || model == "sigmoid") {
    const double signs[] = {1.0, 0.0, -1.0, 1.0};
    for (Eigen::Index i = 0; i < n; ++i) y[i] = signs[i % 4];
  } else if (model == "cauchy") {
    y = gaussian(kRecords, 2, 2.0);
  } else if (model == "phase-retrieval") {
    const Vec planted = gaussian(kFeatures, 3);
    const Vec noise = gaussian(kRecords, 4, 0.3);
    for (Eigen::Index i = 0; i < n; ++i) y[i] = std::pow(a.row(i).dot(planted), 2) + noise[i];
  } else {
    for (Eigen::Index i = 0; i < n; ++i) y[i] = static_cast<double>((i * 7) % kClasses);
  }
  return y;
}

}  // namespace dpsosp::testing::model_data
