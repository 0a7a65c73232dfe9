// The private estimates of G and M (include/dpsosp/clip_estimate.hpp): the
// medians they find, their noise and what it costs, and that a run leaves the
// estimate's records to the estimate.
#include "dpsosp/clip_estimate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_counting_model.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// An estimate is the sample median rounded up within the search's resolution
// 2^(40/1024).
void expect_within_resolution(const std::optional<double>& estimate, double sample_median) {
  const double step = std::exp2(40.0 / 1024.0);
  ASSERT_TRUE(estimate);
  EXPECT_GE(*estimate, sample_median / step);
  EXPECT_LE(*estimate, sample_median * step);
}

IndexList first(Index m) {
  IndexList idx(m);
  for (Index i = 0; i < m; ++i) idx[i] = i;
  return idx;
}

// With the noise all but gone (eps = 1e6), each estimate is the sample median
// rounded up within the search's resolution 2^(40/1024): logistic at x0 = 0,
// where grad f = (1/2 - y) a.
TEST(ClipEstimate, FindsTheMediansWithinTheResolution) {
  const Dataset data = testing::make_test_data(2001, 5, testing::Labels::kBinary, false, 3);
  const auto model = make_model("logistic", 5);
  const Vec x0 = Vec::Zero(5);
  const IndexList idx = first(2001);
  const ConstantsEstimate e =
      estimate_constants(*model, data, idx, x0, {true, true}, {1e6, 1e-6}, testing::test_noise_key(), 7);
  std::vector<double> norms, ratios;
  Vec g(5), moved(5);
  for (Index i : idx) {
    model->gradient(x0, data, i, g);
    norms.push_back(g.norm());
    // Logistic: grad f(x; z) = (sigmoid(a.x) - y) a, so along u = g / |g| the
    // ratio is |sigmoid(h |a|) - 1/2| |a| / h, about |a|^2 / 4.
    model->gradient(1e-3 * g / g.norm(), data, i, moved);
    ratios.push_back((moved - g).norm() / 1e-3);
    EXPECT_NEAR(ratios.back(), 0.25 * data.dense().row(i).squaredNorm(), 1e-5 * data.dense().row(i).squaredNorm());
  }
  expect_within_resolution(e.G, median(norms));
  expect_within_resolution(e.M, median(ratios));
  EXPECT_EQ(e.records, 2001u);
  EXPECT_EQ(e.rounds, 2 * kEstimateRounds);
}

// Of k records whose gradient at x0 is zero, floor(k / 2) count as below
// every threshold and the rest as above, so the medians are the other
// records' (float and secure noise alike: the counts stay integers): a linear fit at
// x0 = 0 whose targets are 0 for 1407 of 2008 records (a zero-inflated target
// centred on its zeros), where the median of every norm was 0 (G and M at
// 2^-20: steps of 1/M). Huber's gradient at x0 = 0 is -y a for |y| <= 1 and
// its curvature along a is |a|^2.
TEST(ClipEstimate, ZeroGradientsLeaveTheMediansToTheOthers) {
  const Index n = 2008, d = 3;
  RowMatrix a(n, d);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < d; ++j) a(i, j) = 0.2 + static_cast<double>((7 * i + 13 * j) % 17) / 10.0;
    y[i] = i % 10 < 7 ? 0.0 : 0.1 + static_cast<double>((11 * i) % 80) / 100.0;
  }
  const Dataset data(a, y);
  const auto model = make_model("linear", d);
  const Vec x0 = Vec::Zero(d);
  const ConstantsEstimate e =
      estimate_constants(*model, data, first(n), x0, {true, true}, {1e6, 1e-6}, testing::test_noise_key(), 7);
  std::vector<double> norms, curvatures;
  for (Index i = 0; i < n; ++i)
    if (y[i] != 0) {
      norms.push_back(y[i] * a.row(i).norm());
      curvatures.push_back(a.row(i).squaredNorm());
    }
  ASSERT_EQ(norms.size(), 601u);
  expect_within_resolution(e.G, median(norms));
  expect_within_resolution(e.M, median(curvatures));
  // A higher quantile (a regression's G where the noise is small): of the
  // 1407 no-value records floor(0.9 * 1407) count below, so the search stops
  // at the value of rank ceil(0.9 * 2008) - floor(0.9 * 1407) of the others.
  ConstantsEstimateOptions high{true, false};
  high.g_quantile = 0.9;
  const ConstantsEstimate q =
      estimate_constants(*model, data, first(n), x0, high, {1e6, 1e-6}, testing::test_noise_key(), 7);
  std::sort(norms.begin(), norms.end());
  const auto rank = static_cast<std::size_t>(std::ceil(0.9 * 2008) - std::floor(0.9 * 1407));
  expect_within_resolution(q.G, norms[rank - 1]);
  EXPECT_GT(*q.G, 1.5 * *e.G);
  EXPECT_EQ(q.g_quantile, 0.9);
  EXPECT_EQ(e.g_quantile, 0.5);
  PrivacyTarget secure{1e6, 1e-6};
  secure.noise = NoiseMode::kSecure;  // discrete noise of scale 1 on integer counts: a rank or two
  const ConstantsEstimate s =
      estimate_constants(*model, data, first(n), x0, {true, true}, secure, testing::test_noise_key(), 7);
  ASSERT_TRUE(s.G && s.M);
  EXPECT_NEAR(std::log2(*s.G / median(norms)), 0.0, 0.25);
  EXPECT_NEAR(std::log2(*s.M / median(curvatures)), 0.0, 0.25);
}

