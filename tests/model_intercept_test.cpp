// ModelOptions::fit_intercept (a bias in each margin / logit) and the models'
// predictions (Model::predict, class_probabilities, dpsosp::predict).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_errors.hpp"
#include "test_threads.hpp"

namespace dpsosp {
namespace {

using testing::Labels;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  const char* model;
  Labels labels;
  bool sparse;
};
const Case kCases[] = {{"logistic", Labels::kBinary, false},      {"logistic", Labels::kBinary, true},
                       {"sigmoid", Labels::kBinary, false},       {"cauchy", Labels::kReal, false},
                       {"phase-retrieval", Labels::kReal, false}, {"softmax", Labels::kClasses, false},
                       {"softmax", Labels::kClasses, true}};

ModelOptions with_intercept(const std::string& model) {
  ModelOptions o;
  o.fit_intercept = true;
  if (model == "softmax") o.classes = 3;
  return o;
}

Vec random_point(Index d, std::uint32_t stream, double scale) {
  Vec v(static_cast<Eigen::Index>(d));
  GaussianStream(5, StreamPurpose::kTest, stream).fill(v, scale);
  return v;
}

// The same records with a last feature of 1: the plain model on them is the
// model with an intercept (up to the order of the dot products' sums).
Dataset with_ones_column(const Dataset& data) {
  RowMatrix a(static_cast<Eigen::Index>(data.rows()), static_cast<Eigen::Index>(data.cols() + 1));
  for (Index i = 0; i < data.rows(); ++i) {
    Vec row(static_cast<Eigen::Index>(data.cols()));
    data.row_dense(i, row);
    a.row(static_cast<Eigen::Index>(i)) << row.transpose(), 1.0;
  }
  return Dataset(std::move(a), data.labels());
}

// x laid out for the plain model on [a, 1]: the intercept model's x with the
// biases moved into the weights' rows (softmax: W is K x p row-major, then c).
Vec as_plain(const std::string& model, const Vec& x, Index p) {
  if (model != "softmax") return x;
  const Index k = static_cast<Index>(x.size()) / (p + 1);
  Vec out(x.size());
  for (Index c = 0; c < k; ++c) {
    out.segment(static_cast<Eigen::Index>(c * (p + 1)), static_cast<Eigen::Index>(p)) =
        x.segment(static_cast<Eigen::Index>(c * p), static_cast<Eigen::Index>(p));
    out[static_cast<Eigen::Index>(c * (p + 1) + p)] = x[static_cast<Eigen::Index>(k * p + c)];
  }
  return out;
}

TEST(ModelIntercept, IsAFeatureOfOnesAndPassesFiniteDifferences) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + (c.sparse ? " sparse" : " dense"));
    const Index p = 5;
    const Dataset data = testing::make_test_data(40, p, c.labels, c.sparse, 3);
    const auto model = make_model(c.model, p, with_intercept(c.model), &data);
    const Index k = std::string(c.model) == "softmax" ? 3 : 1;
    ASSERT_EQ(model->dim(), k * (p + 1));
    EXPECT_TRUE(model->options().fit_intercept);
    const Dataset ones = with_ones_column(data);
    ModelOptions plain_options = with_intercept(c.model);
    plain_options.fit_intercept = false;
    const auto plain = make_model(c.model, p + 1, plain_options, &ones);
    const Vec x = random_point(model->dim(), 1, 0.4);
    const Vec v = random_point(model->dim(), 2, 1.0);
    Vec g(static_cast<Eigen::Index>(model->dim())), h(g.size()), g1(g.size()), h1(g.size());
    for (Index i = 0; i < data.rows(); i += 7) {
      model->gradient(x, data, i, g);
      model->hvp(x, data, i, v, h);
      plain->gradient(as_plain(c.model, x, p), ones, i, g1);
      plain->hvp(as_plain(c.model, x, p), ones, i, as_plain(c.model, v, p), h1);
      EXPECT_NEAR(model->loss(x, data, i), plain->loss(as_plain(c.model, x, p), ones, i), 1e-12);
      EXPECT_LT((as_plain(c.model, g, p) - g1).norm(), 1e-12 * (1 + g1.norm()));
      EXPECT_LT((as_plain(c.model, h, p) - h1).norm(), 1e-12 * (1 + h1.norm()));
      const GradientCheckResult r = check_model_derivatives(*model, data, i, x, v);
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
}

// The oracles' fused sums with an intercept give the reference form's bits
// (rows of batch_gradients, clipped, added in order), alone and shared.
TEST(ModelIntercept, FusedSumsEqualTheReferenceForm) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + (c.sparse ? " sparse" : " dense"));
    const Dataset data = testing::make_test_data(3000, 17, c.labels, c.sparse, 9);
    const auto model = make_model(c.model, 17, with_intercept(c.model), &data);
    const Vec x = random_point(model->dim(), 3, 0.3);
    const Vec x_prev = x + random_point(model->dim(), 4, 0.05);
    const IndexList idx = SamplePool(data.rows(), 4).draw(1500);
    for (double clip : {kInf, 0.2}) {
      RowMatrix rows, prev;
      model->batch_gradients(x, data, idx, rows);
      model->batch_gradients(x_prev, data, idx, prev);
      RowMatrix diff = rows - prev;
      Vec want1 = Vec::Zero(static_cast<Eigen::Index>(model->dim())), want2 = want1;
      for (Eigen::Index r = 0; r < rows.rows(); ++r) {
        Vec a = rows.row(r).transpose(), b = diff.row(r).transpose();
        clip_to_norm(a, clip);
        clip_to_norm(b, clip);
        want1 += a;
        want2 += b;
      }
      for (int mode : {1, 2}) {
        testing::ForcedThreads forced(mode, mode);
        const ClippedSum got1 = model->clipped_gradient_sum(x, data, idx, clip);
        const ClippedSum got2 = model->clipped_difference_sum(x, x_prev, data, idx, clip);
        EXPECT_EQ(std::memcmp(got1.sum.data(), want1.data(), sizeof(double) * want1.size()), 0) << "O1, " << mode;
        EXPECT_EQ(std::memcmp(got2.sum.data(), want2.data(), sizeof(double) * want2.size()), 0) << "O2, " << mode;
      }
    }
  }
}

