// The private scale estimate composed with the run (include/dpsosp/scaling.hpp):
// exactly by GDP for a single pass, by PLD for Poisson-sampled runs, by zCDP in
// secure mode; a regression target's part of the estimate's budget.
#include "dpsosp/scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/report.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

using testing::estimate_every_box;
using testing::private_run;
using testing::regression;
using testing::with_intercept;

// scale_share auto (automatic_scale_share): 0.25 where the counts' 2.5 sigma
// is not under n / 5 at it, unless step 1's counts (one histogram, sigma /
// sqrt(2)) stand under 6 sigma of n there: then the least share in [0.25,
// 0.4] at which they reach it; else the least share in [0.1, 0.25] that keeps
// 2.5 sigma under n / 5; a public function of n, the columns and the target.
// Known answers from scale_count_noise: sigma = 2 sqrt(C) / (sqrt(s) mu)
// (single pass).
TEST(Scaling, AutomaticShareKeepsTheCountsReadable) {
  const RunOptions run = private_run(1.0);
  const double mu = privacy::gdp_mu(1.0, 1e-6);
  const auto sigma = [&](Index C, double s) { return 2 * std::sqrt(static_cast<double>(C)) / (std::sqrt(s) * mu); };
  // A few hundred records of 30 columns: no room, the full 0.25 (step 1's
  // 6 sigma, 392.5, is under n).
  EXPECT_EQ(automatic_scale_share(30, 400, run), 0.25);
  // Fewer: step 1's 6 sigma reaches n at a larger share (360 records: 0.297),
  // at most 0.4 (wine's 133 training records of 13 columns).
  const double few = automatic_scale_share(30, 360, run);
  EXPECT_NEAR(6 * sigma(30, few) / std::sqrt(2.0), 360, 1e-6 * 360);
  EXPECT_NEAR(few, 0.25 * std::pow(6 * sigma(30, 0.25) / std::sqrt(2.0) / 360, 2), 1e-9);
  EXPECT_GT(few, 0.29);
  EXPECT_LT(few, 0.3);
  EXPECT_EQ(automatic_scale_share(13, 133, run), 0.4);
  // 8000 records of 784 columns (npm's digits): 2.5 sigma = n / 5 at the share.
  const double s = automatic_scale_share(784, 8000, run);
  EXPECT_GT(s, 0.1);
  EXPECT_LT(s, 0.25);
  EXPECT_NEAR(2.5 * sigma(784, s), 0.2 * 8000, 1e-6 * 8000);
  EXPECT_NEAR(s, 0.25 * std::pow(2.5 * sigma(784, 0.25) / (0.2 * 8000), 2), 1e-9);
  // Many records: the least share, 0.1.
  EXPECT_EQ(automatic_scale_share(10, 100000, run), 0.1);
  // A non-private run: nothing to share.
  RunOptions exact = run;
  exact.privacy->epsilon = std::numeric_limits<double>::infinity();
  EXPECT_EQ(automatic_scale_share(784, 8000, exact), 0.25);
  // A run given it: the share of the report; the rule's where automatic, but
  // 0.25 where a regression's target is estimated.
  const Dataset data = regression(20000, 5);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  so.automatic_share = true;
  EXPECT_EQ(minimize_scaled(*model, data, Vec::Zero(3), run, so).scaling.share, 0.25);
  Vec labels(data.rows());  // a classifier's labels on the same features
  for (Index i = 0; i < data.rows(); ++i) labels[i] = data.label(i) > 200 ? 1.0 : 0.0;
  const Dataset classes(RowMatrix(data.dense()), labels);
  const auto logistic = with_intercept("logistic", 2);
  so.target = so.estimate_target = false;
  EXPECT_LT(automatic_scale_share(2, 20000, run), 0.25);
  EXPECT_EQ(minimize_scaled(*logistic, classes, Vec::Zero(3), run, so).scaling.share,
            automatic_scale_share(2, 20000, run));
  so.automatic_share = false;
  EXPECT_EQ(minimize_scaled(*logistic, classes, Vec::Zero(3), run, so).scaling.share, 0.25);
}

