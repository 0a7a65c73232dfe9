// Tests of the per-example models: derivatives against finite differences,
// exact agreement of the batched form, dense vs sparse storage, label rules and
// closed-form values.
#include <gtest/gtest.h>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/gradient_check.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "model_test_data.hpp"

namespace dpsosp {
namespace {

using namespace testing::model_data;

struct Problem {
  std::unique_ptr<Model> model;
  Dataset dense;
  Dataset sparse;
};

Problem make_problem(const std::string& name) {
  const RowMatrix a = test_features();
  const Vec y = test_labels(name, a);
  Problem p;
  p.dense = Dataset(a, y);
  p.sparse = Dataset(SparseRowMatrix(a.sparseView()), y);
  p.model = make_model(name, kFeatures, test_options(), &p.dense);
  return p;
}

// A random point of moderate scale (tanh and sigmoid not saturated, margins O(1)).
Vec test_point(const Model& model, std::uint32_t k) { return gaussian(model.dim(), 100 + k, 0.6); }

class ModelAllTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelAllTest, GradientAndHvpMatchFiniteDifferences) {
  const Problem p = make_problem(GetParam());
  GradientCheckOptions options;  // Richardson-extrapolated central differences, step 1e-4
  options.tolerance = 1e-7;
  double worst_gradient = 0.0, worst_hvp = 0.0;
  for (const Dataset* data : {&p.dense, &p.sparse}) {
    p.model->validate(*data);
    for (std::uint32_t k = 0; k < 3; ++k) {
      const Vec x = test_point(*p.model, k);
      const Vec v = gaussian(p.model->dim(), 200 + k);
      for (Index i : {Index{0}, Index{2}, kZeroRow, Index{7}, Index{11}}) {
        const GradientCheckResult r = check_model_derivatives(*p.model, *data, i, x, v, options);
        EXPECT_TRUE(r.ok) << r.message;
        worst_gradient = std::max(worst_gradient, r.gradient_error);
        worst_hvp = std::max(worst_hvp, r.hvp_error);
      }
    }
  }
  // Plain central differences (step 1e-6, no extrapolation) as a second,
  // independent estimate at the looser tolerance they allow.
  GradientCheckOptions plain;
  plain.step = 1e-6;
  plain.richardson = false;
  plain.tolerance = 1e-5;
  const Vec x = test_point(*p.model, 9);
  const GradientCheckResult r = check_model_derivatives(*p.model, p.dense, 5, x, gaussian(p.model->dim(), 209), plain);
  EXPECT_TRUE(r.ok) << r.message;
  std::ostringstream worst;
  worst << std::scientific << std::setprecision(2) << "gradient " << worst_gradient << ", hvp " << worst_hvp;
  RecordProperty("worst_relative_errors", worst.str());
}

TEST_P(ModelAllTest, BatchGradientsEqualGradientBitForBit) {
  const Problem p = make_problem(GetParam());
  const IndexList idx = {5, 0, kZeroRow, 11, 5, 7, 1};  // unsorted, with a repeat
  for (const Dataset* data : {&p.dense, &p.sparse}) {
    const Vec x = test_point(*p.model, 1);
    RowMatrix batch(1, 1);
    p.model->batch_gradients(x, *data, idx, batch);
    ASSERT_EQ(batch.rows(), static_cast<Eigen::Index>(idx.size()));
    ASSERT_EQ(batch.cols(), static_cast<Eigen::Index>(p.model->dim()));
    Vec g(p.model->dim());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      p.model->gradient(x, *data, idx[k], g);
      const Vec row = batch.row(static_cast<Eigen::Index>(k)).transpose();
      EXPECT_EQ((row - g).cwiseAbs().maxCoeff(), 0.0) << "row " << k;
      for (Eigen::Index j = 0; j < g.size(); ++j) ASSERT_EQ(row[j], g[j]) << "row " << k << " entry " << j;
    }
    // Reusing the output buffer (as the oracles do) changes nothing.
    RowMatrix again = batch;
    p.model->batch_gradients(x, *data, idx, again);
    EXPECT_EQ((again - batch).cwiseAbs().maxCoeff(), 0.0);
    // An empty batch gives an empty matrix of the right width.
    p.model->batch_gradients(x, *data, {}, again);
    EXPECT_EQ(again.rows(), 0);
    EXPECT_EQ(again.cols(), static_cast<Eigen::Index>(p.model->dim()));
  }
}

