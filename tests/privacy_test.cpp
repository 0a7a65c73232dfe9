// Tests of the privacy accountant (include/dpsosp/privacy.hpp, SPEC section 3).
//
// Where a figure comes from outside this file its source is named: SPEC's
// pinned dp_accounting figures, or 60-digit mpmath evaluations of the stated
// formula. Everything else is an analytic identity, a round trip or a
// monotonicity property.
#include "dpsosp/privacy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Expects an Error whose message contains every fragment.
template <typename F>
void expect_error(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "expected dpsosp::Error";
  } catch (const Error& e) {
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "message '" << e.what() << "' lacks '" << fragment << "'";
    }
  }
}

// ---------------------------------------------------------------------------
// SPEC's pinned figures: dp_accounting's RdpAccountant(REPLACE_SPECIAL) with
// SingleEpochTreeAggregationDpEvent(noise_multiplier=z, step_counts=...), and
// the exact GDP conversion of the same mechanism. 1e-5 absolute.
struct PinnedCase {
  double z;
  std::vector<std::uint64_t> steps;
  double delta;
  int depth;
  double epsilon_rdp;
  double epsilon_gdp;
};

const std::vector<PinnedCase>& pinned_cases() {
  static const std::vector<PinnedCase> cases = {
      {5.0, {1000, 500, 256}, 1e-6, 10, 3.13109, 2.92160},
      {2.0, {100000}, 1e-5, 17, 11.12975, 10.37824},
      {10.0, {4096}, 1e-5, 13, 1.51062, 1.38618},
  };
  return cases;
}

TEST(PrivacyTest, TreeAccountReproducesDpAccountingPinnedFigures) {
  for (const PinnedCase& c : pinned_cases()) {
    const TreeAccount account = account_tree(c.z, c.steps, c.delta);
    EXPECT_EQ(account.depth, c.depth) << "z=" << c.z;
    EXPECT_NEAR(account.epsilon_rdp, c.epsilon_rdp, 1e-5) << "z=" << c.z;
    EXPECT_NEAR(account.epsilon_gdp, c.epsilon_gdp, 1e-5) << "z=" << c.z;
    EXPECT_DOUBLE_EQ(account.mu, std::sqrt(c.depth) / c.z);
    EXPECT_DOUBLE_EQ(account.rho, c.depth / (2 * c.z * c.z));
    // The exact GDP conversion is never looser than the RDP one.
    EXPECT_LE(account.epsilon_gdp, account.epsilon_rdp);
    // The RDP figure is the zCDP conversion of rho (RDP(a) = a rho).
    EXPECT_DOUBLE_EQ(account.epsilon_rdp, zcdp_to_epsilon(account.rho, c.delta));
  }
}

// dp_accounting: RdpAccountant() (add/remove-one) composing 1000 x
// PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)), get_epsilon(1e-5).
TEST(PrivacyTest, PoissonDpsgdReproducesDpAccountingFigure) {
  EXPECT_NEAR(dpsgd_poisson_epsilon(0.01, 1.1, 1000, 1e-5), 1.71177, 1e-4);
}

// ---------------------------------------------------------------------------
// Gaussian DP.

TEST(PrivacyTest, NormalCdfValuesAndTails) {
  EXPECT_DOUBLE_EQ(normal_cdf(0.0), 0.5);
  EXPECT_NEAR(normal_cdf(1.959963984540054), 0.975, 1e-15);
  // Far tail by erfc, not 1 - Phi: Phi(-30) = 4.906713927148187e-198.
  EXPECT_NEAR(normal_cdf(-30.0) / 4.906713927148187e-198, 1.0, 1e-12);
}

TEST(PrivacyTest, GdpDeltaAtZeroEpsilonIsTwoPhiMinusOne) {
  for (double mu : {0.01, 0.3, 1.0, 2.5, 10.0}) {
    EXPECT_NEAR(gdp_delta(mu, 0.0), 2 * normal_cdf(mu / 2) - 1, 1e-15) << "mu=" << mu;
  }
  // mpmath (60 digits): delta(eps = 1) of 2-GDP.
  EXPECT_NEAR(gdp_delta(2.0, 1.0), 0.50986166005467015308, 1e-15);
  EXPECT_EQ(gdp_delta(0.0, 1.0), 0.0);
  EXPECT_EQ(gdp_delta(kInf, 1.0), 1.0);
}