// The composed guarantee: the estimate at sqrt(share) mu and the run at
// sqrt(1 - share) mu are mu-GDP together, the target (docs/privacy-accounting.md):
// eps = gdp_epsilon(sqrt(mu_s^2 + mu_r^2), delta), as `dpsosp privacy` gives for
// a Gaussian of noise multiplier 1 / mu.
TEST(Scaling, ComposedGuaranteeIsTheTarget) {
  const Dataset data = regression(3000, 5);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  for (double eps : {1.0, 3.0}) {
    const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(3), private_run(eps), so);
    const double mu = privacy::gdp_mu(eps, 1e-6);
    EXPECT_NEAR(r.scaling.mu, std::sqrt(0.25) * mu, 1e-12);
    EXPECT_NEAR(r.summary.privacy.mu, mu, 1e-6 * mu);
    EXPECT_NEAR(r.summary.privacy.epsilon, eps, 1e-5);
    EXPECT_EQ(r.scaling.composition, "gdp");
    EXPECT_EQ(r.scaling.columns, 3);
    EXPECT_NEAR(r.scaling.count_noise, 2 * std::sqrt(3.0) / r.scaling.mu, 1e-9);
    EXPECT_EQ(r.scaling.histograms, 2);
    ASSERT_TRUE(r.x_user.has_value());
  }
  // At n = 100 the second histogram could not be read (2.5 sigma >= n / 4 for
  // sigma = 2 sqrt(3) / mu_s, about 25 at eps 1): the first alone, sigma =
  // sqrt(2 * 3) / mu_s, and the whole is still the target.
  const ScaledSummary small = minimize_scaled(*model, regression(100, 5), Vec::Zero(3), private_run(1.0), so);
  EXPECT_EQ(small.scaling.histograms, 1);
  EXPECT_NEAR(small.scaling.count_noise, std::sqrt(6.0) / small.scaling.mu, 1e-9);
  EXPECT_NEAR(small.summary.privacy.epsilon, 1.0, 1e-5);
  // Secure noise: zCDP, rho_s = s rho, discrete counts of scale ceil(sqrt(2C / rho_s)) (two histograms).
  RunOptions secure = private_run(1.0);
  secure.privacy->noise = NoiseMode::kSecure;
  const ScaledSummary z = minimize_scaled(*model, regression(3000, 5), Vec::Zero(3), secure, so);
  const double rho = privacy::zcdp_rho(1.0, 1e-6);
  EXPECT_EQ(z.scaling.composition, "zcdp");
  EXPECT_EQ(z.scaling.histograms, 2);
  EXPECT_NEAR(z.scaling.rho, 0.25 * rho, 1e-15);
  EXPECT_EQ(z.scaling.count_noise, std::ceil(std::sqrt(2.0 * 3 / (0.25 * rho))));
  // The whole is within the target (the run's calibration on its grid is a little conservative).
  EXPECT_LE(z.summary.privacy.zcdp_rho, rho * (1 + 1e-12));
  EXPECT_GT(z.summary.privacy.zcdp_rho, 0.99 * rho);
}

