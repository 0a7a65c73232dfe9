// Closed-form values of each model: at zero, at saturation, at the planted
// solution, and stable at extreme margins.
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

// ---------------------------------------------------------------- closed forms

TEST(ModelLogistic, ValuesAtZeroAndStableAtExtremeMargins) {
  const RowMatrix a = (RowMatrix(2, 3) << 1, -2, 0.5, 3, 0, -1).finished();
  const Dataset data(a, (Vec(2) << 1, 0).finished());  // second label 0 = -1
  const auto m = make_model("logistic", 3);
  const Vec zero = Vec::Zero(3);
  const Vec v = (Vec(3) << 0.5, 1, -1).finished();
  Vec g(3), h(3);
  for (Index i = 0; i < 2; ++i) {
    const double y = i == 0 ? 1.0 : -1.0;
    const Vec ai = a.row(static_cast<Eigen::Index>(i)).transpose();
    EXPECT_DOUBLE_EQ(m->loss(zero, data, i), std::log(2.0));
    m->gradient(zero, data, i, g);
    EXPECT_LE(relative_error(g, Vec(-0.5 * y * ai)), 1e-15);
    m->hvp(zero, data, i, v, h);
    EXPECT_LE(relative_error(h, Vec(0.25 * ai.dot(v) * ai)), 1e-15);
  }
  // Margin +-1000: exp(1000) overflows, the stable forms do not.
  const Vec far = (Vec(3) << 1000, 0, 0).finished();  // z = 1000 for record 0
  EXPECT_EQ(m->loss(far, data, 0), 0.0);              // log(1 + e^-1000) underflows to 0
  EXPECT_DOUBLE_EQ(m->loss(-far, data, 0), 1000.0);
  m->gradient(-far, data, 0, g);
  EXPECT_DOUBLE_EQ(g[0], -1.0);  // -y sigma(1000) a
  m->hvp(-far, data, 0, v, h);
  EXPECT_TRUE(h.allFinite());
  EXPECT_EQ(h.norm(), 0.0);
}

TEST(ModelSigmoid, ValuesAtZeroAndSaturation) {
  const RowMatrix a = (RowMatrix(1, 2) << 2, -1).finished();
  const Dataset data(a, (Vec(1) << -1).finished());
  const auto m = make_model("sigmoid", 2);
  const Vec v = (Vec(2) << 1, 3).finished();
  Vec g(2), h(2);
  EXPECT_DOUBLE_EQ(m->loss(Vec::Zero(2), data, 0), 0.5);
  m->gradient(Vec::Zero(2), data, 0, g);
  EXPECT_LE(relative_error(g, Vec(0.25 * a.row(0).transpose())), 1e-15);  // -y a / 4
  m->hvp(Vec::Zero(2), data, 0, v, h);
  EXPECT_EQ(h.norm(), 0.0);                       // the sigmoid loss has an inflection at margin 0
  const Vec far = (Vec(2) << 500, 0).finished();  // y z = -1000: loss -> 1
  EXPECT_DOUBLE_EQ(m->loss(far, data, 0), 1.0);
  m->gradient(far, data, 0, g);
  m->hvp(far, data, 0, v, h);
  EXPECT_TRUE(g.allFinite() && h.allFinite());
  EXPECT_LT(g.norm(), 1e-300);
}

