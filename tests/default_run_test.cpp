// The front ends' default run (optimizer.hpp: choose_default_sampling,
// default_passes): Poisson passes at a replace-one target, as many as the rule
// of the records' count says.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"
#include "test_phase_retrieval.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

using testing::estimate_every_box;
using testing::mf_options;
using testing::PhaseRetrieval;
using testing::private_run;
using testing::regression;
using testing::with_intercept;

// The front ends' default (choose_default_sampling): Poisson at a replace-one
// target, and with epochs unset default_passes(n) passes (3 up to 100000
// records, floor(300000 / n) beyond, at least 1); epochs given, as given.
TEST(DefaultRun, MakesItsDefaultPasses) {
  EXPECT_EQ(default_passes(2000), 3);
  EXPECT_EQ(default_passes(100000), 3);
  EXPECT_EQ(default_passes(100001), 2);
  EXPECT_EQ(default_passes(150000), 2);
  EXPECT_EQ(default_passes(150001), 1);
  EXPECT_EQ(default_passes(5000000), 1);
  const Index n = 6000;
  PhaseRetrieval pr(n, 6);
  RunOptions o = mf_options(2.0, 7);
  o.threads = 1;
  ASSERT_TRUE(choose_default_sampling(o, /*streamed=*/false));
  EXPECT_TRUE(o.default_passes);
  EXPECT_EQ(*o.sampling, Sampling::kPoisson);
  const Summary a = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.params.at("epochs"), 3.0);
  const double q = a.params.at("sampling_rate");
  EXPECT_EQ(a.params.at("cycles"), std::ceil(3.0 / q));
  EXPECT_EQ(a.privacy.adjacency, Adjacency::kReplaceOne);
  EXPECT_LE(a.privacy.epsilon, 2.0);
  EXPECT_NEAR(a.privacy.epsilon, 2.0, 1e-5);
  RunOptions one = mf_options(2.0, 7);
  one.epochs = 1;
  ASSERT_TRUE(choose_default_sampling(one, false));
  EXPECT_FALSE(one.default_passes);
  EXPECT_EQ(minimize(*pr.model, pr.problem.data, pr.problem.saddle, one).params.at("epochs"), 1.0);
  RunOptions streamed = mf_options(2.0, 7);
  EXPECT_FALSE(choose_default_sampling(streamed, /*streamed=*/true));
  EXPECT_FALSE(streamed.default_passes);
}

// A classifier's passes (classifier_passes): the base where the noise ratio
// r = sqrt(d) / (n mu) is at least 0.1; below it base 0.1 / r, at most 30, at
// most base 1000 / T (T the base passes' Poisson steps at the default batch).
// Hand-computed: (630, 32, 0.3): r = 0.02993, 10.02 passes by the ratio, 100
// by the steps (b1 = n / 10 = 63, T = 30); (630, 8, 1): 66.8 and 44.4, the cap
// 30; (4774, 9, 0.33): 157.5 and 17.6 (b1 = 84, T = 170.5); Fashion-MNIST's
// 60000 x 7850 at mu 1: 203 and 1.03 (b1 = 62, T = 2903), the base.
TEST(DefaultRun, AClassifierMakesMorePassesWhereTheNoiseIsSmall) {
  EXPECT_EQ(classifier_passes(133, 42, 0.33), 3);  // r = 0.148: wine at eps 1
  EXPECT_EQ(classifier_passes(630, 32, 0.3), 10);
  EXPECT_EQ(classifier_passes(630, 8, 1.0), 30);
  EXPECT_EQ(classifier_passes(4774, 9, 0.33), 18);
  EXPECT_EQ(classifier_passes(60000, 7850, 1.0), 3);
  EXPECT_EQ(classifier_passes(150000, 7850, 1.0), 2);  // default_passes beyond 100000 records
  EXPECT_EQ(classifier_passes(0, 8, 1.0), 3);
  EXPECT_EQ(classifier_passes(630, 8, 0.0), 3);
  EXPECT_EQ(classifier_passes(630, 8, std::nan("")), 3);
  // The scaled table's default run: a classifier takes them, a regression on
  // the same records keeps default_passes(n), and epochs given are kept.
  const Index n = 2000;
  const Dataset table = regression(n, 5);
  Vec labels(n);
  for (Index i = 0; i < n; ++i) labels[i] = table.label(i) > 200 ? 1.0 : 0.0;
  const Dataset classes(RowMatrix(table.dense()), labels);
  const auto passes = [&](const std::string& model, const Dataset& data, std::optional<double> epochs) {
    RunOptions o = private_run(3.0);
    o.threads = 1;
    o.epochs = epochs;
    choose_default_sampling(o, /*streamed=*/false);
    ScalingOptions so = estimate_every_box();
    so.target = so.estimate_target = model == "linear";
    const auto m = with_intercept(model, 2);
    return minimize_scaled(*m, data, Vec::Zero(3), o, so).summary.params.at("epochs");
  };
  const double mu = privacy::gdp_mu(3.0, 1e-6);
  ASSERT_GT(classifier_passes(n, 3, mu), 3);
  EXPECT_EQ(passes("logistic", classes, std::nullopt), static_cast<double>(classifier_passes(n, 3, mu)));
  EXPECT_EQ(passes("logistic", classes, 2.0), 2.0);
  EXPECT_EQ(passes("linear", table, std::nullopt), 3.0);
}

