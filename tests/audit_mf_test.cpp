// The empirical privacy audit of spider-mf-adaptive's matrix-factorization
// mechanism (docs/privacy.md): the attacker's statistic in C's domain over
// many steps, the unclipped-o2 tampering of its consistent O2, and runs of
// several passes over the records. The parameterized audits of every private
// algorithm (tests/audit_test.cpp) cover its one-step and two-step canaries.
//
// Fixed seeds and no retries; each test states what 20 other seeds gave.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/audit.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::audit {
namespace {

AuditOptions mf_options(Tampering tampering, Canary canary = Canary::kLinear) {
  AuditOptions o;
  o.algorithm = parse_algorithm("spider-mf-adaptive");
  o.canary = canary;
  o.privacy = {1.0, 1e-5};
  o.runs = 2000;
  o.batch = 16;
  o.seed = 20241008;
  o.threads = 2;
  o.tampering = tampering;
  return o;
}

// Ten O1 steps, one factorization over them: the canary's increment enters
// C u along C's whole first column, and the statistic <C e1, C y> / ||C e1||
// hears it as loudly as the claim allows (mu* = 0.268), where the first
// release alone would give mu* / column_norm(10) = 0.19. 20 other seeds:
// honest bounds <= 0.30, empirical mu 0.19 - 0.32; noise / 10 bounds 3.5 - 4.7.
TEST(AuditMf, TheFactorizationsNoiseIsAsLoudAsClaimedOverManySteps) {
  AuditOptions o = mf_options(Tampering::kNone);
  o.steps = 10;
  const AuditResult honest = run_audit(o);
  EXPECT_EQ(honest.n, 160u);
  EXPECT_NEAR(honest.claimed_epsilon, 1.0, 1e-6);
  EXPECT_LE(honest.epsilon_lower_bound, honest.claimed_epsilon);
  EXPECT_NEAR(honest.empirical_mu, honest.claimed_mu, 0.1);
  o.tampering = Tampering::kNoiseDividedBy10;
  const AuditResult broken = run_audit(o);
  EXPECT_GT(broken.epsilon_lower_bound, 3.0);
}

// unclipped-o2: G and M raised 10.1-fold, so the canary's clipped-gradient
// difference passes the O2 clip at 10.1 times the honest one, with b_t, the
// step and the noise the honest ones. 20 other seeds: bounds 1.82 - 2.77.
TEST(AuditMf, UnclippedO2IsCaught) {
  const AuditOptions honest = mf_options(Tampering::kNone, Canary::kQuadraticO2);
  AuditOptions o = honest;
  o.tampering = Tampering::kUnclippedO2;
  const AuditResult r = run_audit(o);
  EXPECT_NEAR(r.claimed_epsilon, 1.0, 1e-6);
  EXPECT_GT(r.reported_epsilon, 10.0);  // its own accountant, shown the raised G, says so
  EXPECT_GT(r.epsilon_lower_bound, r.claimed_epsilon);
  // Same randomness: the first step and the O2 batch are the honest ones; the
  // second step differs where x_1 passed the canary's centre (x_1 < -0.04).
  for (Index run = 0; run < 4; ++run) {
    const RunRandomness randomness = run_randomness(o, 1, run);
    const Summary a = run_once(honest, true, randomness);
    const Summary b = run_once(o, true, randomness);
    ASSERT_EQ(a.steps, 2u);
    ASSERT_EQ(b.steps, 2u);
    EXPECT_EQ(a.o1_calls, 1u);
    EXPECT_EQ(b.o1_calls, 1u);
    EXPECT_EQ(a.trajectory[1][0], b.trajectory[1][0]);
    EXPECT_EQ(a.samples_used, b.samples_used);
    if (a.trajectory[1][0] < -0.04) EXPECT_NE(a.trajectory[2][0], b.trajectory[2][0]);
  }
}

// Three passes of four O1 steps over one order: the canary is in the first
// batch of every pass (steps 1, 5, 9), its three increments move C u along
// the sum of those columns of C, whose norm is the sensitivity the run is
// calibrated for, and the statistic hears it that loudly. 20 other seeds:
// honest bounds <= 0.33, empirical mu 0.20 - 0.35; noise / 10 bounds 3.3 - 4.5.
TEST(AuditMf, SeveralPassesAreAsLoudAsClaimed) {
  AuditOptions o = mf_options(Tampering::kNone);
  o.epochs = 3;
  o.sampling = Sampling::kOrder;
  o.steps = 4;
  const AuditResult honest = run_audit(o);
  EXPECT_EQ(honest.adjacency, "replace-one");
  EXPECT_EQ(honest.n, 64u);
  EXPECT_NEAR(honest.claimed_epsilon, 1.0, 1e-6);
  EXPECT_LE(honest.epsilon_lower_bound, honest.claimed_epsilon);
  EXPECT_NEAR(honest.empirical_mu, honest.claimed_mu, 0.1);
  for (Index run = 0; run < 2; ++run) {
    const Summary s = run_once(o, true, run_randomness(o, 1, run));
    EXPECT_EQ(s.steps, 12u);
    EXPECT_EQ(s.params.at("steps_per_epoch"), 4.0);
  }
  o.tampering = Tampering::kNoiseDividedBy10;
  EXPECT_GT(run_audit(o).epsilon_lower_bound, 3.0);
  o.tampering = Tampering::kNone;
  o.epochs = 2.5;
  EXPECT_THROW(o.Validate(), Error);
  o.epochs = 2;
  o.canary = Canary::kQuadraticO2;
  EXPECT_THROW(o.Validate(), Error);
}

// Poisson passes (the default beyond one pass): the canary first in the
// sample order, so in group 0, sampled at steps 1, 1 + bands, ...; the
// attacker turns the releases back into C's domain and takes, over each
// opportunity, the canary's direction: the largest of them. Zero-out
// neighbours, accounted by PLD (no GDP mu). noise / 10 is caught.
TEST(AuditMf, PoissonPassesAreNoLouderThanClaimed) {
  AuditOptions o = mf_options(Tampering::kNone);
  o.epochs = 3;
  o.bands = 2;
  const AuditResult honest = run_audit(o);
  EXPECT_EQ(honest.adjacency, "zero-out");
  EXPECT_EQ(honest.n, 160u);
  EXPECT_NEAR(honest.claimed_epsilon, 1.0, 1e-6);
  EXPECT_LE(honest.epsilon_lower_bound, honest.claimed_epsilon);
  const Summary s = run_once(o, true, run_randomness(o, 1, 0));
  EXPECT_EQ(s.params.at("bands"), 2.0);
  EXPECT_EQ(s.privacy.mechanism, MechanismKind::kBandedPoisson);
  o.tampering = Tampering::kNoiseDividedBy10;
  EXPECT_GT(run_audit(o).epsilon_lower_bound, 2.0);
  o.tampering = Tampering::kNone;
  o.canary = Canary::kQuadraticO2;
  EXPECT_THROW(o.Validate(), Error);
  o.canary = Canary::kLinear;
  o.sampling = Sampling::kOrder;
  EXPECT_THROW(o.Validate(), Error);  // bands with passes over the order
}

}  // namespace
}  // namespace dpsosp::audit
