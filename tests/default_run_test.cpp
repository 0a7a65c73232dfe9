// The front ends' default run (optimizer.hpp: choose_default_sampling,
// default_passes): Poisson passes at a replace-one target, as many as the rule
// of the records' count says.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"
#include "test_phase_retrieval.hpp"

namespace dpsosp {
namespace {

using testing::mf_options;
using testing::PhaseRetrieval;

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