TEST(PrivacyTest, GdpDeltaIsFiniteForHugeEpsilonAndMu) {
  // e^eps overflows at eps > 709; the product must not.
  const double d = gdp_delta(100.0, 5000.0);
  EXPECT_TRUE(std::isfinite(d));
  EXPECT_GE(d, 0.0);
  EXPECT_LT(d, 1.0);
  EXPECT_EQ(gdp_delta(1.0, kInf), 0.0);
}

// Reference: 60-digit mpmath bisection of delta(eps) = Phi(-eps/mu + mu/2) -
// e^eps Phi(-eps/mu - mu/2) (the script is in docs/privacy-accounting.md).
TEST(PrivacyTest, GdpEpsilonMatchesHighPrecisionReference) {
  const struct {
    double mu, delta, epsilon;
  } cases[] = {
      {0.5, 1e-5, 1.9930914044151196213},    {1.0, 1e-6, 4.8865541174622120059},  {3.0, 1e-8, 20.77405544264619959},
      {0.01, 1e-5, 0.027219419814577135925}, {20.0, 1e-6, 294.17178625764450103}, {50.0, 1e-10, 1567.1258274830273345},
  };
  for (const auto& c : cases) {
    EXPECT_NEAR(gdp_epsilon(c.mu, c.delta) / c.epsilon, 1.0, 1e-12) << "mu=" << c.mu;
  }
}

TEST(PrivacyTest, GdpEpsilonSolvesDeltaAndIsNeverOptimistic) {
  for (double mu : {1e-4, 0.05, 0.7, 2.0, 8.0, 40.0}) {
    for (double delta : {1e-12, 1e-6, 1e-3, 0.1}) {
      const double eps = gdp_epsilon(mu, delta);
      if (eps == 0) {
        EXPECT_LE(gdp_delta(mu, 0.0), delta);
        continue;
      }
      EXPECT_LE(gdp_delta(mu, eps), delta) << "mu=" << mu << " delta=" << delta;
      EXPECT_NEAR(gdp_delta(mu, eps) / delta, 1.0, 1e-8) << "mu=" << mu << " delta=" << delta;
    }
  }
}

TEST(PrivacyTest, GdpEpsilonIsZeroWhenDeltaCoversTheWholeCurve) {
  // 2 Phi(mu/2) - 1 = 4e-9 < delta: (0, delta)-DP already.
  EXPECT_EQ(gdp_epsilon(1e-8, 1e-5), 0.0);
  EXPECT_EQ(gdp_epsilon(0.0, 1e-5), 0.0);
  EXPECT_EQ(gdp_epsilon(kInf, 1e-5), kInf);
}

TEST(PrivacyTest, GdpMuEpsilonRoundTrip) {
  for (double mu : {1e-3, 0.1, 0.63, 1.0, 5.0, 30.0}) {
    for (double delta : {1e-10, 1e-5, 1e-2}) {
      const double eps = gdp_epsilon(mu, delta);
      if (eps == 0) continue;  // delta >= 2 Phi(mu/2) - 1: no eps to invert
      EXPECT_NEAR(gdp_mu(eps, delta) / mu, 1.0, 1e-9) << "mu=" << mu << " delta=" << delta;
    }
  }
  for (double eps : {0.01, 0.5, 1.0, 3.0, 10.0, 100.0}) {
    const double mu = gdp_mu(eps, 1e-6);
    EXPECT_LE(gdp_epsilon(mu, 1e-6), eps * (1 + 1e-12));
    EXPECT_NEAR(gdp_epsilon(mu, 1e-6) / eps, 1.0, 1e-9) << "eps=" << eps;
  }
}

