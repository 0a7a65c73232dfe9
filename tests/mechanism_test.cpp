// The mechanisms (mechanism.hpp): each calibrates to its target, releases
// with the noise it claims, refuses a release above its calibrated bound, and
// states the guarantee the accountant computes.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

const PrivacyTarget kTarget{2.0, 1e-6};

TEST(Mechanism, TreeCalibratesToTheTargetAndRefusesWhatItDoesNotCover) {
  const auto tree = make_tree_mechanism(3, testing::test_noise_key(), 0.1, 7, kTarget);
  const PrivacyRecord r = tree->account();
  EXPECT_EQ(r.mechanism, MechanismKind::kTree);
  EXPECT_EQ(r.adjacency, Adjacency::kReplaceOne);
  EXPECT_EQ(r.depth, 3);
  EXPECT_NEAR(r.epsilon, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.sigma, tree_noise_sigma(0.1, 7, kTarget, 3));
  EXPECT_DOUBLE_EQ(r.epsilon, privacy::account_tree(r.sigma / 0.1, {7}, 1e-6).epsilon_gdp);
  Vec released;
  const Vec exact = Vec::Ones(3);
  tree->release(exact, true, 0.1, released);
  tree->release(exact, false, 0.1 * (1 + 1e-13), released);  // a rounding of 2u/ceil(u slope)
  EXPECT_THROW(tree->release(exact, false, 0.1001, released), Error);
  for (int t = 2; t < 7; ++t) tree->release(exact, false, 0.05, released);
  EXPECT_THROW(tree->release(exact, false, 0.05, released), Error);  // an 8th leaf: depth 4, not covered
  tree->release(exact, true, 0.05, released);                        // a new phase is
}

// The tree's release is exact + TREE(t) of the key's tree stream.
TEST(Mechanism, TreeReleasesTheTreeStreamsNoise) {
  const double sigma = 0.7;
  const auto mech = make_tree_mechanism(5, testing::test_noise_key(), 1.0, 15, kTarget, sigma);
  TreeNoise reference(5, sigma, GaussianStream(testing::test_noise_key(), StreamPurpose::kTreeNoise));
  const Vec exact = Vec::LinSpaced(5, -1, 1);
  Vec released;
  for (int t = 0; t < 9; ++t) {
    const bool restart = t == 0 || t == 6;
    if (restart) reference.restart();
    mech->release(exact, restart, 1.0, released);
    const Vec expected = exact + reference.next();
    for (int i = 0; i < 5; ++i) ASSERT_EQ(released[i], expected[i]) << "t " << t;
  }
}

TEST(Mechanism, GaussianIsOneOverZGdpAndAccumulatesWithinAPhase) {
  const auto mech = make_gaussian_mechanism(2, testing::test_noise_key(), kTarget, 0.5);
  const PrivacyRecord r = mech->account();
  EXPECT_NEAR(r.epsilon, 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.noise_multiplier, gaussian_noise_multiplier(kTarget));
  EXPECT_DOUBLE_EQ(r.mu, 1 / r.noise_multiplier);
  EXPECT_DOUBLE_EQ(r.sigma, 0.5 * r.noise_multiplier);
  GaussianStream stream(testing::test_noise_key(), StreamPurpose::kGaussianNoise);
  Vec a(2), b(2), released;
  const Vec zero = Vec::Zero(2);
  mech->release(zero, true, 0.5, released);
  stream.fill(a, r.noise_multiplier * 0.5);
  EXPECT_EQ(released, a);
  mech->release(zero, false, 0.25, released);  // accumulated: noise of both releases
  stream.fill(b, r.noise_multiplier * 0.25);
  EXPECT_EQ(released, a + b);
  EXPECT_THROW(mech->release(zero, false, -1.0, released), Error);
}

