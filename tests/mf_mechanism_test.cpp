// The matrix-factorization mechanism (mechanism.hpp, src/mechanisms/matrix_factorization.cpp):
// its calibration and guarantee, what a release is (the exact estimate plus
// B z, recentred on the last release at a restart), the covariance of its
// noise, the horizon and sensitivity checks, and the secure mode's grid.
//
// Statistical tests use fixed keys (deterministic); each states the chance
// that a correct implementation would fail it for a key picked at random.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/factorization.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

PrivacyTarget target(double epsilon, NoiseMode mode = NoiseMode::kFloat) {
  PrivacyTarget t{epsilon, 1e-6};
  t.noise = mode;
  return t;
}

// The guarantee is the target: mu = s * column_norm / sigma, and sigma is the
// calibrated one; the figures reproduce from the factorization.
TEST(MfMechanism, CalibratedToTheTargetWithTheFactorizationsColumnNorm) {
  for (Index horizon : {1, 10, 234, 5000}) {
    for (double eps : {0.5, 2.0, 8.0}) {
      const auto m = make_mf_mechanism(20, testing::test_noise_key(), 0.01, horizon, target(eps));
      const PrivacyRecord r = m->account();
      EXPECT_EQ(r.mechanism, MechanismKind::kMatrixFactorization);
      EXPECT_EQ(r.accounting(), "gdp-mf");
      EXPECT_EQ(r.adjacency, Adjacency::kReplaceOne);
      EXPECT_EQ(r.horizon, horizon);
      const double col = BltFactorization::square_root(horizon).max_column_norm(horizon);
      EXPECT_DOUBLE_EQ(r.column_norm, col);
      EXPECT_NEAR(r.mu, privacy::gdp_mu(eps, 1e-6), 1e-12 * r.mu);
      EXPECT_NEAR(r.epsilon, eps, 1e-9 * eps);
      EXPECT_LE(r.epsilon, eps * (1 + 1e-12));
      EXPECT_DOUBLE_EQ(r.sigma, mf_noise_sigma(0.01, horizon, target(eps), 20));
      EXPECT_NEAR(r.sigma, 0.01 * col / privacy::gdp_mu(eps, 1e-6), 1e-15);
      EXPECT_GE(r.epsilon_rdp, r.epsilon);
    }
  }
  // Passes over one order of `period` releases: the sensitivity of C u is the
  // cyclic participation norm, and the calibration meets the target with it.
  for (Index period : {1, 7, 50, 100, 250}) {
    const PrivacyRecord r =
        make_mf_mechanism(20, testing::test_noise_key(), 0.01, 250, target(2.0), std::nullopt, period)->account();
    const BltFactorization f = BltFactorization::square_root(250);
    const double norm = period < 250 ? f.cyclic_participation_norm(250, period) : f.max_column_norm(250);
    EXPECT_DOUBLE_EQ(r.column_norm, norm) << period;
    EXPECT_GT(r.column_norm, period < 250 ? f.max_column_norm(250) : 0.0) << period;
    EXPECT_NEAR(r.epsilon, 2.0, 1e-9) << period;
    EXPECT_NEAR(r.sigma, 0.01 * norm / privacy::gdp_mu(2.0, 1e-6), 1e-15) << period;
    EXPECT_DOUBLE_EQ(r.sigma, mf_noise_sigma(0.01, 250, target(2.0), 20, period));
    const PrivacyRecord secure = make_mf_mechanism(20, testing::test_noise_key(), 0.01, 250,
                                                   target(2.0, NoiseMode::kSecure), std::nullopt, period)
                                     ->account();
    EXPECT_LE(secure.epsilon, 2.0) << period;
    EXPECT_GT(secure.sigma, r.sigma) << period;
  }
  // A given sigma is used as is; epsilon follows from it.
  const auto m = make_mf_mechanism(5, testing::test_noise_key(), 0.1, 100, target(1.0), 0.05);
  const PrivacyRecord r = m->account();
  EXPECT_DOUBLE_EQ(r.sigma, 0.05);
  EXPECT_NEAR(r.mu, 0.1 * BltFactorization::square_root(100).max_column_norm(100) / 0.05, 1e-12);
}

// With (almost) no noise a release is the exact estimate within a phase, and
// at a restart the new estimate: the increments telescope.
TEST(MfMechanism, ReleasesAreTheEstimatePlusNoise) {
  const Index d = 4;
  const auto m = make_mf_mechanism(d, testing::test_noise_key(), 1.0, 20, target(1.0), 1e-300);
  Vec released;
  Vec e1 = Vec::LinSpaced(d, 1, 4);
  m->release(e1, true, 1.0, released);
  EXPECT_LT((released - e1).norm(), 1e-12);
  Vec e2 = e1 + Vec::Constant(d, 0.5);
  m->release(e2, false, 0.5, released);
  EXPECT_LT((released - e2).norm(), 1e-12);
  Vec e3 = Vec::Constant(d, -2);
  m->release(e3, true, 1.0, released);
  EXPECT_LT((released - e3).norm(), 1e-12);
}