// A Poisson-sampled run (the default single pass, replace-one) composes the
// estimate's Gaussian, sqrt(share) mu-GDP, into its own PLD: the whole is the
// target, as dpsgd_pld_epsilon of the run's q, z and cycles with that prior
// reproduces; the counts' noise is that of the GDP split (not of basic
// composition's (share eps, delta / 2)). Under RDP the two compose basically.
TEST(Scaling, PoissonRunsComposeTheEstimateByPld) {
  const Dataset data = regression(3000, 5);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  RunOptions o = private_run(1.0);
  o.sampling = Sampling::kPoisson;
  o.privacy->adjacency = Adjacency::kReplaceOne;
  const double mu = privacy::gdp_mu(1.0, 1e-6);
  EXPECT_NEAR(scale_count_noise(3, o, 0.25), 2 * std::sqrt(3.0) / (0.5 * mu), 1e-9);
  const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(3), o, so);
  EXPECT_EQ(r.scaling.composition, "pld");
  EXPECT_NEAR(r.scaling.mu, 0.5 * mu, 1e-12);
  const PrivacyRecord& p = r.summary.privacy;
  EXPECT_LE(p.epsilon, 1.0 + 1e-9);
  EXPECT_GT(p.epsilon, 0.999);
  // The G/M estimate is shared (clip_estimate.hpp): on kSharedRecords times
  // its records, which the run keeps, at 1 / kSharedRecords of what GDP
  // composition with the scale's prior leaves, composed into the prior.
  ASSERT_TRUE(r.summary.estimate.has_value());
  EXPECT_TRUE(r.summary.estimate->shared);
  EXPECT_EQ(r.summary.reserved_records, 0);
  EXPECT_EQ(r.summary.estimate->records, kSharedRecords * estimate_records(3000));
  EXPECT_NEAR(r.summary.estimate->mu, std::sqrt(mu * mu - r.scaling.mu * r.scaling.mu) / kSharedRecords, 1e-9);
  const double prior = std::hypot(r.scaling.mu, r.summary.estimate->mu);
  EXPECT_NEAR(p.prior_mu, prior, 1e-15);
  const double whole = privacy::dpsgd_pld_epsilon(p.sampling_rate, p.noise_multiplier / 2, p.cycles, 1e-6,
                                                  privacy::Neighbouring::kReplaceOne, {}, prior);
  EXPECT_NEAR(whole, p.epsilon, 1e-12);  // the whole: the run's steps after both priors
  EXPECT_GT(whole, 0.999);
  EXPECT_LT(privacy::dpsgd_pld_epsilon(p.sampling_rate, p.noise_multiplier / 2, p.cycles, 1e-6,
                                       privacy::Neighbouring::kReplaceOne, {}, r.scaling.mu),
            whole - 1e-3);  // the estimate's share is counted
  EXPECT_GT(whole, privacy::dpsgd_pld_epsilon(p.sampling_rate, p.noise_multiplier / 2, p.cycles, 1e-6,
                                              privacy::Neighbouring::kReplaceOne) +
                       0.05);
  EXPECT_LE(p.epsilon_replace_one, 1.0 + 1e-9);
  o.privacy->adjacency = Adjacency::kZeroOut;
  o.accountant = Accountant::kRdp;
  const ScaledSummary b = minimize_scaled(*model, data, Vec::Zero(3), o, so);
  EXPECT_EQ(b.scaling.composition, "basic");
  EXPECT_NEAR(b.scaling.mu, privacy::gdp_mu(0.25, 0.5e-6), 1e-9);
  // A prior on a run that cannot compose it is refused.
  RunOptions order = private_run(1.0);
  order.privacy->prior_mu = 0.1;
  EXPECT_THROW(order.Validate(), Error);
}

// A regression target estimated with C - 1 features takes w = max(1/C, 1/4)
// of mu_s^2: its counts' noise 2 / (sqrt(w) mu_s), the features' 2 sqrt((C - 1)
// / (1 - w)) / mu_s, and the parts' GDP adds up to mu_s (scaling.hpp).
TEST(Scaling, RegressionTargetTakesItsPartOfTheEstimate) {
  const ScalingOptions so = estimate_every_box();
  RowMatrix X(3000, 7);
  Vec y(3000);
  std::mt19937_64 g(11);
  std::normal_distribution<double> z(0, 1);
  for (Index i = 0; i < 3000; ++i) {
    for (Index j = 0; j < 7; ++j) X(i, j) = 10 * z(g);
    y[i] = 200 + 50 * z(g);
  }
  const auto model = with_intercept("linear", 7);
  const ScaledSummary r = minimize_scaled(*model, Dataset(X, y), Vec::Zero(8), private_run(1.0), so);
  ASSERT_EQ(r.scaling.columns, 8);
  ASSERT_EQ(r.scaling.histograms, 2);
  const double mu_s = r.scaling.mu, w = 0.25;
  EXPECT_NEAR(r.scaling.target_count_noise, 2 / (std::sqrt(w) * mu_s), 1e-9);
  EXPECT_NEAR(r.scaling.count_noise, 2 * std::sqrt(7 / (1 - w)) / mu_s, 1e-9);
  // Two histograms of C columns at sigma_c: mu^2 = sum_c 4 / sigma_c^2.
  const double parts = 7 * 4 / std::pow(r.scaling.count_noise, 2) + 4 / std::pow(r.scaling.target_count_noise, 2);
  EXPECT_NEAR(std::sqrt(parts), mu_s, 1e-12);
  EXPECT_LT(r.scaling.y_lower, 200);
  EXPECT_GT(r.scaling.y_upper, 200);
  EXPECT_LT(r.scaling.y_upper - r.scaling.y_lower, 1000);
  // Features alone (a classifier): equal parts, as before.
  ScalingOptions features = so;
  features.target = false;
  const auto logistic = with_intercept("logistic", 7);
  Vec labels(3000);
  for (Index i = 0; i < 3000; ++i) labels[i] = X(i, 0) > 0 ? 1 : 0;
  const ScaledSummary c = minimize_scaled(*logistic, Dataset(X, labels), Vec::Zero(8), private_run(1.0), features);
  EXPECT_EQ(c.scaling.target_count_noise, 0);
  EXPECT_NEAR(c.scaling.count_noise, 2 * std::sqrt(7.0) / c.scaling.mu, 1e-9);
}