// The counts' noise makes the estimate mu-GDP at the target (float), or
// rho-zCDP at the target's rho (secure: an integer scale); one constant
// takes half the rounds.
TEST(ClipEstimate, CountNoiseMeetsTheTarget) {
  const Dataset data = testing::make_test_data(500, 3, testing::Labels::kBinary, false, 4);
  const auto model = make_model("logistic", 3);
  const IndexList idx = first(500);
  const ConstantsEstimate both =
      estimate_constants(*model, data, idx, Vec::Zero(3), {true, true}, {1.0, 1e-6}, testing::test_noise_key(), 1);
  const double mu = privacy::gdp_mu(1.0, 1e-6);
  EXPECT_NEAR(std::sqrt(20.0) / both.count_noise, mu, 1e-12);
  EXPECT_DOUBLE_EQ(both.mu, mu);
  const ConstantsEstimate g_only =
      estimate_constants(*model, data, idx, Vec::Zero(3), {true, false}, {1.0, 1e-6}, testing::test_noise_key(), 1);
  EXPECT_EQ(g_only.rounds, kEstimateRounds);
  EXPECT_FALSE(g_only.M);
  EXPECT_NEAR(std::sqrt(10.0) / g_only.count_noise, mu, 1e-12);
  PrivacyTarget secure{1.0, 1e-6};
  secure.noise = NoiseMode::kSecure;
  const ConstantsEstimate s =
      estimate_constants(*model, data, idx, Vec::Zero(3), {true, true}, secure, testing::test_noise_key(), 1);
  const double rho = privacy::zcdp_rho(1.0, 1e-6);
  EXPECT_EQ(s.count_noise, std::ceil(std::sqrt(20.0 / (2 * rho))));
  EXPECT_LE(20.0 / (2 * s.count_noise * s.count_noise), rho);
  // Other keys, other noise, other estimates; the same key, the same ones.
  const ConstantsEstimate again =
      estimate_constants(*model, data, idx, Vec::Zero(3), {true, true}, {1.0, 1e-6}, testing::test_noise_key(), 1);
  EXPECT_EQ(*again.G, *both.G);
  EXPECT_THROW(
      estimate_constants(*model, data, idx, Vec::Zero(3), {false, false}, {1.0, 1e-6}, testing::test_noise_key(), 1),
      Error);
  EXPECT_THROW(
      estimate_constants(*model, data, {}, Vec::Zero(3), {true, false}, {1.0, 1e-6}, testing::test_noise_key(), 1),
      Error);
  EXPECT_THROW(estimate_constants(*model, data, idx, Vec::Zero(3), {true, false},
                                  {std::numeric_limits<double>::infinity(), 1e-6}, testing::test_noise_key(), 1),
               Error);
}