TEST(PrivacyTest, GdpEpsilonMonotoneInMuAndDelta) {
  double previous = 0;
  for (double mu = 0.05; mu < 20; mu *= 1.3) {
    const double eps = gdp_epsilon(mu, 1e-6);
    EXPECT_GT(eps, previous) << "mu=" << mu;
    previous = eps;
  }
  previous = kInf;
  for (double delta = 1e-14; delta < 0.5; delta *= 7) {
    const double eps = gdp_epsilon(1.5, delta);
    EXPECT_LT(eps, previous) << "delta=" << delta;
    previous = eps;
  }
}

// ---------------------------------------------------------------------------
// Tree depth and order grid.

TEST(PrivacyTest, TreeDepthIsBitLength) {
  EXPECT_EQ(tree_depth(0), 0);
  EXPECT_EQ(tree_depth(1), 1);
  EXPECT_EQ(tree_depth(2), 2);
  EXPECT_EQ(tree_depth(3), 2);
  EXPECT_EQ(tree_depth(4), 3);
  EXPECT_EQ(tree_depth(1023), 10);
  EXPECT_EQ(tree_depth(1024), 11);
  EXPECT_EQ(tree_depth(4096), 13);
  EXPECT_EQ(tree_depth(100000), 17);
  EXPECT_EQ(tree_depth(std::uint64_t{1} << 63), 64);
  EXPECT_EQ(tree_depth(~std::uint64_t{0}), 64);
  for (std::uint64_t length = 1; length <= 5000; ++length) {
    ASSERT_EQ(tree_depth(length), static_cast<int>(std::ceil(std::log2(static_cast<double>(length) + 1))))
        << "L=" << length;
  }
}

TEST(PrivacyTest, OrderGridIsDpAccountingDefault) {
  const std::vector<double>& orders = rdp_orders();
  ASSERT_EQ(orders.size(), 99u + 53u + 4u);
  for (int k = 1; k < 100; ++k) EXPECT_EQ(orders[k - 1], 1 + k / 10.0) << "k=" << k;
  EXPECT_EQ(orders[0], 1.1);
  EXPECT_EQ(orders[98], 10.9);
  for (int a = 11; a < 64; ++a) EXPECT_EQ(orders[99 + (a - 11)], a);
  EXPECT_EQ(orders[152], 128);
  EXPECT_EQ(orders[155], 1024);
  for (std::size_t i = 1; i < orders.size(); ++i) EXPECT_LT(orders[i - 1], orders[i]);
}

// ---------------------------------------------------------------------------
// RDP to (eps, delta).

TEST(PrivacyTest, RdpToEpsilonUsesCanonneKamathSteinke) {
  // One order: eps = r + log(1 - 1/a) - log(delta a) / (a - 1).
  const double expected = 0.5 + std::log(0.5) - std::log(2e-5);
  EXPECT_DOUBLE_EQ(rdp_to_epsilon({2.0}, {0.5}, 1e-5), expected);
  // The minimum over orders is taken.
  EXPECT_DOUBLE_EQ(rdp_to_epsilon({2.0, 3.0}, {0.5, 100.0}, 1e-5), expected);
  // Orders <= 1.01 are unusable (eps = inf) unless the KL shortcut applies.
  EXPECT_EQ(rdp_to_epsilon({1.005}, {0.5}, 1e-5), kInf);
  // KL shortcut: delta^2 + expm1(-r) > 0 means delta >= sqrt(1 - e^-r): eps = 0.
  EXPECT_EQ(rdp_to_epsilon({1.005, 5.0}, {1e-12, 1e-12}, 1e-5), 0.0);
  // Infinite RDP at an order just drops it out.
  EXPECT_DOUBLE_EQ(rdp_to_epsilon({2.0, 3.0}, {0.5, kInf}, 1e-5), expected);
  // Clamped at 0.
  EXPECT_EQ(rdp_to_epsilon({1024.0}, {1e-7}, 0.5), 0.0);
}