TEST_P(ModelAllTest, DenseAndSparseStorageAgree) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 2);
  const Vec v = gaussian(p.model->dim(), 300);
  Vec gd(p.model->dim()), gs(p.model->dim()), hd(p.model->dim()), hs(p.model->dim());
  for (Index i = 0; i < kRecords; ++i) {
    const double ld = p.model->loss(x, p.dense, i);
    EXPECT_NEAR(ld, p.model->loss(x, p.sparse, i), 1e-12 * std::max(1.0, std::abs(ld))) << "record " << i;
    p.model->gradient(x, p.dense, i, gd);
    p.model->gradient(x, p.sparse, i, gs);
    EXPECT_LE(relative_error(gd, gs, 1.0), 1e-12) << "record " << i;
    p.model->hvp(x, p.dense, i, v, hd);
    p.model->hvp(x, p.sparse, i, v, hs);
    EXPECT_LE(relative_error(hd, hs, 1.0), 1e-12) << "record " << i;
  }
}

TEST_P(ModelAllTest, HvpIsSymmetricAndLinear) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 3);
  const Vec u = gaussian(p.model->dim(), 400);
  const Vec v = gaussian(p.model->dim(), 401);
  Vec hu(p.model->dim()), hv(p.model->dim()), hsum(p.model->dim());
  for (Index i = 0; i < kRecords; ++i) {
    p.model->hvp(x, p.sparse, i, u, hu);
    p.model->hvp(x, p.sparse, i, v, hv);
    const double scale = std::max(1.0, hu.norm() * v.norm());
    EXPECT_NEAR(v.dot(hu), u.dot(hv), 1e-12 * scale) << "record " << i;
    p.model->hvp(x, p.sparse, i, Vec(2.0 * u - v), hsum);
    EXPECT_LE(relative_error(hsum, Vec(2.0 * hu - hv), 1.0), 1e-12) << "record " << i;
  }
}

TEST_P(ModelAllTest, MeanHelpersAverageThePerExampleValues) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 4);
  const Vec v = gaussian(p.model->dim(), 500);
  const IndexList idx = {1, 4, 9, 10};
  double loss = 0.0;
  Vec grad = Vec::Zero(p.model->dim()), hess_v = Vec::Zero(p.model->dim()), work(p.model->dim());
  for (Index i : idx) {
    loss += p.model->loss(x, p.dense, i) / 4.0;
    p.model->gradient(x, p.dense, i, work);
    grad += work / 4.0;
    p.model->hvp(x, p.dense, i, v, work);
    hess_v += work / 4.0;
  }
  EXPECT_NEAR(p.model->mean_loss(x, p.dense, idx), loss, 1e-12 * std::max(1.0, std::abs(loss)));
  EXPECT_LE(relative_error(p.model->mean_gradient(x, p.dense, idx), grad, 1.0), 1e-12);
  EXPECT_LE(relative_error(p.model->mean_hvp(x, p.dense, idx, v), hess_v, 1.0), 1e-12);
  EXPECT_THROW(p.model->mean_loss(x, p.dense, {}), Error);
}

TEST_P(ModelAllTest, RejectsPointsOfTheWrongSizeAndForeignFeatureCounts) {
  const Problem p = make_problem(GetParam());
  const Vec wrong = Vec::Zero(p.model->dim() + 1);
  Vec out(p.model->dim());
  EXPECT_THROW(p.model->loss(wrong, p.dense, 0), Error);
  EXPECT_THROW(p.model->gradient(wrong, p.dense, 0, out), Error);
  EXPECT_THROW(p.model->hvp(test_point(*p.model, 0), p.dense, 0, wrong, out), Error);
  const Dataset wide(RowMatrix::Zero(2, kFeatures + 1), p.dense.has_labels() ? Vec::Zero(2) : Vec());
  try {
    p.model->validate(wide);
    FAIL() << "validate accepted 7 features for a 6-feature model";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), (GetParam() + ": the data have 7 features per record, expected 6 "
                                         "(the model was built for that many)")
                               .c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Model, ModelAllTest, ::testing::ValuesIn(model_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace dpsosp