// A run with the estimate: its records are the first of the sample order,
// and no optimizer step touches them; the run uses the estimates as its
// constants; the guarantee is the target (parallel composition).
TEST(ClipEstimate, TheRunLeavesTheEstimatesRecordsAlone) {
  const Index n = 30000;
  const Dataset data = testing::make_test_data(n, 6, testing::Labels::kBinary, false, 8);
  const auto inner = make_model("logistic", 6);
  for (const char* algo : {"spider-mf-adaptive", "dpsgd", "spider-tree-adaptive"}) {
    SCOPED_TRACE(algo);
    testing::CountingModel model(*inner);
    RunOptions o;
    o.algorithm = parse_algorithm(algo);
    o.privacy = PrivacyTarget{2.0, 1e-6};
    o.estimate = {true, true};
    o.seed = 12;
    o.noise_key = testing::test_noise_key();
    if (std::string(algo) == "spider-tree-adaptive") o.alpha_scale = 3.0;
    const Summary s = minimize(model, data, Vec::Zero(6), o);
    const Index m = estimate_records(n);
    EXPECT_EQ(m, 600u);
    EXPECT_EQ(s.reserved_records, m);
    ASSERT_TRUE(s.estimate);
    // A classifier's averaged run (spider-mf-adaptive reads tail) at a quarter of the medians, the others at them.
    const double fraction = std::string(algo) == "spider-mf-adaptive" ? 0.25 : 1.0;
    EXPECT_EQ(s.constants.G, fraction * *s.estimate->G);
    EXPECT_EQ(s.constants.M, std::max(fraction * *s.estimate->M, s.constants.G));  // x0 = 0: steps of at most 1
    EXPECT_NEAR(s.privacy.epsilon, 2.0, 1e-9);
    SamplePool pool(n, 12);
    const IndexList slice = pool.draw(m);
    const std::set<Index> reserved(slice.begin(), slice.end());
    for (const IndexList& call : model.calls_)
      for (Index i : call) EXPECT_EQ(reserved.count(i), 0u) << "record " << i << " of the estimate";
    EXPECT_FALSE(model.calls_.empty());
    testing::expect_single_use(model, n);
    // One gradient a record for the O1-only runs: the records used are the
    // estimate's and the optimizer's.
    if (std::string(algo) != "spider-tree-adaptive") EXPECT_EQ(s.samples_used, m + s.diagnostics.gradient_evaluations);
  }
  EXPECT_EQ(estimate_records(100), 10u);
  EXPECT_EQ(estimate_records(5), 0u);
  EXPECT_EQ(estimate_records(10000000), 20000u);
}

// A Poisson run under PLD on fewer than 25,000 records shares the estimate's
// records (8 times the reserved count, at mu_run / 8, composed into the run's
// prior); from 25,000 the estimate reserves its own; under RDP always.
TEST(ClipEstimate, PoissonRunsBelowTwentyFiveThousandShareTheRecords) {
  const auto model = make_model("logistic", 4);
  for (const Index n : {Index{3000}, Index{24999}, Index{25000}}) {
    for (const bool rdp : {false, true}) {
      SCOPED_TRACE(std::to_string(n) + (rdp ? " rdp" : " pld"));
      const Dataset data = testing::make_test_data(n, 4, testing::Labels::kBinary, false, 3);
      RunOptions o;
      o.algorithm = parse_algorithm("dpsgd");
      o.epochs = 1;
      o.privacy = PrivacyTarget{2.0, 1e-6};
      if (rdp) o.accountant = Accountant::kRdp;
      o.estimate = {true, true};
      o.seed = 5;
      o.noise_key = testing::test_noise_key();
      o.max_steps = 1;
      const Summary s = minimize(*model, data, Vec::Zero(4), o);
      ASSERT_TRUE(s.estimate);
      const bool shared = n < 25000 && !rdp;
      EXPECT_EQ(s.estimate->shared, shared);
      const double mu = privacy::gdp_mu(2.0, 1e-6);
      if (shared) {
        EXPECT_EQ(s.reserved_records, 0);
        EXPECT_EQ(s.estimate->records, std::min(n, kSharedRecords * estimate_records(n)));
        EXPECT_NEAR(s.estimate->mu, mu / kSharedRecords, 1e-12);
        EXPECT_NEAR(s.privacy.prior_mu, s.estimate->mu, 1e-15);
      } else {
        EXPECT_EQ(s.reserved_records, estimate_records(n));
        EXPECT_EQ(s.estimate->records, estimate_records(n));
        EXPECT_NEAR(s.estimate->mu, mu, 1e-12);
        EXPECT_EQ(s.privacy.prior_mu, 0.0);
      }
    }
  }
}