TEST(Mechanism, PoissonGaussianAccountsForThePlannedStepsByPldOrRdp) {
  const auto mech = make_poisson_gaussian_mechanism(2, testing::test_noise_key(), 1.5, 0.01, 200, {3.0, 1e-6});
  const auto by_rdp = make_poisson_gaussian_mechanism(2, testing::test_noise_key(), 1.5, 0.01, 200, {3.0, 1e-6},
                                                      std::nullopt, Accountant::kRdp);
  const PrivacyRecord r = mech->account(), rr = by_rdp->account();
  EXPECT_EQ(r.adjacency, Adjacency::kZeroOut);
  EXPECT_EQ(r.accountant, Accountant::kPld);
  EXPECT_EQ(rr.accountant, Accountant::kRdp);
  for (const PrivacyRecord* p : {&r, &rr}) {
    EXPECT_LE(p->epsilon, 3.0);
    EXPECT_NEAR(p->epsilon, 3.0, 1e-5);
    EXPECT_DOUBLE_EQ(p->sigma, 1.5 * p->noise_multiplier);
    // Both figures at the calibrated noise.
    EXPECT_DOUBLE_EQ(p->epsilon_rdp, privacy::dpsgd_poisson_epsilon(0.01, p->noise_multiplier, 200, 1e-6));
    EXPECT_DOUBLE_EQ(p->epsilon_pld, privacy::dpsgd_pld_epsilon(0.01, p->noise_multiplier, 200, 1e-6));
  }
  EXPECT_EQ(r.epsilon, r.epsilon_pld);
  EXPECT_EQ(rr.epsilon, rr.epsilon_rdp);
  EXPECT_LT(r.noise_multiplier, rr.noise_multiplier);
  EXPECT_GT(r.epsilon_rdp, 3.0);  // PLD's noise does not meet the target by RDP
  Vec released;
  EXPECT_THROW(mech->release(Vec::Zero(2), true, 2.0, released), Error);  // above the clip
  // Sampling: each of 10^5 records with probability 0.01 (mean 1000, sd 31.5;
  // 6 sd: false-failure probability < 2e-9).
  const IndexList batch = mech->sample(100000);
  EXPECT_NEAR(static_cast<double>(batch.size()), 1000.0, 6 * 31.5);
  for (std::size_t i = 1; i < batch.size(); ++i) ASSERT_LT(batch[i - 1], batch[i]);
}

// SPEC section 9: every private record states its guarantee under both
// relations. The single-pass mechanisms are replace-one; every release's
// zero-out bound is half the replace-one one, so zero-out is (mu / 2)-GDP; the
// secure mode states its replace-one figure for both (an upper bound). The
// Poisson mechanisms are zero-out; their replace-one figure is the PLD of
// mixtures at -C and +C, with z / 2 in dp_accounting's convention.
TEST(Mechanism, EveryRecordStatesBothRelations) {
  const NoiseKey key = testing::test_noise_key();
  std::vector<PrivacyRecord> single_pass = {make_tree_mechanism(3, key, 0.1, 7, kTarget)->account(),
                                            make_gaussian_mechanism(3, key, kTarget, 0.1)->account(),
                                            make_mf_mechanism(3, key, 0.1, 50, kTarget)->account()};
  for (const PrivacyRecord& r : single_pass) {
    SCOPED_TRACE(mechanism_name(r.mechanism));
    EXPECT_EQ(r.adjacency, Adjacency::kReplaceOne);
    EXPECT_EQ(r.epsilon_replace_one, r.epsilon);
    EXPECT_DOUBLE_EQ(r.epsilon_zero_out, privacy::gdp_epsilon(r.mu / 2, r.delta));
    EXPECT_NEAR(r.epsilon_zero_out, 0.94305, 1e-4);  // eps 2, delta 1e-6: mu 0.44833 -> 0.22417
  }
  PrivacyTarget secure = kTarget;
  secure.noise = NoiseMode::kSecure;
  const PrivacyRecord s = make_tree_mechanism(3, key, 0.1, 7, secure)->account();
  EXPECT_EQ(s.epsilon_zero_out, s.epsilon);
  EXPECT_EQ(s.epsilon_replace_one, s.epsilon);
  // A dp_accounting replace-one figure (tests/pld_reference_figures.inc:
  // q 0.01, z 1.0, 1000 steps, delta 1e-5 -> 1.20520960399): the same noise is
  // z = 2 for the zero-out mechanism (sigma / C).
  for (Index bands : {Index{0}, Index{1}}) {
    const PrivacyRecord p =
        make_poisson_gaussian_mechanism(2, key, 1.0, 0.01, 1000, {3.0, 1e-5}, 2.0, Accountant::kPld, bands)->account();
    EXPECT_EQ(p.adjacency, Adjacency::kZeroOut);
    EXPECT_EQ(p.epsilon_zero_out, p.epsilon);
    EXPECT_NEAR(p.epsilon_replace_one, 1.20520960399, 1e-5 * 1.2 + 1e-6);
    EXPECT_GT(p.epsilon_replace_one, p.epsilon);
  }
  // By RDP the run's figure is RDP's; the replace-one figure is still the PLD's.
  const PrivacyRecord rdp =
      make_poisson_gaussian_mechanism(2, key, 1.0, 0.01, 1000, {3.0, 1e-5}, 2.0, Accountant::kRdp)->account();
  EXPECT_NEAR(rdp.epsilon_replace_one, 1.20520960399, 1e-5 * 1.2 + 1e-6);
  EXPECT_TRUE(std::isnan(make_no_mechanism()->account().epsilon_zero_out));
}

TEST(Mechanism, NoneAddsNothingAndGuaranteesNothing) {
  const auto none = make_no_mechanism();
  Vec released;
  none->release(Vec::Ones(2), true, 1e300, released);
  EXPECT_EQ(released, Vec::Ones(2));
  EXPECT_FALSE(none->account().is_private());
  EXPECT_EQ(none->account().accounting(), "none (non-private)");
}

}  // namespace
}  // namespace dpsosp
