// The audit's teeth (issue 30): each deliberately broken variant is flagged
// (`violation`) and the correct mechanisms are not, with the default run
// count (2000 a dataset), base seed 20241008 and the default levels: the
// epsilon bound at 95% and the mu / trade-off test at 1%, so that a correct
// mechanism sets `violation` with probability at most 6% (the seeds are fixed:
// each test is deterministic; its margin, and what other seeds gave, are in
// docs/privacy.md). GDP paths: the lower confidence bound on mu against the
// claimed mu; a factor of two in the noise or the sensitivity doubles mu.
// Poisson paths: 64 canaries a run, the likelihood-ratio test's rates against
// the PLD's trade-off curve.
#include "dpsosp/audit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "audit/tradeoff.hpp"
#include "dpsosp/error.hpp"
#include "test_fixtures.hpp"

namespace dpsosp::audit {
namespace {

AuditOptions options(Algorithm algorithm, Tampering tampering) {
  AuditOptions o;
  o.algorithm = algorithm;
  o.privacy = {1.0, 1e-5};
  o.seed = 20241008;
  o.threads = 2;
  o.tampering = tampering;
  return o;
}

std::string describe(const AuditResult& r) {
  std::string s = r.algorithm + " " + r.tampering + ": eps bound " + std::to_string(r.epsilon_lower_bound) + ", mu " +
                  std::to_string(r.empirical_mu) + " (lower " + std::to_string(r.mu_lower_bound) + ", claim " +
                  std::to_string(r.claimed_mu) + ")";
  if (r.tradeoff)
    s += ", trade-off TPR >= " + std::to_string(r.tradeoff->tpr_lower) +
         " at FPR <= " + std::to_string(r.tradeoff->fpr_upper) + ", claim allows " +
         std::to_string(r.tradeoff->claimed_tpr_max);
  return s + ", by '" + r.violation_by + "'";
}

void expect_honest(const AuditOptions& o) {
  const AuditResult r = run_audit(o);
  EXPECT_FALSE(r.violation) << describe(r);
  EXPECT_NEAR(r.false_alarm, 0.06, 1e-12);
}

void expect_flagged(const AuditOptions& o) {
  const AuditResult r = run_audit(o);
  EXPECT_TRUE(r.violation) << describe(r);
  // Flagged by the test of the claim's shape, not by the epsilon bound
  // alone (which misses a factor of two at this run count).
  EXPECT_NE(r.violation_by.find(r.tradeoff ? "trade-off" : "mu"), std::string::npos) << describe(r);
}

class AuditTeethSinglePass : public ::testing::TestWithParam<Algorithm> {};

// Every private algorithm on one pass: the canary at the sensitivity bound
// is as loud as claimed (mu = claimed mu), so the honest one passes at rate
// 1 - test_level; half the noise or twice the sensitivity doubles mu.
TEST_P(AuditTeethSinglePass, FactorsOfTwoAreFlaggedAndTheHonestRunPasses) {
  expect_honest(options(GetParam(), Tampering::kNone));
  expect_flagged(options(GetParam(), Tampering::kSensitivityHalved));
  expect_flagged(options(GetParam(), Tampering::kNoiseHalved));
}

INSTANTIATE_TEST_SUITE_P(EveryPrivateAlgorithm, AuditTeethSinglePass,
                         ::testing::Values(Algorithm::kDpsgd, Algorithm::kSpiderGaussFixed,
                                           Algorithm::kSpiderTreeAdaptive, Algorithm::kSpiderTreePeriodic,
                                           Algorithm::kSpiderMfAdaptive),
                         testing::AlgorithmTestName());

TEST(AuditTeeth, SecureNoiseFactorsOfTwoAreFlagged) {
  // The discrete Gaussian's runs are slower: 2 x 1000 (the broken variants'
  // mu is twice the claim, their lower bound about 0.37 against 0.247).
  AuditOptions o = options(Algorithm::kDpsgd, Tampering::kNone);
  o.privacy.noise = NoiseMode::kSecure;
  o.runs = 1000;
  const AuditResult honest = run_audit(o);
  EXPECT_FALSE(honest.violation) << describe(honest);
  EXPECT_NEAR(honest.claimed_mu, 0.247, 0.001);  // sqrt(2 rho), rho of eps 1 at delta 1e-5
  o.tampering = Tampering::kSensitivityHalved;
  expect_flagged(o);
  o.tampering = Tampering::kNoiseHalved;
  expect_flagged(o);
}

TEST(AuditTeeth, UnderstatedTreeDepthIsFlagged) {
  // A phase of 4 steps: the canary's leaf is in 3 released nodes (depth 3);
  // the node noise of depth 1 makes mu sqrt(3) times the claim.
  AuditOptions o = options(Algorithm::kSpiderTreePeriodic, Tampering::kNone);
  o.phase_length = 4;
  o.steps = 4;
  expect_honest(o);
  o.tampering = Tampering::kDepthUnderstated;
  expect_flagged(o);
  o.phase_length = 1;
  o.steps = 0;
  EXPECT_THROW(o.Validate(), Error);  // depth 1: nothing to understate
}

TEST(AuditTeeth, MatrixFactorizationColumnNormHalvedIsFlagged) {
  AuditOptions o = options(Algorithm::kSpiderMfAdaptive, Tampering::kColumnNormHalved);
  o.steps = 10;
  expect_flagged(o);
  // Three passes over one order of four steps (the canary in steps 1, 5, 9).
  o.epochs = 3;
  o.steps = 4;
  o.sampling = Sampling::kOrder;
  expect_flagged(o);
  o.tampering = Tampering::kNone;
  expect_honest(o);
  o = options(Algorithm::kDpsgd, Tampering::kColumnNormHalved);
  EXPECT_THROW(o.Validate(), Error);
}

TEST(AuditTeeth, PoissonDpsgdAgainstThePldCurve) {
  // n = 160, q = 0.1, 10 steps, zero-out; 64 canaries a run, 2 x 1000 runs
  // (the default 2000 leaves a wider margin: docs/privacy.md).
  AuditOptions o = options(Algorithm::kDpsgd, Tampering::kNone);
  o.epochs = 1;
  o.runs = 1000;
  const AuditResult honest = run_audit(o);
  EXPECT_FALSE(honest.violation) << describe(honest);
  ASSERT_TRUE(honest.tradeoff);
  EXPECT_EQ(honest.tradeoff->canaries, 64u);
  EXPECT_EQ(honest.tradeoff->samples, 64u * 500u);
  EXPECT_EQ(honest.dim, 64u);
  EXPECT_NEAR(honest.tradeoff->sampling_rate, 0.1, 1e-12);
  EXPECT_EQ(honest.tradeoff->steps, 10u);
  for (const Tampering t : {Tampering::kNoiseHalved, Tampering::kSensitivityHalved, Tampering::kRateHalved}) {
    o.tampering = t;
    expect_flagged(o);
  }
  o.tampering = Tampering::kRateHalved;
  o.epochs = 0;
  EXPECT_THROW(o.Validate(), Error);  // single pass: no sampling rate
}

TEST(AuditTeeth, PoissonPassesAgainstThePldCurve) {
  // spider-mf-adaptive, 3 epochs of Poisson passes with 2 bands (q = 0.2,
  // 15 cycles), 2 x 1000 runs. (noise-half gives column-norm-half's numbers:
  // sigma = z s column_norm.)
  AuditOptions o = options(Algorithm::kSpiderMfAdaptive, Tampering::kNone);
  o.epochs = 3;
  o.bands = 2;
  o.runs = 1000;
  const AuditResult honest = run_audit(o);
  EXPECT_FALSE(honest.violation) << describe(honest);
  ASSERT_TRUE(honest.tradeoff);
  EXPECT_NEAR(honest.tradeoff->sampling_rate, 0.2, 1e-12);
  EXPECT_EQ(honest.tradeoff->steps, 15u);
  for (const Tampering t : {Tampering::kSensitivityHalved, Tampering::kRateHalved, Tampering::kColumnNormHalved}) {
    o.tampering = t;
    expect_flagged(o);
  }
}

TEST(AuditTeeth, ClaimedCurveAndStatistics) {
  // q = 1: T steps of the Gaussian mechanism at z are (sqrt(T)/z)-GDP, whose
  // curve is TPR = Phi(Phi^-1(FPR) + mu); the PLD's is that, read on a grid
  // of eps, so at least it and close above it.
  const detail::ClaimedCurve curve(1.0, 2.0, 4);  // mu = 1
  for (const double fpr : {0.01, 0.05, 0.2, 0.5}) {
    const double exact = 0.5 * std::erfc(-(detail::normal_quantile(fpr) + 1.0) / std::sqrt(2.0));
    EXPECT_GE(curve.max_tpr(fpr), exact - 1e-6) << fpr;
    EXPECT_LE(curve.max_tpr(fpr), exact + 0.01) << fpr;
  }
  EXPECT_NEAR(detail::normal_quantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(detail::normal_quantile(0.001), -3.090232306167814, 1e-9);
  // se^2 = 1/1000 + 1/1000 + 0.25 / 3996; z_{0.995} = 2.5758293.
  EXPECT_NEAR(detail::mu_lower_bound(0.5, 1000, 1000, 0.01), 0.5 - 2.5758293035489 * std::sqrt(0.002 + 0.25 / 3996),
              1e-9);
  EXPECT_EQ(detail::mu_lower_bound(0.01, 1000, 1000, 0.01), 0.0);
  // The likelihood ratio: one opportunity at the shift, q = 0.5, z = 1:
  // log(0.5 + 0.5 e^{1/2}).
  EXPECT_NEAR(detail::poisson_lr({2.0}, 2.0, 0.5, 1.0), std::log(0.5 + 0.5 * std::exp(0.5)), 1e-12);
  EXPECT_NEAR(detail::poisson_lr({0.0, 0.0}, 1.0, 0.1, 1.0), 2 * std::log(0.9 + 0.1 * std::exp(-0.5)), 1e-12);
}

TEST(AuditTeeth, FalseAlarmsOfTheHonestMechanismStayNearTheStatedRate) {
  // 30 base seeds of honest dpsgd (one step: mu = the claim, the mu test's
  // worst case), 2 x 400 runs each: violation's rate is at most 6%, so more
  // than 6 of 30 has probability below 0.2%. (Seeds 1 - 30 gave none.)
  Index violations = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    AuditOptions o = options(Algorithm::kDpsgd, Tampering::kNone);
    o.seed = seed;
    o.runs = 400;
    violations += run_audit(o).violation ? 1 : 0;
  }
  EXPECT_LE(violations, 6u);
}

}  // namespace
}  // namespace dpsosp::audit