// The public noise rule (noise_warning): sqrt(d) / (n mu) against 0.15 for a
// classifier and 0.04 for a regression (docs/own-table.md, "Noise warning"),
// from n, d and the target alone; a scaled regression run on few records says
// so in its warnings, and on many it does not.
TEST(Scaling, NoiseWarningIsThePublicRule) {
  const RunOptions run = private_run(1.0);
  const double mu = privacy::gdp_mu(1.0, 1e-6);
  const auto n_at = [&](double r, Index d) {  // the n at which sqrt(d) / (n mu) = r
    return static_cast<Index>(std::ceil(std::sqrt(static_cast<double>(d)) / (r * mu)));
  };
  EXPECT_EQ(noise_warning(n_at(0.15, 42), 42, run), "");  // just under 0.15
  EXPECT_EQ(noise_warning(n_at(0.15, 42) - 1, 42, run).rfind(kNoiseSwampsWords, 0), 0U);
  EXPECT_EQ(noise_warning(n_at(0.04, 13), 13, run, true), "");
  const std::string w = noise_warning(n_at(0.04, 13) - 1, 13, run, true);
  EXPECT_EQ(w.rfind(kNoiseSwampsWords, 0), 0U);
  EXPECT_NE(w.find(">= 0.04 (regression)"), std::string::npos) << w;
  EXPECT_NE(w.find("predicting the mean"), std::string::npos) << w;
  EXPECT_EQ(noise_warning(n_at(0.04, 13) - 1, 13, run, false), "");  // a classifier's 0.15 is far off
  RunOptions exact = run;
  exact.privacy->epsilon = std::numeric_limits<double>::infinity();
  EXPECT_EQ(noise_warning(10, 13, exact, true), "");
  // End to end: a linear run with its target estimated, at eps 1.
  const auto model = with_intercept("linear", 2);  // d = 3: the rule's n is 183
  const auto warned = [&](Index n) {
    const Summary s = minimize_scaled(*model, regression(n, 3), Vec::Zero(3), run, estimate_every_box()).summary;
    for (const std::string& m : s.warnings)
      if (m.rfind(kNoiseSwampsWords, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(warned(150));
  EXPECT_FALSE(warned(2000));
}

// Where the G/M estimate would have too few records for its noise (small n,
// small eps), the run takes the public constants on the unit box: G a quarter
// of its cap slope sqrt(r2), a sixth deeper in the noise
// (few_records_clip_fraction), and M a quarter of curvature r2 (r2 = features
// + 1 with the intercept; scaling.cpp), for a classifier and a regression
// alike; with many records the estimate sets them.
TEST(Scaling, FewRecordsClipAtAPublicFractionOfTheCaps) {
  // eps 1, delta 1e-6, share 0.25: the run's mu is about 0.205; G and M
  // estimated (20 rounds): the ratio of few_records_clip_fraction is
  // (n / 10) / (4 sqrt(20) / 0.205), about n / 870: 0.115 at n = 100 (deep:
  // G_cap / 6), 0.17 at n = 150 (between), 0.69 at n = 600 (G_cap / 4).
  const RunOptions run = private_run(1.0);
  const auto linear = with_intercept("linear", 2);  // slope 1, curvature 1, r2 = 3
  const double cap = std::sqrt(3.0);
  const ScaledSummary deep = minimize_scaled(*linear, regression(100, 3), Vec::Zero(3), run, estimate_every_box());
  EXPECT_TRUE(deep.scaling.public_constants);
  EXPECT_DOUBLE_EQ(deep.summary.constants.G, cap / 6);
  EXPECT_DOUBLE_EQ(deep.summary.constants.M, 0.25 * 3.0);
  const ScaledSummary between = minimize_scaled(*linear, regression(150, 3), Vec::Zero(3), run, estimate_every_box());
  EXPECT_TRUE(between.scaling.public_constants);
  EXPECT_GT(between.summary.constants.G, cap / 6);
  EXPECT_LT(between.summary.constants.G, cap / 4);
  EXPECT_DOUBLE_EQ(between.summary.constants.M, 0.25 * 3.0);
  const ScaledSummary edge = minimize_scaled(*linear, regression(600, 3), Vec::Zero(3), run, estimate_every_box());
  EXPECT_TRUE(edge.scaling.public_constants);
  EXPECT_DOUBLE_EQ(edge.summary.constants.G, cap / 4);
  const auto logistic = with_intercept("logistic", 2);  // slope 1, curvature 1/4, r2 = 3
  Dataset labels = regression(100, 4);
  Vec y(100);
  for (Index i = 0; i < 100; ++i) y[i] = labels.label(i) > 200 ? 1.0 : 0.0;
  ScalingOptions features;
  features.estimate_features = true;
  const ScaledSummary c =
      minimize_scaled(*logistic, Dataset(RowMatrix(labels.dense()), y), Vec::Zero(3), run, features);
  EXPECT_TRUE(c.scaling.public_constants);
  EXPECT_DOUBLE_EQ(c.summary.constants.G, cap / 6);
  EXPECT_DOUBLE_EQ(c.summary.constants.M, 0.25 * 0.25 * 3.0);
  const ScaledSummary many = minimize_scaled(*linear, regression(20000, 3), Vec::Zero(3), run, estimate_every_box());
  EXPECT_FALSE(many.scaling.public_constants);
}

// The diagnostics (not released) say how many records each box clipped: the
// exact shares outside the declared boxes, feature by feature and the
// target's; a run that maps no feature and no target reports none.
TEST(Scaling, DiagnosticsSayWhatShareEachBoxClipped) {
  const Index n = 400;
  const Dataset data = regression(n, 11);
  double below = 0, above = 0, target = 0;
  for (Index i = 0; i < n; ++i) {
    below += data.dense()(i, 0) < 45;
    above += data.dense()(i, 0) > 60;
    target += data.label(i) < 180 || data.label(i) > 220;
  }
  ASSERT_GT(below + above, 0);
  ASSERT_GT(target, 0);
  ScalingOptions so;
  so.target = true;
  so.bounds = {Interval{45, 60}, Interval{-1, 1}};
  so.y_bounds = Interval{180, 220};
  const auto linear = with_intercept("linear", 2);
  const ScaledSummary r = minimize_scaled(*linear, data, Vec::Zero(3), private_run(3.0), so);
  const Diagnostics& d = r.summary.diagnostics;
  ASSERT_EQ(d.outside_box.size(), 2u);
  EXPECT_DOUBLE_EQ(d.outside_box[0], (below + above) / n);
  EXPECT_EQ(d.outside_box[1], 0.0);  // the second feature's values are about 0.01
  EXPECT_DOUBLE_EQ(d.target_outside_box, target / n);
  const nlohmann::json j = diagnostics_report(r.summary, FrontEnd::kCli);
  EXPECT_DOUBLE_EQ(j.at("outside_box").at("features").at(0).get<double>(), (below + above) / n);
  RunOptions plain = private_run(3.0);
  plain.estimate.G = plain.estimate.M = false;
  const Summary none = minimize(*linear, data, Vec::Zero(3), plain);
  EXPECT_TRUE(none.diagnostics.outside_box.empty());
  EXPECT_FALSE(diagnostics_report(none, FrontEnd::kCli).contains("outside_box"));
}

TEST(Scaling, FewRecordsClipFractionFallsDeeperInTheNoise) {
  EXPECT_EQ(few_records_clip_fraction(0.0), kFewRecordsClipLow);
  EXPECT_EQ(few_records_clip_fraction(kFewRecordsDeep), kFewRecordsClipLow);
  EXPECT_EQ(few_records_clip_fraction(std::nan("")), kFewRecordsClipLow);
  EXPECT_DOUBLE_EQ(few_records_clip_fraction(2 * kFewRecordsDeep), kFewRecordsClipHigh);
  EXPECT_EQ(few_records_clip_fraction(0.99), kFewRecordsClipHigh);
  // Halfway in log2 between the ends: the geometric mean of 1/6 and 1/4.
  EXPECT_DOUBLE_EQ(few_records_clip_fraction(std::sqrt(2.0) * kFewRecordsDeep), std::sqrt(1.0 / 24));
  double last = 0;
  for (double r = 0.05; r < 1; r *= 1.05) {
    const double f = few_records_clip_fraction(r);
    EXPECT_GE(f, last);
    last = f;
  }
}

}  // namespace
}  // namespace dpsosp
