// The PLD accountant (include/dpsosp/pld.hpp): against closed forms (the
// Gaussian is exactly GDP; one subsampled step has an exact hockey-stick
// divergence, integrated here from the densities), against RDP as an upper
// bound, and against dp_accounting's figures (tests/pld_reference.py).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "dpsosp/error.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "privacy/fft.hpp"
#include "test_errors.hpp"

namespace dpsosp::privacy {
namespace {

constexpr double kH = 1e-4;  // the default discretization

TEST(Pld, GaussianIsTheExactGdpConversionToTheDiscretization) {
  for (double mu : {0.05, 0.3, 1.0, 2.0, 5.0}) {
    const PrivacyLossDistribution pld = gaussian_pld(1.0, mu);
    EXPECT_TRUE(pld.symmetric());
    for (double delta : {1e-7, 1e-5, 1e-3}) {
      SCOPED_TRACE("mu=" + std::to_string(mu) + " delta=" + std::to_string(delta));
      const double exact = gdp_epsilon(mu, delta), eps = pld.epsilon(delta);
      EXPECT_GE(eps, exact * (1 - 1e-12));  // pessimistic: never below
      EXPECT_LE(eps, exact + kH);           // one step: at most one interval above
    }
    for (double eps : {0.0123, 0.5, 1.7, 4.2}) {
      EXPECT_GE(pld.delta(eps), gdp_delta(mu, eps) - 1e-15);
      EXPECT_LE(pld.delta(eps), gdp_delta(mu, std::max(0.0, eps - kH)) + 1e-15);
    }
  }
  // The scale is sensitivity / sigma alone.
  EXPECT_NEAR(gaussian_pld(3.0, 1.5).epsilon(1e-6), gaussian_pld(2.0, 1.0).epsilon(1e-6), 1e-9);
}

TEST(Pld, ComposedGaussiansAreGdpOfTheSummedSquares) {
  // k releases of sensitivity s: sqrt(k) s / sigma; two of different
  // sensitivities: sqrt(s1^2 + s2^2) / sigma (the general composition).
  const PrivacyLossDistribution a = gaussian_pld(2.0, 1.0), b = gaussian_pld(2.0, 0.5);
  const double k_fold = a.self_compose(16).epsilon(1e-6), exact_k = gdp_epsilon(2.0, 1e-6);
  EXPECT_GE(k_fold, exact_k);
  EXPECT_LE(k_fold, exact_k + 16 * kH);
  const double mixed = a.compose(b).compose(b).epsilon(1e-6), exact_mixed = gdp_epsilon(std::sqrt(1.5) / 2.0, 1e-6);
  EXPECT_GE(mixed, exact_mixed);
  EXPECT_LE(mixed, exact_mixed + 3 * kH);
  // compose and self_compose agree; the identity changes nothing.
  EXPECT_NEAR(a.compose(a).epsilon(1e-6), a.self_compose(2).epsilon(1e-6), 1e-9);
  EXPECT_NEAR(a.compose(PrivacyLossDistribution::identity()).epsilon(1e-6), a.epsilon(1e-6), 1e-9);  // (tails cut)
  EXPECT_EQ(PrivacyLossDistribution::identity().epsilon(1e-6), 0.0);
}

TEST(Pld, TreeFiguresAreTheSpecsGdpFigures) {
  struct Case {
    double z;
    std::vector<std::uint64_t> steps;
    double delta, gdp;
  };
  for (const Case& c :
       {Case{5, {1000, 500, 256}, 1e-6, 2.92160}, Case{2, {100000}, 1e-5, 10.37824}, Case{10, {4096}, 1e-5, 1.38618}}) {
    const TreeAccount a = account_tree(c.z, c.steps, c.delta);
    const double eps = tree_pld_epsilon(c.z, a.depth, c.delta);
    EXPECT_GE(eps, a.epsilon_gdp);
    EXPECT_LE(eps, a.epsilon_gdp + kH);
    EXPECT_NEAR(eps, c.gdp, 1e-4);
  }
}

// The hockey-stick divergence of one Poisson-subsampled Gaussian step
// (noise sigma, record bound s, rate q), integrated from the densities:
// int over {upper > e^eps lower} of (upper - e^eps lower), the set found by
// bisection on the likelihood ratio (decreasing in x), the integral by Simpson.
double exact_step_delta(double q, double sigma, double s, int direction, double eps) {
  const auto phi = [&](double x) { return std::exp(-0.5 * x * x / (sigma * sigma)) / (sigma * std::sqrt(2 * M_PI)); };
  const auto upper = [&](double x) { return direction == 1 ? phi(x) : (1 - q) * phi(x) + q * phi(x + s); };
  const auto lower = [&](double x) { return direction == 0 ? phi(x) : (1 - q) * phi(x) + q * phi(x - s); };
  const auto excess = [&](double x) { return upper(x) - std::exp(eps) * lower(x); };
  // direction 0: remove, 1: add, 2: replace.
  if (direction == 1 && eps >= -std::log1p(-q)) return 0.0;
  if (direction == 0 && eps <= std::log1p(-q)) return -std::expm1(eps);
  double lo = -30 * sigma - 2 * s, hi = 30 * sigma + 2 * s;  // excess > 0 at lo, < 0 at hi
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) > 0 ? lo : hi) = mid;
  }
  const double a = lo - 40 * sigma - 2 * s, b = lo;
  const int n = 40000;
  const double h = (b - a) / n;
  double sum = excess(a) + excess(b);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4 : 2) * excess(a + i * h);
  return sum * h / 3;
}