TEST(ModelIntercept, RefusedWhereItHasNoMeaning) {
  ModelOptions o;
  o.fit_intercept = true;
  EXPECT_CONTAINS(testing::error_of([&] { make_model("pca", 4, o); }), "pca has no intercept");
  o.classes = 3;
  EXPECT_CONTAINS(testing::error_of([&] { make_model("mlp", 4, o); }), "mlp has biases of its own");
}

// A shifted decision boundary (label = [a_0 > 1]) needs the bias: a non-private
// run fits it with an intercept, and predict agrees with the accuracy.
TEST(ModelIntercept, FitsAShiftedBoundaryAndPredictAgreesWithAccuracy) {
  const Dataset data = testing::make_test_data(20000, 2, Labels::kNone, false, 4);
  RowMatrix a = data.dense();
  Vec y(a.rows());
  for (Eigen::Index i = 0; i < a.rows(); ++i) y[i] = a(i, 0) > 1.0 ? 1.0 : 0.0;
  const Dataset labelled(std::move(a), y);
  RunOptions o;
  o.algorithm = Algorithm::kSgd;
  o.seed = 1;
  o.batch_size = 50;
  o.learning_rate = 2.0;
  double accuracy[2];
  for (bool bias : {false, true}) {
    ModelOptions mo;
    mo.fit_intercept = bias;
    const auto model = make_model("logistic", 2, mo);
    const Summary s = minimize(*model, labelled, Vec::Zero(static_cast<Eigen::Index>(model->dim())), o);
    accuracy[bias] = model->accuracy(s.x, labelled);
    const Vec predicted = predict(*model, s.x, labelled);
    Index right = 0;
    for (Index i = 0; i < labelled.rows(); ++i) right += predicted[static_cast<Eigen::Index>(i)] == y[i];
    EXPECT_DOUBLE_EQ(static_cast<double>(right) / 20000.0, accuracy[bias]);
    const RowMatrix proba = predict_proba(*model, s.x, labelled);
    for (Eigen::Index i = 0; i < 50; ++i) {
      EXPECT_NEAR(proba(i, 0) + proba(i, 1), 1.0, 1e-15);
      EXPECT_EQ(predicted[i], proba(i, 1) > 0.5 ? 1.0 : 0.0);
    }
  }
  EXPECT_LT(accuracy[false], 0.9);  // the boundary through 0 misses about P(0 < a_0 < 1) = 34%
  EXPECT_GT(accuracy[true], 0.97);
}

TEST(ModelPredict, EveryModelPredictsOrSaysItDoesNot) {
  const Dataset classes = testing::make_test_data(30, 4, Labels::kClasses, false, 2);
  ModelOptions o;
  o.classes = 3;
  o.hidden = 3;
  for (const char* name : {"softmax", "mlp"}) {
    const auto model = make_model(name, 4, o);
    const Vec x = random_point(model->dim(), 7, 0.5);
    EXPECT_EQ(model->classes(), 3u);
    const Vec predicted = predict(*model, x, classes);
    const RowMatrix proba = predict_proba(*model, x, classes);
    for (Index i = 0; i < classes.rows(); ++i) {
      Eigen::Index best = 0;
      proba.row(static_cast<Eigen::Index>(i)).maxCoeff(&best);
      EXPECT_EQ(predicted[static_cast<Eigen::Index>(i)], static_cast<double>(best)) << name;
      EXPECT_EQ(*model->correct(x, classes, i), predicted[static_cast<Eigen::Index>(i)] == classes.label(i));
    }
    const auto again = make_model(name, 4, model->options());
    EXPECT_EQ(again->dim(), model->dim());
  }
  const Dataset real = testing::make_test_data(10, 4, Labels::kReal, false, 2);
  const auto cauchy = make_model("cauchy", 4);
  const Vec x = random_point(4, 8, 1.0);
  EXPECT_DOUBLE_EQ(predict(*cauchy, x, real)[3], real.row_dot(3, x));
  EXPECT_CONTAINS(testing::error_of([&] { predict_proba(*cauchy, x, real); }), "cauchy is not a classifier");
  const auto pca = make_model("pca", 4);
  EXPECT_CONTAINS(testing::error_of([&] { predict(*pca, x, real); }), "pca makes no predictions");
  const Dataset wide = testing::make_test_data(10, 5, Labels::kNone, false, 2);
  EXPECT_CONTAINS(testing::error_of([&] { predict(*cauchy, x, wide); }), "the data have 5 features per record");
}

}  // namespace
}  // namespace dpsosp