// Each coordinate of release t has variance sigma^2 * ||row t of B||^2 and
// releases t, t' covariance sigma^2 <row t, row t'> (B z of one stream): with
// d = 2000 coordinates a run, the sample variance of each of 12 releases is
// within 6 standard errors (sqrt(2/d) relative) of its value (false failure
// below 1e-7), and so are the sample covariances of adjacent releases.
TEST(MfMechanism, NoiseHasTheFactorizationsCovariance) {
  const Index d = 2000, T = 12;
  const double sigma = 0.3;
  const auto m = make_mf_mechanism(d, testing::test_noise_key(), 1.0, T, target(1.0), sigma);
  const BltFactorization f = BltFactorization::square_root(T);
  const std::vector<double> b = f.b_coefficients(T);
  std::vector<Vec> out;
  const Vec zero = Vec::Zero(static_cast<Eigen::Index>(d));
  for (Index t = 0; t < T; ++t) {
    Vec released;
    m->release(zero, t == 0, 1.0, released);
    out.push_back(released);
  }
  for (Index t = 0; t < T; ++t) {
    double want = 0;
    for (Index k = 0; k <= t; ++k) want += b[k] * b[k];
    want *= sigma * sigma;
    const double got = out[t].squaredNorm() / static_cast<double>(d);
    EXPECT_NEAR(got, want, 6 * std::sqrt(2.0 / d) * want) << t;
    if (t == 0) continue;
    double cov = 0;  // <row t, row t - 1> = sum_k b_k b_{k+1}
    for (Index k = 0; k + 1 <= t; ++k) cov += b[k] * b[k + 1];
    cov *= sigma * sigma;
    const double sample = out[t].dot(out[t - 1]) / static_cast<double>(d);
    EXPECT_NEAR(sample, cov, 6 * std::sqrt(2.0 / d) * want) << t;
  }
}

TEST(MfMechanism, RefusesReleasesPastTheHorizonOrTheBound) {
  const auto m = make_mf_mechanism(3, testing::test_noise_key(), 0.5, 2, target(1.0));
  Vec released, e = Vec::Ones(3);
  EXPECT_THROW(m->release(e, true, 0.6, released), Error);
  m->release(e, true, 0.5, released);
  m->release(e, false, 0.25, released);
  EXPECT_THROW(m->release(e, false, 0.25, released), Error);
  EXPECT_THROW(make_mf_mechanism(3, testing::test_noise_key(), 0.5, 0, target(1.0)), Error);
  EXPECT_THROW(make_mf_mechanism(3, testing::test_noise_key(), 0.0, 5, target(1.0)), Error);
  EXPECT_THROW(make_mf_mechanism(3, testing::test_noise_key(), 0.5, 5, target(std::numeric_limits<double>::infinity())),
               Error);
}

// Secure mode: the mechanism releases B-filtered integers on the grid, so
// C (A^{-1} released) / grid is an integer vector at every step (up to the
// filters' floating-point error, far below 1/2); the guarantee is at most the
// target and costs a few percent of noise.
TEST(MfMechanism, SecureReleasesComeFromIntegersOnTheGrid) {
  const Index d = 6, T = 40;
  const auto m = make_mf_mechanism(d, testing::test_noise_key(), 0.02, T, target(2.0, NoiseMode::kSecure));
  const PrivacyRecord r = m->account();
  EXPECT_EQ(r.accounting(), "zcdp-mf-discrete");
  EXPECT_LE(r.epsilon, 2.0);
  EXPECT_GE(r.epsilon, 1.99);
  int exponent = 0;
  EXPECT_EQ(std::frexp(r.grid, &exponent), 0.5);  // a power of two
  const PrivacyRecord flt = make_mf_mechanism(d, testing::test_noise_key(), 0.02, T, target(2.0))->account();
  EXPECT_GT(r.sigma / flt.sigma, 1.02);
  EXPECT_LT(r.sigma / flt.sigma, 1.12);
  const BltFactorization f = BltFactorization::square_root(T);
  BltInverseFilter to_c(f, d);
  Vec previous = Vec::Zero(d), released;
  Vec exact = Vec::LinSpaced(d, -0.3, 0.3);
  for (Index t = 0; t < T; ++t) {
    exact += Vec::Constant(d, 0.001 * static_cast<double>(t % 3));
    m->release(exact, t % 10 == 0, 0.02, released);
    const Vec w = to_c.next((released - previous) / r.grid);
    previous = released;
    EXPECT_LT((w - w.array().round().matrix()).cwiseAbs().maxCoeff(), 1e-6) << t;
  }
}