TEST(PrivacyTest, ZcdpConversionIsNeverBelowExactGdp) {
  // rho-zCDP with rho = mu^2 / 2 is implied by mu-GDP; the RDP route is looser.
  for (double mu : {0.1, 0.5, 1.0, 3.0}) {
    EXPECT_GE(zcdp_to_epsilon(mu * mu / 2, 1e-6), gdp_epsilon(mu, 1e-6)) << "mu=" << mu;
  }
  EXPECT_EQ(zcdp_to_epsilon(0.0, 1e-6), 0.0);
}

// ---------------------------------------------------------------------------
// Tree accounting and calibration.

TEST(PrivacyTest, TreeAccountDependsOnlyOnTheLongestPhase) {
  const TreeAccount several = account_tree(3.0, {1000, 500, 256, 1, 0}, 1e-6);
  const TreeAccount longest = account_tree(3.0, {1000}, 1e-6);
  EXPECT_EQ(several.depth, longest.depth);
  EXPECT_EQ(several.epsilon_gdp, longest.epsilon_gdp);
  EXPECT_EQ(several.epsilon_rdp, longest.epsilon_rdp);
  // Only empty phases: nothing released, nothing spent.
  const TreeAccount empty = account_tree(3.0, {0, 0}, 1e-6);
  EXPECT_EQ(empty.depth, 0);
  EXPECT_EQ(empty.epsilon_gdp, 0.0);
  EXPECT_EQ(empty.epsilon_rdp, 0.0);
}

TEST(PrivacyTest, TreeEpsilonFallsWithNoiseAndRisesWithDepth) {
  double previous_gdp = kInf, previous_rdp = kInf;
  for (double z = 0.5; z <= 40; z *= 1.25) {
    const TreeAccount account = account_tree(z, {1024}, 1e-6);
    EXPECT_LT(account.epsilon_gdp, previous_gdp) << "z=" << z;
    EXPECT_LE(account.epsilon_rdp, previous_rdp) << "z=" << z;
    previous_gdp = account.epsilon_gdp;
    previous_rdp = account.epsilon_rdp;
  }
  previous_gdp = previous_rdp = 0;
  for (std::uint64_t length = 1; length <= (std::uint64_t{1} << 30); length *= 2) {
    const TreeAccount account = account_tree(8.0, {length}, 1e-6);
    EXPECT_GT(account.epsilon_gdp, previous_gdp) << "L=" << length;
    EXPECT_GE(account.epsilon_rdp, previous_rdp) << "L=" << length;
    previous_gdp = account.epsilon_gdp;
    previous_rdp = account.epsilon_rdp;
  }
}

// SPEC: mu = s sqrt(D) / sigma, i.e. noise multiplier z = sigma / s with s the
// replace-one sensitivity of one node.
TEST(PrivacyTest, CalibrateTreeSigmaRoundTrip) {
  for (double sensitivity : {1e-3, 0.04, 2.0}) {
    for (std::uint64_t max_phase : {1ull, 64ull, 1024ull, 100000ull}) {
      for (double eps : {0.1, 1.0, 2.0, 8.0}) {
        const double delta = 1e-6;
        const double sigma = calibrate_tree_sigma(sensitivity, max_phase, eps, delta);
        const TreeAccount account = account_tree(sigma / sensitivity, {max_phase}, delta);
        EXPECT_NEAR(account.epsilon_gdp, eps, 1e-6) << "s=" << sensitivity << " L=" << max_phase;
        EXPECT_LE(account.epsilon_gdp, eps * (1 + 1e-9));
        EXPECT_NEAR(account.mu, sensitivity * std::sqrt(tree_depth(max_phase)) / sigma, 1e-12);
      }
    }
  }
  // sigma is linear in the sensitivity.
  EXPECT_NEAR(calibrate_tree_sigma(0.2, 1024, 1.0, 1e-5) / calibrate_tree_sigma(0.1, 1024, 1.0, 1e-5), 2.0, 1e-12);
}

// ---------------------------------------------------------------------------
// Poisson-subsampled Gaussian.

