// The exact samplers (discrete_gaussian.hpp) against their exact laws: each
// statistical check has a false-failure probability below 1e-6 at its fixed
// key (chi-square at the Wilson-Hilferty 1 - 1e-6 quantile, z-tests at 4.9
// standard errors), so a failure is a defect, not bad luck. And the
// accounting's premise: the discrete Gaussian with an integer shift has the
// continuous Gaussian's Renyi divergence bound.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

constexpr double kZ = 4.9;  // two-sided 1e-6

// The 1 - 1e-6 quantile of chi-square with k degrees of freedom (Wilson-Hilferty).
double chi2_critical(int k) {
  const double z = 4.753;  // one-sided 1e-6
  const double a = 2.0 / (9.0 * k);
  return k * std::pow(1 - a + z * std::sqrt(a), 3);
}

GaussianStream test_stream(std::uint32_t index) {
  return GaussianStream(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, index);
}

void expect_frequency(int hits, int trials, double p, const std::string& what) {
  const double se = std::sqrt(p * (1 - p) / trials);
  EXPECT_LE(std::abs(hits / static_cast<double>(trials) - p), kZ * se + 1e-12) << what << ": " << hits << "/" << trials;
}

TEST(ExactSamplers, BernoulliOfARatioAndOfAnExponential) {
  GaussianStream stream = test_stream(1);
  RandomWords w(stream);
  const int n = 200000;
  int hits = 0;
  for (int i = 0; i < n; ++i) hits += exact::bernoulli(w, 3, 7);
  expect_frequency(hits, n, 3.0 / 7.0, "bernoulli(3/7)");
  // exp(-gamma) for gamma below 1, at 1, above 1 (several e^-1 factors), and a 128-bit ratio.
  const std::pair<UInt128, UInt128> gammas[] = {{1, 2}, {1, 1}, {5, 2},
                                                {7, 3}, {0, 5}, {(UInt128{1} << 100) + 3, UInt128{1} << 100}};
  for (const auto& [num, den] : gammas) {
    hits = 0;
    for (int i = 0; i < n; ++i) hits += exact::bernoulli_exp(w, num, den);
    const double gamma = static_cast<double>(num) / static_cast<double>(den);
    expect_frequency(hits, n, std::exp(-gamma), "bernoulli_exp(" + std::to_string(gamma) + ")");
  }
  EXPECT_THROW(exact::bernoulli(w, 3, 2), Error);
  EXPECT_THROW(exact::bernoulli_exp(w, 1, 0), Error);
}

// Chi-square of draws against pmf(y) over |y| <= cut, the rest pooled.
template <class Draw>
void expect_law(Draw draw, const std::function<double(std::int64_t)>& pmf, std::int64_t cut, int n,
                const std::string& what) {
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < n; ++i) {
    const std::int64_t y = draw();
    ++counts[std::abs(y) > cut ? (y > 0 ? cut + 1 : -cut - 1) : y];
  }
  double chi2 = 0, tail = 1;
  for (std::int64_t y = -cut; y <= cut; ++y) {
    const double e = n * pmf(y);
    tail -= pmf(y);
    chi2 += (counts[y] - e) * (counts[y] - e) / e;
  }
  const double e_tail = n * tail / 2;
  for (std::int64_t y : {cut + 1, -cut - 1}) chi2 += (counts[y] - e_tail) * (counts[y] - e_tail) / e_tail;
  EXPECT_LT(chi2, chi2_critical(static_cast<int>(2 * cut + 2))) << what;
}

TEST(ExactSamplers, DiscreteLaplaceHasItsPmf) {
  GaussianStream stream = test_stream(2);
  RandomWords w(stream);
  for (const std::uint64_t t : {1u, 3u}) {
    const double r = std::exp(-1.0 / t);
    const auto pmf = [r](std::int64_t y) { return (1 - r) / (1 + r) * std::pow(r, std::abs(static_cast<double>(y))); };
    expect_law([&] { return exact::discrete_laplace(w, t); }, pmf, static_cast<std::int64_t>(4 * t), 200000,
               "discrete Laplace t = " + std::to_string(t));
  }
}

double discrete_gaussian_pmf(std::int64_t y, double s) {
  double norm = 0;
  const auto cut = static_cast<std::int64_t>(40 * s + 40);
  for (std::int64_t k = -cut; k <= cut; ++k) norm += std::exp(-static_cast<double>(k * k) / (2 * s * s));
  return std::exp(-static_cast<double>(y * y) / (2 * s * s)) / norm;
}