// The banded Poisson mechanism (spider-mf-adaptive's Poisson passes): its
// noise is sigma C^{-1} xi with xi the secret stream's standard normals (C
// times the releases of zero gives them back), sigma = z clip ||C e||; step t
// samples group t mod bands; the guarantee is the cycles' Poisson-subsampled
// Gaussian; a release past bands x cycles is refused.
TEST(BandedPoisson, NoiseIsTheBandedFactorizationsOfTheSecretStream) {
  const NoiseKey key = testing::test_noise_key();
  const PrivacyTarget target{2.0, 1e-5};
  const Index d = 4, bands = 3, cycles = 5;
  auto m = make_poisson_gaussian_mechanism(d, key, 2.0, 0.3, cycles, target, 1.5, Accountant::kPld, bands);
  const PrivacyRecord r = m->account();
  const BandedFactorization f = BandedFactorization::square_root(bands);
  EXPECT_EQ(r.mechanism, MechanismKind::kBandedPoisson);
  EXPECT_EQ(r.accounting(), "pld-banded-mf");
  EXPECT_EQ(r.adjacency, Adjacency::kZeroOut);
  EXPECT_EQ(r.bands, 3);
  EXPECT_EQ(r.cycles, 5u);
  EXPECT_EQ(r.horizon, 15u);
  EXPECT_DOUBLE_EQ(r.sampling_rate, 0.3);
  EXPECT_DOUBLE_EQ(r.column_norm, f.column_norm());
  EXPECT_DOUBLE_EQ(r.sigma, 1.5 * 2.0 * f.column_norm());
  EXPECT_DOUBLE_EQ(r.epsilon, privacy::dpsgd_pld_epsilon(0.3, 1.5, 5, 1e-5));
  EXPECT_DOUBLE_EQ(r.epsilon_rdp, privacy::dpsgd_poisson_epsilon(0.3, 1.5, 5, 1e-5));
  std::vector<Vec> released(bands * cycles);
  for (Vec& v : released) m->release(Vec::Zero(d), true, 2.0, v);
  Vec extra;
  EXPECT_THROW(m->release(Vec::Zero(d), true, 2.0, extra), Error);
  GaussianStream xi(key, StreamPurpose::kGaussianNoise);
  Vec want(d);
  for (Index t = 0; t < bands * cycles; ++t) {
    Vec c_rel = Vec::Zero(d);  // (C released)_t / sigma
    for (Index j = 0; j < bands && j <= t; ++j) c_rel += f.c[j] * released[t - j] / r.sigma;
    xi.fill(want, 1.0);
    for (Index k = 0; k < d; ++k) EXPECT_NEAR(c_rel[k], want[k], 1e-12) << t;
  }
  // Calibrated to the target when z is not given.
  auto calibrated =
      make_poisson_gaussian_mechanism(d, key, 1.0, 0.3, cycles, target, std::nullopt, Accountant::kPld, bands);
  EXPECT_LE(calibrated->account().epsilon, 2.0);
  EXPECT_NEAR(calibrated->account().epsilon, 2.0, 1e-3);
  // bands = 0 (dpsgd's): plain Poisson, noise z clip xi, no horizon.
  auto plain = make_poisson_gaussian_mechanism(d, key, 2.0, 0.3, cycles, target, 1.5);
  EXPECT_EQ(plain->account().mechanism, MechanismKind::kPoissonGaussian);
  EXPECT_EQ(plain->account().horizon, 0u);
  GaussianStream again(key, StreamPurpose::kGaussianNoise);
  for (int t = 0; t < 20; ++t) {
    Vec v;
    plain->release(Vec::Zero(d), true, 2.0, v);
    again.fill(want, 3.0);
    EXPECT_EQ(v, want);
  }
}

// Step t's sample lies in group t mod bands (positions [g m, (g + 1) m), m =
// floor(n / bands)), increasing, without repeats; at q = 1 it is the group;
// over 4000 steps the mean size is q m within 5 standard errors (a false
// failure about once in 1.7 million).
TEST(BandedPoisson, EachStepSamplesItsGroup) {
  const NoiseKey key = testing::test_noise_key();
  const Index n = 103, bands = 4, m = 25;
  auto whole = make_poisson_gaussian_mechanism(1, key, 1.0, 1.0, 3, {1.0, 1e-5}, 1.0, Accountant::kPld, bands);
  Vec out;
  for (Index t = 0; t < 12; ++t) {
    const IndexList got = whole->sample(n);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) EXPECT_EQ(got[i], (t % bands) * m + i);
    whole->release(Vec::Zero(1), true, 1.0, out);
  }
  const double q = 0.2;
  auto sampled = make_poisson_gaussian_mechanism(1, key, 1.0, q, 1000, {1.0, 1e-5}, 1.0, Accountant::kPld, bands);
  double total = 0;
  for (Index t = 0; t < 4000; ++t) {
    const IndexList got = sampled->sample(n);
    const Index g = t % bands;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_GE(got[i], g * m);
      EXPECT_LT(got[i], (g + 1) * m);
      if (i > 0) EXPECT_LT(got[i - 1], got[i]);
    }
    total += static_cast<double>(got.size());
    sampled->release(Vec::Zero(1), true, 1.0, out);
  }
  const double mean = total / 4000, want = q * m, se = std::sqrt(q * (1 - q) * m / 4000);
  EXPECT_NEAR(mean, want, 5 * se);
}

}  // namespace
}  // namespace dpsosp
