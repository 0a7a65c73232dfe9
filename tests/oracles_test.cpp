// The clipped oracles: output, clipping counts and the replace-one sensitivity 2C/b.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/oracles.hpp"

namespace dpsosp {
namespace {

Dataset random_regression(Index n, Index p, std::uint64_t seed) {
  GaussianStream g(seed, StreamPurpose::kTest);
  RowMatrix X(n, p);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < p; ++j) X(i, j) = g.next();
    y[i] = g.next();
  }
  return Dataset(X, y);
}

TEST(OracleClip, ClipToNormScalesOnlyLongVectors) {
  Vec v(2);
  v << 3, 4;
  EXPECT_TRUE(clip_to_norm(v, 1.0));
  EXPECT_NEAR(v.norm(), 1.0, 1e-15);
  EXPECT_NEAR(v[0] / v[1], 0.75, 1e-15);
  Vec w(2);
  w << 0.3, 0.4;
  EXPECT_FALSE(clip_to_norm(w, 1.0));
  EXPECT_EQ(w[0], 0.3);
  EXPECT_FALSE(clip_to_norm(w, std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(clip_to_norm(w, 0.0));
  EXPECT_EQ(w.norm(), 0.0);
}

TEST(OracleO1, UnclippedMeanEqualsModelMeanGradient) {
  const Dataset data = random_regression(50, 3, 1);
  const auto model = make_model("phase-retrieval", 3);
  SamplePool pool(data.rows(), 7);
  GradientOracles oracles(*model, data, pool);
  Vec x(3);
  x << 0.3, -0.2, 0.5;
  const OracleOutput o = oracles.o1(x, 50, std::numeric_limits<double>::infinity());
  IndexList all(50);
  for (Index i = 0; i < 50; ++i) all[i] = i;
  const Vec expected = model->mean_gradient(x, data, all);
  EXPECT_LT((o.value - expected).norm(), 1e-12 * (1 + expected.norm()));
  EXPECT_EQ(o.clipped, 0u);
  EXPECT_EQ(o.batch, 50u);
  EXPECT_EQ(oracles.gradient_evaluations(), 50u);
  EXPECT_EQ(pool.remaining(), 0u);
}

TEST(OracleO1, CountsClippedExamples) {
  const Dataset data = random_regression(200, 4, 2);
  const auto model = make_model("phase-retrieval", 4);
  SamplePool pool(data.rows(), 3);
  GradientOracles oracles(*model, data, pool);
  const Vec x = Vec::Constant(4, 1.0);
  const double clip = 0.5;
  const OracleOutput o = oracles.o1(x, 200, clip);
  Index expected = 0;
  Vec g(4);
  for (Index i = 0; i < 200; ++i) {
    model->gradient(x, data, i, g);
    if (g.norm() > clip) ++expected;
  }
  EXPECT_EQ(o.clipped, expected);
  EXPECT_GT(expected, 0u);
  EXPECT_LE(o.value.norm(), clip + 1e-12);
}

// Property test: replacing one record of the batch by an adversarial record
// with a huge gradient moves O1 by at most 2G/b and O2 by at most 2C/b, for
// many random datasets, points and positions of the replaced record.
TEST(OracleSensitivity, ReplaceOneMovesOutputByAtMostTwoClipOverBatch) {
  const auto model = make_model("phase-retrieval", 5);
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Index n = 40, b = 16;
    const Dataset data = random_regression(n, 5, seed);
    GaussianStream g(seed, StreamPurpose::kTest, 1);
    Vec x(5), x_prev(5);
    g.fill(x);
    g.fill(x_prev, 0.1);
    x_prev += x;
    // Which records the batch holds is fixed by the pool seed; replace one of them.
    SamplePool probe(n, seed);
    const IndexList batch = probe.draw(b);
    const Index victim = batch[seed % b];
    RowMatrix X = data.dense();
    Vec y = data.labels();
    X.row(victim).setConstant(1e6);
    y[victim] = -1e9;
    const Dataset neighbour(X, y);
    const double G = 2.0, C = 20.0 * (x - x_prev).norm();

    SamplePool p1(n, seed), p2(n, seed);
    GradientOracles o1a(*model, data, p1), o1b(*model, neighbour, p2);
    const double d1 = (o1a.o1(x, b, G).value - o1b.o1(x, b, G).value).norm();
    EXPECT_LE(d1, 2.0 * G / b * (1 + 1e-12)) << "seed " << seed;
    EXPECT_GT(d1, 0.0);

    SamplePool p3(n, seed), p4(n, seed);
    GradientOracles o2a(*model, data, p3), o2b(*model, neighbour, p4);
    const double d2 = (o2a.o2(x, x_prev, b, C).value - o2b.o2(x, x_prev, b, C).value).norm();
    EXPECT_LE(d2, 2.0 * C / b * (1 + 1e-12)) << "seed " << seed;
  }
}

TEST(OracleO2, IsTheMeanGradientDifferenceAndCountsTwoEvaluations) {
  const Dataset data = random_regression(30, 3, 4);
  const auto model = make_model("phase-retrieval", 3);
  SamplePool pool(data.rows(), 5);
  GradientOracles oracles(*model, data, pool);
  Vec x(3), xp(3);
  x << 0.1, 0.2, 0.3;
  xp << 0.0, 0.25, 0.3;
  const OracleOutput o = oracles.o2(x, xp, 30, std::numeric_limits<double>::infinity());
  IndexList all(30);
  for (Index i = 0; i < 30; ++i) all[i] = i;
  const Vec expected = model->mean_gradient(x, data, all) - model->mean_gradient(xp, data, all);
  EXPECT_LT((o.value - expected).norm(), 1e-12);
  EXPECT_EQ(oracles.gradient_evaluations(), 60u);
}

TEST(OracleErrors, RejectWrongDimensionAndEmptyBatch) {
  const Dataset data = random_regression(10, 3, 6);
  const auto model = make_model("phase-retrieval", 3);
  SamplePool pool(data.rows(), 5);
  GradientOracles oracles(*model, data, pool);
  EXPECT_THROW(oracles.o1(Vec::Zero(4), 2, 1.0), Error);
  EXPECT_THROW(oracles.o1(Vec::Zero(3), 0, 1.0), Error);
  EXPECT_THROW(oracles.o1(Vec::Zero(3), 11, 1.0), Error);
}

}  // namespace
}  // namespace dpsosp