// Refused for non-private runs.
TEST(ClipEstimate, OnlyForPrivateRuns) {
  RunOptions o;
  o.algorithm = parse_algorithm("sgd");
  o.estimate.G = true;
  EXPECT_THROW(o.Validate(), Error);
}

// A regression's G: the median where the noise is not small, 0.9 where it
// is, log-linear in sqrt(d) / (n mu) between (docs/parameters.md, "A
// regression's clip").
TEST(ClipEstimate, ARegressionsClipQuantileRisesAsTheNoiseFalls) {
  // n = 1000, d = 16: sqrt(d) / (n mu) = 0.004 / mu.
  EXPECT_EQ(regression_clip_quantile(1000, 16, 0.004 / kClipQuantileNoisy), 0.5);
  EXPECT_EQ(regression_clip_quantile(1000, 16, 0.1), 0.5);
  EXPECT_DOUBLE_EQ(regression_clip_quantile(1000, 16, 1.0), 0.7);  // 0.004: halfway in log between 0.008 and 0.002
  EXPECT_EQ(regression_clip_quantile(1000, 16, 0.004 / kClipQuantileQuiet), kClipQuantileHigh);
  EXPECT_EQ(regression_clip_quantile(1000, 16, 100.0), kClipQuantileHigh);
  double last = 0.5;
  for (double mu = 0.1; mu < 10; mu *= 1.1) {
    const double q = regression_clip_quantile(1000, 16, mu);
    EXPECT_GE(q, last);
    EXPECT_LE(q, kClipQuantileHigh);
    last = q;
  }
  EXPECT_EQ(regression_clip_quantile(0, 16, 1.0), 0.5);
  EXPECT_THROW(estimate_constants(
                   *make_model("linear", 2), testing::make_test_data(10, 2, testing::Labels::kReal, false, 1),
                   first(10), Vec::Zero(2),
                   [] {
                     ConstantsEstimateOptions o{true, false};
                     o.g_quantile = 1.0;
                     return o;
                   }(),
                   {1.0, 1e-6}, testing::test_noise_key(), 1),
               Error);
}

// A regression's averaged run keeps its estimates whole (a quarter's larger
// steps overshoot its residual gradients: docs/parameters.md, "Why a
// quarter"); at 30000 records and eps 2 its G is the 0.9 quantile, a
// classifier's the median, a regression's on 300 records the median.
TEST(ClipEstimate, ARegressionRunsAtItsEstimates) {
  const Dataset data = testing::make_test_data(30000, 6, testing::Labels::kReal, false, 8);
  const auto model = make_model("linear", 6);
  RunOptions o;
  o.algorithm = parse_algorithm("spider-mf-adaptive");
  o.privacy = PrivacyTarget{2.0, 1e-6};
  o.estimate = {true, true};
  o.seed = 12;
  o.noise_key = testing::test_noise_key();
  const Summary s = minimize(*model, data, Vec::Zero(6), o);
  ASSERT_TRUE(s.estimate);
  EXPECT_EQ(s.constants.G, *s.estimate->G);
  EXPECT_EQ(s.constants.M, std::max(*s.estimate->M, s.constants.G));
  EXPECT_EQ(s.estimate->g_quantile, kClipQuantileHigh);
  const Dataset few = testing::make_test_data(300, 6, testing::Labels::kReal, false, 8);
  EXPECT_EQ(minimize(*model, few, Vec::Zero(6), o).estimate->g_quantile, 0.5);
  const Dataset labels = testing::make_test_data(30000, 6, testing::Labels::kBinary, false, 8);
  EXPECT_EQ(minimize(*make_model("logistic", 6), labels, Vec::Zero(6), o).estimate->g_quantile, 0.5);
}

}  // namespace
}  // namespace dpsosp