TEST(ExactSamplers, DiscreteGaussianHasItsPmf) {
  GaussianStream stream = test_stream(3);
  RandomWords w(stream);
  for (const std::uint64_t s : {1u, 2u, 7u}) {
    expect_law([&] { return exact::discrete_gaussian(w, s); },
               [s](std::int64_t y) { return discrete_gaussian_pmf(y, static_cast<double>(s)); },
               static_cast<std::int64_t>(3 * s), 300000, "discrete Gaussian s = " + std::to_string(s));
  }
}

// A large scale (the runs' sizes): mean 0, variance s^2 (the discrete
// Gaussian's variance differs from s^2 by far less than the test sees at
// s >= 1), the mass beyond 3s as the normal's, nothing beyond 7s.
TEST(ExactSamplers, DiscreteGaussianMomentsAndTailsAtALargeScale) {
  const std::uint64_t s = 1000003;
  const std::size_t n = 400000;
  std::vector<double> y(n);
  fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, 7, s, y.data(), n, 2);
  double sum = 0, sq = 0, fourth = 0;
  int beyond3 = 0;
  double largest = 0;
  for (double v : y) {
    EXPECT_EQ(v, std::round(v));
    const double u = v / static_cast<double>(s);
    sum += u;
    sq += u * u;
    fourth += u * u * u * u;
    beyond3 += std::abs(u) > 3;
    largest = std::max(largest, std::abs(u));
  }
  const double mean = sum / n, var = sq / n;
  EXPECT_LE(std::abs(mean), kZ / std::sqrt(n));
  EXPECT_LE(std::abs(var - 1), kZ * std::sqrt(2.0 / n));  // var of u^2 is 2 for a normal
  expect_frequency(beyond3, static_cast<int>(n), std::erfc(3 / std::sqrt(2.0)), "mass beyond 3 s");
  EXPECT_LT(largest, 7.0);                                 // P(|Z| > 7 s) < 3e-12 a draw
  EXPECT_NEAR(fourth / n, 3.0, kZ * std::sqrt(96.0 / n));  // E u^4 = 3, var u^4 = 96
}

// The same numbers for any thread count; other releases, other numbers.
TEST(ExactSamplers, FillIsThreadCountFreeAndReleasesDiffer) {
  const std::size_t n = 5000;  // five blocks
  std::vector<double> a(n), b(n), c(n);
  fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, 4, 50, a.data(), n, 1);
  fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, 4, 50, b.data(), n, 4);
  fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, 5, 50, c.data(), n, 2);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_THROW(fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kTest, 4, 50, a.data(), n, 1), Error);
  GaussianStream stream = test_stream(9);
  RandomWords w(stream);
  EXPECT_THROW(exact::discrete_gaussian(w, 0), Error);
  EXPECT_THROW(exact::discrete_gaussian(w, exact::kMaxDiscreteSigma + 1), Error);
}

// The accounting's premise (docs/privacy-accounting.md, "Secure mode"): for
// integer shifts k, D_alpha(N_Z(k, s^2) || N_Z(0, s^2)) <= alpha k^2 / (2 s^2),
// the continuous Gaussian's value, computed here by summing the pmfs.
TEST(ExactSamplers, DiscreteGaussianRenyiDivergenceIsAtMostTheContinuousOne) {
  for (const double s : {0.5, 1.0, 2.5}) {
    for (const int k : {1, 2, 5}) {
      for (const double alpha : {1.5, 2.0, 8.0, 32.0}) {
        // alpha log p(y - k) + (1 - alpha) log p(y) = -((y - alpha k)^2 + alpha (1 - alpha) k^2) / (2 s^2) - log Z
        double theta_shifted = 0, theta = 0;
        for (int y = -2000; y <= 2000; ++y) {
          theta_shifted += std::exp(-(y - alpha * k) * (y - alpha * k) / (2 * s * s));
          theta += std::exp(-static_cast<double>(y) * y / (2 * s * s));
        }
        const double log_total = std::log(theta_shifted / theta) - alpha * (1 - alpha) * k * k / (2 * s * s);
        const double divergence = log_total / (alpha - 1);
        EXPECT_LE(divergence, alpha * k * k / (2 * s * s) * (1 + 1e-9)) << s << " " << k << " " << alpha;
        EXPECT_GE(divergence, 0.5 * alpha * k * k / (2 * s * s)) << "not far below it either";
      }
    }
  }
}

}  // namespace
}  // namespace dpsosp