TEST(PrivacyTest, RejectsInvalidArgumentsWithClearMessages) {
  const double nan = std::nan("");
  expect_error([] { gdp_epsilon(1.0, 0.0); }, {"gdp_epsilon", "delta must be in (0, 1)", "got 0"});
  expect_error([] { gdp_epsilon(1.0, 1.0); }, {"gdp_epsilon", "delta"});
  expect_error([] { gdp_epsilon(-1.0, 1e-5); }, {"gdp_epsilon", "mu must be >= 0"});
  expect_error([&] { gdp_epsilon(nan, 1e-5); }, {"mu"});
  expect_error([] { gdp_mu(0.0, 1e-5); }, {"gdp_mu", "epsilon must be finite and > 0"});
  expect_error([] { gdp_mu(-1.0, 1e-5); }, {"epsilon"});
  expect_error([] { gdp_mu(1.0, 2.0); }, {"gdp_mu", "delta"});
  expect_error([] { gdp_delta(-0.5, 1.0); }, {"gdp_delta", "mu"});
  expect_error([] { rdp_to_epsilon({2.0, 3.0}, {0.1}, 1e-5); }, {"rdp_to_epsilon", "one value per order"});
  expect_error([] { rdp_to_epsilon({}, {}, 1e-5); }, {"rdp_to_epsilon", "non-empty"});
  expect_error([] { rdp_to_epsilon({0.5}, {0.1}, 1e-5); }, {"order must be >= 1"});
  expect_error([] { rdp_to_epsilon({2.0}, {-0.1}, 1e-5); }, {"RDP value must be >= 0"});
  expect_error([] { rdp_to_epsilon({2.0}, {0.1}, 0.0); }, {"delta"});
  expect_error([] { zcdp_to_epsilon(-1.0, 1e-5); }, {"zcdp_to_epsilon", "rho"});
  expect_error([] { account_tree(0.0, {10}, 1e-5); }, {"account_tree", "noise_multiplier must be finite and > 0"});
  expect_error([] { account_tree(kInf, {10}, 1e-5); }, {"noise_multiplier"});
  expect_error([] { account_tree(1.0, {}, 1e-5); }, {"account_tree", "phase_lengths must be non-empty"});
  expect_error([] { account_tree(1.0, {10}, 1.5); }, {"account_tree", "delta"});
  expect_error([] { calibrate_tree_sigma(0.0, 10, 1.0, 1e-5); }, {"calibrate_tree_sigma", "sensitivity"});
  expect_error([] { calibrate_tree_sigma(1.0, 0, 1.0, 1e-5); }, {"max_phase_length must be >= 1"});
  expect_error([] { calibrate_tree_sigma(1.0, 10, 0.0, 1e-5); }, {"epsilon"});
  expect_error([] { calibrate_tree_sigma(1.0, 10, kInf, 1e-5); }, {"epsilon"});
  expect_error([] { poisson_gaussian_rdp(0.0, 1.0, 2.0); }, {"poisson_gaussian_rdp", "q must be in (0, 1]"});
  expect_error([] { poisson_gaussian_rdp(1.5, 1.0, 2.0); }, {"q must be in (0, 1]"});
  expect_error([] { poisson_gaussian_rdp(0.1, -1.0, 2.0); }, {"noise_multiplier"});
  expect_error([] { poisson_gaussian_rdp(0.1, 1.0, 1.0); }, {"order must be finite and > 1"});
  expect_error([] { dpsgd_poisson_epsilon(0.1, 1.0, 0, 1e-5); }, {"dpsgd_poisson_epsilon", "steps must be >= 1"});
  expect_error([] { dpsgd_poisson_epsilon(0.1, 0.0, 10, 1e-5); }, {"noise_multiplier"});
  expect_error([] { dpsgd_poisson_epsilon(0.1, 1.0, 10, -1e-5); }, {"delta"});
  expect_error([] { calibrate_dpsgd_noise(0.1, 10, -1.0, 1e-5); }, {"calibrate_dpsgd_noise", "epsilon"});
  expect_error([] { calibrate_dpsgd_noise(0.1, 0, 1.0, 1e-5); }, {"steps"});
  expect_error([] { calibrate_dpsgd_noise(2.0, 10, 1.0, 1e-5); }, {"q must be in (0, 1]"});
}

}  // namespace
}  // namespace dpsosp::privacy