TEST(Pld, OneSubsampledStepBracketsTheExactDivergence) {
  PldOptions optimistic;
  optimistic.pessimistic = false;
  for (double q : {0.01, 0.2}) {
    for (double sigma : {0.8, 2.0}) {
      for (Neighbouring n : {Neighbouring::kAddRemove, Neighbouring::kReplaceOne}) {
        const PrivacyLossDistribution pess = poisson_gaussian_pld(q, sigma, 1.0, n);
        const PrivacyLossDistribution opt = poisson_gaussian_pld(q, sigma, 1.0, n, optimistic);
        EXPECT_EQ(pess.symmetric(), n == Neighbouring::kReplaceOne);
        for (double eps : {0.0333717, 0.512345, 1.234567}) {
          SCOPED_TRACE("q=" + std::to_string(q) + " sigma=" + std::to_string(sigma) + " eps=" + std::to_string(eps) +
                       (n == Neighbouring::kReplaceOne ? " replace-one" : " add/remove"));
          const auto exact = [&](double e) {
            if (n == Neighbouring::kReplaceOne) return exact_step_delta(q, sigma, 1.0, 2, e);
            return std::max(exact_step_delta(q, sigma, 1.0, 0, e), exact_step_delta(q, sigma, 1.0, 1, e));
          };
          const double d = exact(eps);
          EXPECT_GE(pess.delta(eps), d - 1e-13);                               // never below the exact value
          EXPECT_LE(pess.delta(eps), exact(std::max(0.0, eps - kH)) + 1e-13);  // nor above it moved by one interval
          EXPECT_LE(opt.delta(eps), d + 1e-13);                                // the optimistic one never above it
        }
      }
    }
  }
}

TEST(Pld, PoissonAtRateOneIsTheGaussian) {
  EXPECT_TRUE(poisson_gaussian_pld(1.0, 1.5, 1.0, Neighbouring::kAddRemove).symmetric());
  EXPECT_DOUBLE_EQ(poisson_gaussian_pld(1.0, 1.5, 1.0, Neighbouring::kAddRemove).epsilon(1e-6),
                   gaussian_pld(1.5, 1.0).epsilon(1e-6));
  // In dpsosp's convention (z = sigma / sensitivity of the relation) both
  // relations give (sqrt(T) / z)-GDP at q = 1.
  for (Neighbouring n : {Neighbouring::kAddRemove, Neighbouring::kReplaceOne}) {
    const double eps = dpsgd_pld_epsilon(1.0, 4.0, 9, 1e-6, n), exact = gdp_epsilon(3.0 / 4.0, 1e-6);
    EXPECT_GE(eps, exact);
    EXPECT_LE(eps, exact + 9 * kH);
  }
}