TEST(ModelCauchy, ValuesAndHugeResiduals) {
  const RowMatrix a = (RowMatrix(2, 2) << 1, 2, 1, 0).finished();
  const Dataset data(a, (Vec(2) << 3, -1e200).finished());
  const auto m = make_model("cauchy", 2);
  const Vec x = (Vec(2) << 1, 1).finished();  // z = 3 = y for record 0
  const Vec v = (Vec(2) << 2, -1).finished();
  Vec g(2), h(2);
  EXPECT_EQ(m->loss(x, data, 0), 0.0);
  m->gradient(x, data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
  m->hvp(x, data, 0, v, h);  // f''(0) = 1: hess v = (a.v) a
  EXPECT_LE(relative_error(h, Vec(a.row(0).dot(v) * a.row(0).transpose())), 1e-15);
  const Vec shifted = (Vec(2) << 3, 1).finished();  // r = 5 - 3 = 2
  EXPECT_DOUBLE_EQ(m->loss(shifted, data, 0), std::log(3.0));
  m->gradient(shifted, data, 0, g);  // f'(2) = 4 / 6
  EXPECT_LE(relative_error(g, Vec(2.0 / 3.0 * a.row(0).transpose())), 1e-15);
  // r = 1 + 1e200: r^2 overflows, the loss is 2 log r - log 2 and stays finite.
  EXPECT_NEAR(m->loss(x, data, 1), 2.0 * 200.0 * std::log(10.0) - std::log(2.0), 1e-12);
  m->gradient(x, data, 1, g);
  m->hvp(x, data, 1, v, h);
  EXPECT_TRUE(g.allFinite() && h.allFinite());
  EXPECT_NEAR(g[0], 2e-200, 1e-214);
}

TEST(ModelPhaseRetrieval, PlantedSignalIsAStationaryPointOfZeroLoss) {
  const RowMatrix a = test_features();
  const Vec planted = gaussian(kFeatures, 3);
  Vec y(kRecords);
  const Dataset unlabelled(a, Vec());
  for (Index i = 0; i < kRecords; ++i) y[static_cast<Eigen::Index>(i)] = std::pow(unlabelled.row_dot(i, planted), 2);
  const Dataset data(a, y);
  const auto m = make_model("phase-retrieval", kFeatures);
  const Vec v = gaussian(kFeatures, 600);
  Vec g(kFeatures), h(kFeatures);
  for (Index i = 0; i < kRecords; ++i) {
    EXPECT_EQ(m->loss(planted, data, i), 0.0);
    m->gradient(planted, data, i, g);
    EXPECT_EQ(g.norm(), 0.0);
    // hess = (3 z^2 - y) a a^T = 2 z^2 a a^T at the planted point.
    const Vec ai = a.row(static_cast<Eigen::Index>(i)).transpose();
    const double z = ai.dot(planted);
    m->hvp(planted, data, i, v, h);
    EXPECT_LE(relative_error(h, Vec(2.0 * z * z * ai.dot(v) * ai), 1e-300), 1e-13);
  }
  // x = 0 is a stationary point too (a saddle when y > 0): gradient 0, hess = -y a a^T.
  m->gradient(Vec::Zero(kFeatures), data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
}

TEST(ModelSoftmax, UniformAtZeroAndShiftInvariant) {
  const RowMatrix a = test_features();
  const Vec y = test_labels("softmax", a);
  const Dataset data(a, y);
  ModelOptions o;
  o.classes = 4;
  const auto m = make_model("softmax", kFeatures, o);
  Vec g(m->dim());
  for (Index i = 0; i < kRecords; ++i) {
    EXPECT_NEAR(m->loss(Vec::Zero(m->dim()), data, i), std::log(4.0), 1e-15);
    m->gradient(Vec::Zero(m->dim()), data, i, g);
    const auto label = static_cast<Eigen::Index>(y[static_cast<Eigen::Index>(i)]);
    for (Eigen::Index k = 0; k < 4; ++k) {  // row k of grad W = (1/K - [k = y]) a
      const Vec expected = (0.25 - (k == label ? 1.0 : 0.0)) * a.row(static_cast<Eigen::Index>(i)).transpose();
      EXPECT_LE((g.segment(k * kFeatures, kFeatures) - expected).norm(), 1e-15);
    }
  }
  // Adding one vector to every row of W adds the same number to every logit:
  // the loss does not change, even when the shift makes the logits ~1e4.
  const Vec w = gaussian(m->dim(), 700);
  const Vec shift = gaussian(kFeatures, 701, 3000.0);
  Vec shifted = w;
  for (Eigen::Index k = 0; k < 4; ++k) shifted.segment(k * kFeatures, kFeatures) += shift;
  for (Index i = 0; i < kRecords; ++i) {
    const double l = m->loss(w, data, i);
    EXPECT_NEAR(m->loss(shifted, data, i), l, 1e-9 * std::max(1.0, l));
    m->gradient(shifted, data, i, g);
    EXPECT_TRUE(g.allFinite());
  }
}

TEST(ModelPca, ClosedFormsOfTheFactorisationLoss) {
  // z = (1, 2, 0, 0), U (4 x 2) with columns orthogonal to z.
  const RowMatrix z = (RowMatrix(1, 4) << 1, 2, 0, 0).finished();
  const Dataset data(z, Vec());
  ModelOptions o;
  o.rank = 2;
  const auto m = make_model("pca", 4, o);
  Eigen::MatrixXd u(4, 2);
  u << 2, 0, -1, 0, 0, 1, 0, 3;
  const Vec x = Eigen::Map<const Vec>(u.data(), 8);
  // z^T U = 0, so f = (||U^T U||^2 + ||z||^4) / 4 and grad = U (U^T U).
  const Eigen::MatrixXd gram = u.transpose() * u;
  EXPECT_NEAR(m->loss(x, data, 0), (gram.squaredNorm() + 25.0) / 4.0, 1e-13);
  Vec g(8);
  m->gradient(x, data, 0, g);
  const Eigen::MatrixXd expected = u * gram;
  EXPECT_LE(relative_error(g, Eigen::Map<const Vec>(expected.data(), 8)), 1e-15);
  // At U = [z, 0] the factorisation is exact: zero loss and zero gradient.
  Vec exact = Vec::Zero(8);
  exact.head(4) = z.row(0).transpose();
  EXPECT_EQ(m->loss(exact, data, 0), 0.0);
  m->gradient(exact, data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
  // At U = 0 the loss is ||z||^4 / 4 and the Hessian vanishes.
  EXPECT_DOUBLE_EQ(m->loss(Vec::Zero(8), data, 0), 25.0 / 4.0);
  Vec h(8);
  m->hvp(Vec::Zero(8), data, 0, x, h);
  EXPECT_LE(h.norm(), 0.0 + 1e-300);
  // At U = 0 with a rank-one direction V = [z, 0]: hess V = -z z^T V = -||z||^2 V.
  m->hvp(Vec::Zero(8), data, 0, exact, h);
  EXPECT_LE(relative_error(h, Vec(-5.0 * exact)), 1e-15);
}

TEST(ModelMlp, OutputLayerAloneIsSoftmaxOfTheBias) {
  const RowMatrix a = test_features();
  const Vec y = test_labels("mlp", a);
  const Dataset data(a, y);
  const auto m = make_model("mlp", kFeatures, test_options());  // h = 4, K = 3
  const Eigen::Index p = kFeatures, hidden = 4, k = 3;
  const Eigen::Index off_b1 = hidden * p, off_w2 = off_b1 + hidden, off_b2 = off_w2 + k * hidden;
  ASSERT_EQ(static_cast<Eigen::Index>(m->dim()), off_b2 + k);
  // W2 = 0: the logits are b2 whatever the input; the hidden layer gets no gradient.
  Vec x = gaussian(m->dim(), 800);
  x.segment(off_w2, k * hidden).setZero();
  const Vec b2 = x.tail(k);
  const double lse = std::log(b2.array().exp().sum());
  Vec g(m->dim());
  for (Index i = 0; i < kRecords; ++i) {
    const auto label = static_cast<Eigen::Index>(y[static_cast<Eigen::Index>(i)]);
    EXPECT_NEAR(m->loss(x, data, i), lse - b2[label], 1e-14);
    m->gradient(x, data, i, g);
    Vec expected = (b2.array() - lse).exp().matrix();
    expected[label] -= 1.0;
    EXPECT_LE((g.tail(k) - expected).norm(), 1e-15);
    EXPECT_EQ(g.head(off_w2).norm(), 0.0);
    // grad W2 row c = g2_c tanh(W1 a + b1).
    Vec t(hidden);
    for (Eigen::Index j = 0; j < hidden; ++j) {
      t[j] = std::tanh(a.row(static_cast<Eigen::Index>(i)).dot(x.segment(j * p, p)) + x[off_b1 + j]);
    }
    for (Eigen::Index c = 0; c < k; ++c) {
      EXPECT_LE((g.segment(off_w2 + c * hidden, hidden) - expected[c] * t).norm(), 1e-14);
    }
  }
  // All weights zero: uniform prediction, loss log K.
  EXPECT_NEAR(m->loss(Vec::Zero(m->dim()), data, 0), std::log(3.0), 1e-15);
}

}  // namespace
}  // namespace dpsosp
