// Features whose box is public by their construction (the one-hot features of
// declared categorical columns: [0, 1]; ScalingOptions::public_boxes, filled
// by RunRequest::scaling from the front end's one-hot flags) take that box as
// declared; the private estimate covers the others alone, at the noise of
// fewer columns.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/scaling.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

using testing::estimate_every_box;
using testing::private_run;
using testing::with_intercept;

// n records: feature 0 about 50 +- 10, features 1 to 3 one category of three
// one-hot; the target 200 + 3 (x0 - 50) + 20 (category 0) + noise.
Dataset with_category(Index n) {
  std::mt19937_64 g(3);
  std::normal_distribution<double> z(0, 1);
  RowMatrix X = RowMatrix::Zero(n, 4);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    X(i, 0) = 50 + 10 * z(g);
    X(i, 1 + i % 3) = 1;
    y[i] = 200 + 3 * (X(i, 0) - 50) + 20 * X(i, 1) + 5 * z(g);
  }
  return Dataset(std::move(X), std::move(y));
}

std::vector<std::optional<Interval>> one_hot_boxes() {
  return {std::nullopt, Interval{0, 1}, Interval{0, 1}, Interval{0, 1}};
}

TEST(ScalePublicBoxes, OneHotFeaturesTakeTheirBoxAndTheOthersAreEstimated) {
  const Dataset data = with_category(3000);
  const auto model = with_intercept("linear", 4);
  ScalingOptions every = estimate_every_box(), partial = every;
  partial.public_boxes = one_hot_boxes();
  RunOptions o = private_run(1.0);
  o.max_steps = 3;
  const ScaledSummary all = minimize_scaled(*model, data, Vec::Zero(5), o, every);
  const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(5), o, partial);
  for (Index j = 1; j < 4; ++j) {
    EXPECT_EQ(r.scaling.lower[j], 0.0) << j;
    EXPECT_EQ(r.scaling.upper[j], 1.0) << j;
  }
  EXPECT_GT(r.scaling.lower[0], 10.0);  // the bulk of N(50, 10)
  EXPECT_LT(r.scaling.upper[0], 90.0);
  EXPECT_EQ(r.scaling.feature_sources,
            (std::vector<std::string>{"private", "public (one-hot)", "public (one-hot)", "public (one-hot)"}));
  EXPECT_EQ(r.scaling.feature_source, "private");
  EXPECT_EQ(all.scaling.feature_sources, std::vector<std::string>(4, "private"));
  // The estimate's columns: feature 0 and the target, not the five of every box.
  EXPECT_EQ(r.scaling.columns, 2);
  EXPECT_EQ(all.scaling.columns, 5);
  EXPECT_LT(r.scaling.count_noise, all.scaling.count_noise);
  // The whole run's guarantee is the target either way.
  EXPECT_NEAR(r.summary.privacy.epsilon, all.summary.privacy.epsilon, 1e-9);
}

// Only public boxes (every feature one-hot): the target alone is estimated;
// declared bounds come first; a count that is not the features' is refused.
TEST(ScalePublicBoxes, DeclaredBoundsComeFirstAndCountsAreChecked) {
  RowMatrix X = RowMatrix::Zero(2000, 2);
  Vec y(2000);
  for (Index i = 0; i < 2000; ++i) {
    X(i, i % 2) = 1;
    y[i] = 10 + static_cast<double>(i % 7);
  }
  const Dataset data(X, y);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  so.public_boxes = {Interval{0, 1}, Interval{0, 1}};
  RunOptions o = private_run(1.0);
  o.max_steps = 3;
  const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(3), o, so);
  EXPECT_EQ(r.scaling.columns, 1);
  EXPECT_EQ(r.scaling.feature_source, "public");
  EXPECT_EQ(r.scaling.target_source, "private");
  EXPECT_EQ(r.scaling.lower, (std::vector<double>{0, 0}));
  so.bounds = {{-2, 2}};
  const ScaledSummary d = minimize_scaled(*model, data, Vec::Zero(3), o, so);
  EXPECT_EQ(d.scaling.feature_sources, std::vector<std::string>(2, "declared"));
  EXPECT_EQ(d.scaling.lower, (std::vector<double>{-2, -2}));
  so.public_boxes = {Interval{0, 1}};
  EXPECT_THROW(so.Validate(2), Error);
}

// RunRequest::scaling turns the front end's one-hot flags into public boxes.
TEST(ScalePublicBoxes, RunRequestFillsThemFromOneHotFlags) {
  const RunRequest r({}, {}, FrontEnd::kCli, false);
  const ScalingOptions so = r.scaling("linear", 3, true, false, {}, std::nullopt, {false, true, true});
  ASSERT_EQ(so.public_boxes.size(), 3u);
  EXPECT_FALSE(so.public_boxes[0].has_value());
  EXPECT_EQ(so.public_boxes[2]->lower, 0.0);
  EXPECT_EQ(so.public_boxes[2]->upper, 1.0);
  EXPECT_TRUE(r.scaling("linear", 3, true, false, {}, std::nullopt, {false, false, false}).public_boxes.empty());
  EXPECT_THROW(r.scaling("linear", 3, true, false, {}, std::nullopt, {true}), Error);
}

}  // namespace
}  // namespace dpsosp