// A prior Gaussian release of mu_p-GDP composed with T steps at q = 1 is
// (sqrt(T / z^2 + mu_p^2))-GDP exactly, under either relation; the
// calibration with the prior needs more noise than without and meets the
// target with it.
TEST(Pld, PriorGaussianComposesExactly) {
  const double mu_p = 0.3, delta = 1e-6;
  for (Neighbouring n : {Neighbouring::kAddRemove, Neighbouring::kReplaceOne}) {
    const double eps = dpsgd_pld_epsilon(1.0, 4.0, 9, delta, n, {}, mu_p);
    const double exact = gdp_epsilon(std::sqrt(9.0 / 16.0 + mu_p * mu_p), delta);
    EXPECT_GE(eps, exact);
    EXPECT_LE(eps, exact + 10 * kH);
    EXPECT_GT(eps, dpsgd_pld_epsilon(1.0, 4.0, 9, delta, n));
  }
  // At eps 1, delta 1e-6 the target is about 0.25-GDP: a prior of 0.15 leaves room.
  const double q = 0.05, target = 1.0, prior = 0.15;
  const std::uint64_t steps = 200;
  const double z0 = calibrate_dpsgd_noise_pld(q, steps, target, delta);
  const double z1 = calibrate_dpsgd_noise_pld(q, steps, target, delta, Neighbouring::kAddRemove, {}, prior);
  EXPECT_GT(z1, 1.1 * z0);
  EXPECT_LE(dpsgd_pld_epsilon(q, z1, steps, delta, Neighbouring::kAddRemove, {}, prior), target);
  EXPECT_GT(dpsgd_pld_epsilon(q, z1 * (1 - 1e-4), steps, delta, Neighbouring::kAddRemove, {}, prior), target * 0.999);
  // A prior that spends the whole target leaves no calibration.
  EXPECT_THROW(calibrate_dpsgd_noise_pld(q, steps, target, delta, Neighbouring::kAddRemove, {}, mu_p), Error);
  EXPECT_THROW(dpsgd_pld_epsilon(q, z1, steps, delta, Neighbouring::kAddRemove, {}, -1.0), Error);
}

TEST(Pld, ReplaceOneLiesBetweenAddRemoveAndItsGroupPrivacyBound) {
  // The same noise and record bound C: replacing a record is at least as
  // revealing as adding or removing it, and at most two such changes
  // ((2 eps, (1 + e^eps) delta) by group privacy).
  const double q = 0.02, sigma = 1.2, delta = 1e-6;
  const std::uint64_t steps = 300;
  const double add_remove =
      poisson_gaussian_pld(q, sigma, 1.0, Neighbouring::kAddRemove).self_compose(steps).epsilon(delta);
  const PrivacyLossDistribution replace =
      poisson_gaussian_pld(q, sigma, 1.0, Neighbouring::kReplaceOne).self_compose(steps);
  EXPECT_GT(replace.epsilon(delta), add_remove);
  EXPECT_LE(replace.epsilon((1 + std::exp(add_remove)) * delta), 2 * add_remove);
  // z = sigma / (2C) for replace-one.
  EXPECT_DOUBLE_EQ(dpsgd_pld_epsilon(q, sigma / 2, steps, delta, Neighbouring::kReplaceOne), replace.epsilon(delta));
}

TEST(Pld, NeverAboveRdpWhereRdpIsLoose) {
  // The example: RDP 2.10, PLD 1.828 (dp_accounting: 1.828244).
  EXPECT_NEAR(dpsgd_poisson_epsilon(0.01, 1.0, 1000, 1e-5), 2.1014, 1e-3);
  EXPECT_NEAR(dpsgd_pld_epsilon(0.01, 1.0, 1000, 1e-5), 1.828244, 1e-5);
  struct Case {
    double q, z;
    std::uint64_t steps;
    double delta;
  };
  for (const Case& c : {Case{0.001, 0.6, 10000, 1e-7}, Case{0.0042666, 0.9, 1172, 1e-5}, Case{0.05, 0.8, 500, 1e-4},
                        Case{0.3, 5.0, 1000, 1e-5}, Case{0.01, 2.0, 10000, 1e-5}}) {
    const double pld = dpsgd_pld_epsilon(c.q, c.z, c.steps, c.delta);
    EXPECT_LT(pld, dpsgd_poisson_epsilon(c.q, c.z, c.steps, c.delta)) << c.q << " " << c.z;
  }
}

TEST(Pld, AFinerDiscretizationIsNeverWorse) {
  // Connect-the-dots on a grid is the least pessimistic PLD on that grid, so
  // halving h can only lower eps; the optimistic figure stays below all.
  double previous = std::numeric_limits<double>::infinity();
  for (double h : {4e-4, 2e-4, 1e-4}) {
    PldOptions o;
    o.discretization = h;
    const double eps = dpsgd_pld_epsilon(0.01, 1.0, 1000, 1e-5, Neighbouring::kAddRemove, o);
    EXPECT_LE(eps, previous + 1e-12) << h;
    previous = eps;
  }
  EXPECT_LT(dpsgd_pld_epsilon_optimistic(0.01, 1.0, 1000, 1e-5), previous);
}