// Writing a default out changes nothing: epochs = 3 (the default's passes at
// this n), sampling = poisson or accountant = pld give the default run, with
// its replace-one target and noise multiplier to the bit. Before, epochs > 1
// or sampling given switched the run to a zero-out target (a weaker guarantee
// at the same epsilon). Zero-out is taken only where it is named; RDP, which
// accounts zero-out only, is refused at the replace-one default.
TEST(DefaultRun, WritingADefaultOutKeepsTheRun) {
  PhaseRetrieval pr(6000, 6);
  const auto multiplier = [&](RunOptions o) {
    o.threads = 1;
    o.max_steps = 1;
    choose_default_sampling(o, /*streamed=*/false);
    EXPECT_EQ(o.sampling, Sampling::kPoisson);
    EXPECT_EQ(o.privacy->adjacency, Adjacency::kReplaceOne);
    const Summary s = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
    EXPECT_EQ(s.privacy.adjacency, Adjacency::kReplaceOne);
    EXPECT_EQ(s.params.at("epochs"), 3.0);
    return s.params.at("noise_multiplier");
  };
  const double z = multiplier(mf_options(2.0, 7));
  RunOptions epochs = mf_options(2.0, 7);
  epochs.epochs = 3;
  EXPECT_EQ(multiplier(epochs), z);
  RunOptions sampling = mf_options(2.0, 7);
  sampling.sampling = Sampling::kPoisson;
  EXPECT_EQ(multiplier(sampling), z);
  RunOptions pld = mf_options(2.0, 7);
  pld.accountant = Accountant::kPld;
  EXPECT_EQ(multiplier(pld), z);
  RunOptions rdp = mf_options(2.0, 7);
  rdp.accountant = Accountant::kRdp;
  choose_default_sampling(rdp, false);
  try {
    rdp.Validate();
    ADD_FAILURE() << "RDP at the replace-one default was accepted";
  } catch (const OptionError& e) {
    EXPECT_NE(std::string(e.what()).find("adjacency = zero-out"), std::string::npos) << e.what();
  }
  rdp.privacy->adjacency = Adjacency::kZeroOut;
  EXPECT_NO_THROW(rdp.Validate());
}

// A zero-out target given to the default run (Opacus's relation, to compare
// like with like) keeps its Poisson passes, calibrated to that relation: the
// report's epsilon is the zero-out figure, the replace-one one above it. Over
// the sample order zero-out is still refused (every record in every pass:
// no relation but replace-one is accounted there).
TEST(DefaultRun, KeepsAZeroOutTargetGiven) {
  PhaseRetrieval pr(6000, 6);
  RunOptions o = mf_options(2.0, 7);
  o.threads = 1;
  o.epochs = 1;
  o.bands = 4;  // fixed, so that the two relations' multipliers compare
  o.privacy->adjacency = Adjacency::kZeroOut;
  ASSERT_TRUE(choose_default_sampling(o, /*streamed=*/false));
  EXPECT_EQ(*o.sampling, Sampling::kPoisson);
  EXPECT_EQ(*o.privacy->adjacency, Adjacency::kZeroOut);
  const Summary a = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.privacy.adjacency, Adjacency::kZeroOut);
  EXPECT_NEAR(a.privacy.epsilon, 2.0, 1e-5);
  EXPECT_EQ(a.privacy.epsilon, a.privacy.epsilon_zero_out);
  EXPECT_GT(a.privacy.epsilon_replace_one, 2.2);
  // The same pass at a replace-one target adds more noise.
  RunOptions r = mf_options(2.0, 7);
  r.threads = 1;
  r.epochs = 1;
  r.bands = 4;
  ASSERT_TRUE(choose_default_sampling(r, false));
  const Summary b = minimize(*pr.model, pr.problem.data, pr.problem.saddle, r);
  EXPECT_EQ(b.params.at("sampling_rate"), a.params.at("sampling_rate"));
  EXPECT_GT(b.params.at("noise_multiplier"), 1.02 * a.params.at("noise_multiplier"));
  RunOptions order = mf_options(2.0, 7);
  order.sampling = Sampling::kOrder;
  order.privacy->adjacency = Adjacency::kZeroOut;
  EXPECT_FALSE(choose_default_sampling(order, false));
  EXPECT_THROW(minimize(*pr.model, pr.problem.data, pr.problem.saddle, order), Error);
}

}  // namespace
}  // namespace dpsosp