TEST(Pld, DeltaAndEpsilonInvertEachOther) {
  const double q = 0.01, z = 1.0, delta = 1e-5;
  const double eps = dpsgd_pld_epsilon(q, z, 1000, delta);
  EXPECT_LE(dpsgd_pld_delta(q, z, 1000, eps), delta * (1 + 1e-9));
  EXPECT_GT(dpsgd_pld_delta(q, z, 1000, eps - 1e-3), delta);
  EXPECT_GT(dpsgd_pld_delta(q, z, 1000, 0.0), dpsgd_pld_delta(q, z, 1000, eps / 2));  // decreasing in eps
  EXPECT_GT(dpsgd_pld_delta(q, z, 1000, eps / 2), delta);
}

TEST(Pld, CalibrationMeetsTheTargetWithLessNoiseThanRdp) {
  const double z = calibrate_dpsgd_noise_pld(0.01, 1000, 1.828244, 1e-5);
  EXPECT_NEAR(z, 1.0, 1e-5);
  const double eps = dpsgd_pld_epsilon(0.01, z, 1000, 1e-5);
  EXPECT_LE(eps, 1.828244);
  EXPECT_GE(eps, 1.828244 * (1 - 1e-5));
  EXPECT_LT(z, 0.95 * calibrate_dpsgd_noise(0.01, 1000, 1.828244, 1e-5));
  const double z_replace = calibrate_dpsgd_noise_pld(0.01, 1000, 1.0, 1e-5, Neighbouring::kReplaceOne);
  EXPECT_LE(dpsgd_pld_epsilon(0.01, z_replace, 1000, 1e-5, Neighbouring::kReplaceOne), 1.0);
}

TEST(Pld, CalibrationFromAStartOrAtATolerance) {
  // A start (a coarser calibration's z) above or below the answer, or none:
  // the same target met, z within the tolerance of the answer without one.
  const double plain = calibrate_dpsgd_noise_pld(0.02, 300, 1.0, 1e-5, Neighbouring::kReplaceOne, {}, 0.1);
  for (double start : {0.5 * plain, 0.97 * plain, 1.003 * plain, 1.6 * plain}) {
    const double z = calibrate_dpsgd_noise_pld(0.02, 300, 1.0, 1e-5, Neighbouring::kReplaceOne, {}, 0.1, start);
    EXPECT_NEAR(z, plain, 2e-6 * plain) << start;
    EXPECT_LE(dpsgd_pld_epsilon(0.02, z, 300, 1e-5, Neighbouring::kReplaceOne, {}, 0.1), 1.0) << start;
  }
  // A ranking's tolerance: feasible, and within it of the answer.
  PldOptions rank;
  rank.calibration_tolerance = 1e-3;
  const double rough = calibrate_dpsgd_noise_pld(0.02, 300, 1.0, 1e-5, Neighbouring::kAddRemove, rank);
  const double fine = calibrate_dpsgd_noise_pld(0.02, 300, 1.0, 1e-5, Neighbouring::kAddRemove);
  EXPECT_GE(rough, fine * (1 - 1e-6));
  EXPECT_LE(rough, fine * (1 + 1.1e-3));
  rank.calibration_tolerance = 0.5;
  EXPECT_CONTAINS(
      testing::error_of([&] { calibrate_dpsgd_noise_pld(0.02, 300, 1.0, 1e-5, Neighbouring::kAddRemove, rank); }),
      "calibration_tolerance");
}

TEST(Pld, RefusesBadInput) {
  EXPECT_CONTAINS(testing::error_of([] { gaussian_pld(0.0, 1.0); }),
                  "privacy::gaussian_pld: sigma must be finite and > 0, got 0");
  EXPECT_CONTAINS(testing::error_of([] { poisson_gaussian_pld(0.0, 1.0, 1.0, Neighbouring::kAddRemove); }),
                  "privacy::poisson_gaussian_pld: sampling_rate must be in (0, 1], got 0");
  EXPECT_CONTAINS(testing::error_of([] { gaussian_pld(1.0, 1.0).epsilon(0.0); }),
                  "PrivacyLossDistribution::epsilon: delta must be in (0, 1), got 0");
  EXPECT_CONTAINS(testing::error_of([] { gaussian_pld(1.0, 1.0).delta(-1.0); }),
                  "PrivacyLossDistribution::delta: epsilon must be >= 0, got -1");
  EXPECT_CONTAINS(testing::error_of([] { gaussian_pld(1.0, 1.0).self_compose(0); }),
                  "PrivacyLossDistribution::self_compose: times must be >= 1, got 0");
  PldOptions coarse;
  coarse.discretization = 1e-3;
  EXPECT_CONTAINS(testing::error_of([&] { gaussian_pld(1.0, 1.0).compose(gaussian_pld(1.0, 1.0, coarse)); }),
                  "PrivacyLossDistribution::compose: both need the same discretization and rounding");
  PldOptions bad;
  bad.discretization = 0;
  EXPECT_CONTAINS(testing::error_of([&] { gaussian_pld(1.0, 1.0, bad); }),
                  "PldOptions: discretization = 0: must be finite and > 0");
  PldOptions small;
  small.max_bins = 1000;
  EXPECT_CONTAINS(testing::error_of([&] { gaussian_pld(1.0, 1.0, small); }), "more than max_bins = 1000");
  EXPECT_CONTAINS(testing::error_of([] { dpsgd_pld_epsilon(0.01, 1.0, 0, 1e-5); }),
                  "privacy::dpsgd_pld_epsilon: steps must be >= 1");
  EXPECT_CONTAINS(testing::error_of([] { calibrate_dpsgd_noise_pld(0.01, 10, 0.0, 1e-5); }),
                  "privacy::calibrate_dpsgd_noise_pld: epsilon must be finite and > 0, got 0");
}

TEST(PldFft, TransformAndConvolutionsMatchDirectSums) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> a(300), b(200);
  for (double& v : a) v = u(rng);
  for (double& v : b) v = u(rng);
  const std::vector<double> c = detail::convolve(a, b);
  ASSERT_EQ(c.size(), 499u);
  for (std::size_t k = 0; k < c.size(); k += 7) {
    double direct = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (k >= i && k - i < b.size()) direct += a[i] * b[k - i];
    EXPECT_NEAR(c[k], direct, 1e-12 * direct);
  }
  detail::Spectrum x(64);
  for (auto& v : x) v = {u(rng), u(rng)};
  detail::Spectrum y = x;
  detail::fft(y, false);
  for (std::size_t k = 0; k < 64; k += 5) {
    std::complex<double> direct = 0;
    for (std::size_t j = 0; j < 64; ++j) direct += x[j] * std::polar(1.0, -2 * M_PI * double(j * k) / 64);
    EXPECT_NEAR(std::abs(y[k] - direct), 0.0, 1e-12);
  }
  detail::fft(y, true);
  for (std::size_t j = 0; j < 64; ++j) EXPECT_NEAR(std::abs(y[j] - x[j]), 0.0, 1e-14);
  // Three-fold self-convolution of {0.5, 0.5}: the binomial(3, 1/2) masses.
  const std::vector<double> w = detail::self_convolve({0.5, 0.5}, 3, 0, 4, 4);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(w[k], (k == 0 || k == 3 ? 1.0 : 3.0) / 8, 1e-15);
}

#include "pld_reference_figures.inc"

TEST(PldReference, AgreesWithDpAccounting) {
  // dp_accounting's PLDAccountant, pessimistic, h = 1e-4 (tests/pld_reference.py):
  // the issue asks for 1%; the two implement the same algorithm and agree to
  // about 1e-6 (FFT length and truncation windows differ).
  for (const PldReferenceEpsilon& r : kPldReferenceEpsilons) {
    SCOPED_TRACE("q=" + std::to_string(r.q) + " z=" + std::to_string(r.z) + " T=" + std::to_string(r.steps) +
                 (r.replace_one ? " replace-one" : " add/remove"));
    const Neighbouring n = r.replace_one ? Neighbouring::kReplaceOne : Neighbouring::kAddRemove;
    EXPECT_NEAR(dpsgd_pld_epsilon(r.q, r.z, r.steps, r.delta, n), r.epsilon, 1e-5 * r.epsilon + 1e-6);
  }
  for (const PldReferenceDelta& r : kPldReferenceDeltas)
    EXPECT_NEAR(dpsgd_pld_delta(r.q, r.z, r.steps, r.epsilon), r.delta, 1e-5 * r.delta);
}

}  // namespace
}  // namespace dpsosp::privacy
