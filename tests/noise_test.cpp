// Tests of the counter-based streams (include/dpsosp/noise.hpp): the public
// ones keyed by a seed (Philox) and the secret ones keyed by a NoiseKey (AES).
//
// Statistical tests use fixed seeds and keys, so they are deterministic; the
// stated false-failure probability is the chance that a *correct* generator
// fails the check for a seed picked at random, i.e. how unlucky the fixed seed
// would have to be. No test retries. The stream contract and the statistics
// are checked for both kinds (GaussianStreamKinds).
#include "dpsosp/noise.hpp"

#include "dpsosp/error.hpp"
#include "random/philox_blocks.hpp"
#include "test_keys.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dpsosp {
namespace {

constexpr std::uint64_t kSeed = 20241009;

std::vector<double> draw(GaussianStream& stream, std::size_t n) {
  std::vector<double> out(n);
  for (double& x : out) x = stream.next();
  return out;
}

// Each test below runs on a public (seed) stream and a secret (key) stream.
class GaussianStreamKinds : public ::testing::TestWithParam<bool> {
 protected:
  GaussianStream make(std::uint32_t index = 0) const {
    return GetParam() ? GaussianStream(testing::test_noise_key(), StreamPurpose::kTest, index)
                      : GaussianStream(kSeed, StreamPurpose::kTest, index);
  }
};
INSTANTIATE_TEST_SUITE_P(Noise, GaussianStreamKinds, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Secret" : "Public"; });

TEST_P(GaussianStreamKinds, SameSeedPurposeIndexGivesSameNumbers) {
  GaussianStream a = make(3);
  GaussianStream b = make(3);
  const std::vector<double> xa = draw(a, 1001);
  const std::vector<double> xb = draw(b, 1001);
  for (std::size_t i = 0; i < xa.size(); ++i) ASSERT_EQ(xa[i], xb[i]) << "i=" << i;
  EXPECT_EQ(a.position(), 1001u);
}

TEST(GaussianStreamTest, DifferentSeedPurposeOrIndexGiveDifferentStreams) {
  GaussianStream base(kSeed, StreamPurpose::kPerturbation, 0);
  GaussianStream other_seed(kSeed + 1, StreamPurpose::kPerturbation, 0);
  GaussianStream other_high_seed(kSeed | (std::uint64_t{1} << 40), StreamPurpose::kPerturbation, 0);
  GaussianStream other_purpose(kSeed, StreamPurpose::kSampleOrder, 0);
  GaussianStream other_index(kSeed, StreamPurpose::kPerturbation, 1);
  const std::vector<double> x = draw(base, 64);
  for (GaussianStream* s : {&other_seed, &other_high_seed, &other_purpose, &other_index}) {
    const std::vector<double> y = draw(*s, 64);
    int equal = 0;
    for (std::size_t i = 0; i < x.size(); ++i) equal += (x[i] == y[i]);
    EXPECT_EQ(equal, 0);
  }
}

TEST_P(GaussianStreamKinds, FillInOneCallEqualsFillInPiecesAndRepeatedNext) {
  const Eigen::Index n = 1001;  // odd, so pieces start at odd positions
  GaussianStream whole_stream = make(7);
  Vec whole(n);
  whole_stream.fill(whole, 2.5);

  GaussianStream piece_stream = make(7);
  Vec pieces(n);
  Eigen::Index start = 0;
  for (Eigen::Index len : {1, 2, 3, 0, 5, 8, 13, 21, 34, 55, 89, 144}) {
    piece_stream.fill(pieces.segment(start, len), 2.5);
    start += len;
  }
  piece_stream.fill(pieces.tail(n - start), 2.5);

  GaussianStream next_stream = make(7);
  for (Eigen::Index i = 0; i < n; ++i) {
    ASSERT_EQ(whole[i], pieces[i]) << "i=" << i;
    ASSERT_EQ(whole[i], 2.5 * next_stream.next()) << "i=" << i;
  }
  EXPECT_EQ(whole_stream.position(), static_cast<std::uint64_t>(n));
  EXPECT_EQ(piece_stream.position(), static_cast<std::uint64_t>(n));
}

// normals_at gives the numbers fill would, from even and odd positions, for
// counts inside one batch of blocks and across several, and moves nothing;
// skip moves the stream as drawing would.
TEST_P(GaussianStreamKinds, NormalsAtEqualFillAndSkipMovesTheStream) {
  GaussianStream reference = make(4);
  Vec all(300);
  reference.fill(all, 1.0);
  const GaussianStream fixed = make(4);
  for (std::uint64_t first : {0u, 1u, 2u, 7u, 32u, 33u}) {
    for (std::size_t count : {0u, 1u, 2u, 3u, 31u, 32u, 33u, 34u, 100u, 257u}) {
      std::vector<double> out(count + 1, -7.0);
      fixed.normals_at(first, out.data(), count);
      for (std::size_t j = 0; j < count; ++j) {
        ASSERT_EQ(out[j], all[static_cast<Eigen::Index>(first + j)]) << "first=" << first << " j=" << j;
      }
      ASSERT_EQ(out[count], -7.0) << "wrote past count";
    }
  }
  EXPECT_EQ(fixed.position(), 0u);

  GaussianStream skipping = make(4);
  Vec head(3), tail(10);
  skipping.fill(head, 1.0);
  skipping.skip(40);  // odd position 43 next
  skipping.fill(tail, 1.0);
  EXPECT_EQ(skipping.position(), 53u);
  for (Eigen::Index j = 0; j < 10; ++j) ASSERT_EQ(tail[j], all[43 + j]) << "j=" << j;
}

TEST_P(GaussianStreamKinds, SigmaZeroGivesZerosAndStillConsumes) {
  GaussianStream stream = make();
  Vec v = Vec::Constant(5, 7.0);
  stream.fill(v, 0.0);
  EXPECT_TRUE((v.array() == 0.0).all());
  EXPECT_EQ(stream.position(), 5u);
}

TEST_P(GaussianStreamKinds, UniformIsInUnitIntervalAndUniformIndexInRange) {
  GaussianStream stream = make();
  for (int i = 0; i < 100000; ++i) {
    const double u = stream.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LE(u, 1.0);
  }
  for (std::uint64_t n : {1ull, 2ull, 3ull, 1000ull, (1ull << 63) + 5}) {
    for (int i = 0; i < 1000; ++i) ASSERT_LT(stream.uniform_index(n), n);
  }
}

// next_u64s gives the words next_u64 would, from an even or an odd position,
// for counts inside one batch of blocks and across several, and leaves the
// stream where those calls would.
TEST_P(GaussianStreamKinds, BatchedWordsEqualOneAtATime) {
  for (int skip : {0, 1}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{31}, std::size_t{32},
                              std::size_t{33}, std::size_t{1001}}) {
      GaussianStream batched = make(3), single = make(3);
      for (int k = 0; k < skip; ++k) {
        batched.next_u64();
        single.next_u64();
      }
      std::vector<std::uint64_t> got(count);
      batched.next_u64s(got.data(), count);
      for (std::size_t j = 0; j < count; ++j) ASSERT_EQ(got[j], single.next_u64()) << "word " << j;
      EXPECT_EQ(batched.position(), single.position());
      EXPECT_EQ(batched.next_u64(), single.next_u64());
      EXPECT_EQ(batched.next(), single.next());
    }
  }
}

// philox_blocks (four blocks to a register where the processor has AVX2)
// gives the words of the one-block-at-a-time reference, for counts around
// its groups of eight and for block numbers whose low 32-bit word wraps.
TEST(GaussianStreamTest, BlocksAtOnceEqualOneBlockAtATime) {
  for (std::uint64_t first :
       {std::uint64_t{0}, std::uint64_t{5}, (std::uint64_t{1} << 32) - 3, ~std::uint64_t{0} - 20}) {
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                              std::size_t{17}, std::size_t{100}}) {
      for (std::uint64_t seed : {std::uint64_t{0}, kSeed, ~std::uint64_t{0}}) {
        std::vector<std::uint64_t> got(2 * count + 1, 7), expect(2 * count + 1, 7);
        detail::philox_blocks(seed, 3, 0xfffffffeu, first, count, got.data());
        detail::philox_blocks_scalar(seed, 3, 0xfffffffeu, first, count, expect.data());
        ASSERT_EQ(got, expect) << "first " << first << " count " << count << " seed " << seed;
      }
    }
  }
  // And the reference is GaussianStream's own numbers.
  GaussianStream stream(kSeed, StreamPurpose::kTest, 5);
  std::vector<std::uint64_t> words(40);
  detail::philox_blocks_scalar(kSeed, static_cast<std::uint32_t>(StreamPurpose::kTest), 5, 0, 20, words.data());
  for (std::uint64_t w : words) EXPECT_EQ(w, stream.next_u64());
}

// index_from_word is uniform_index's rule: words below 2^64 - n map to u mod n;
// of the top n words, those past the largest multiple of n are rejected.
TEST(GaussianStreamTest, IndexFromWordAcceptsBelowTheLargestMultiple) {
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  std::uint64_t index = 0;
  EXPECT_TRUE(GaussianStream::index_from_word(12345, 1000, &index));
  EXPECT_EQ(index, 345u);
  // n = 3: 2^64 = 3 * 6148914691236517205 + 1, so only the word 2^64 - 1 is rejected.
  EXPECT_FALSE(GaussianStream::index_from_word(kMax, 3, &index));
  EXPECT_TRUE(GaussianStream::index_from_word(kMax - 1, 3, &index));
  EXPECT_EQ(index, (kMax - 1) % 3);
  // n = 2^63 + 5: 2^64 mod n = 2^63 - 5; accepted words are u <= n - 1.
  const std::uint64_t n = (std::uint64_t{1} << 63) + 5;
  EXPECT_TRUE(GaussianStream::index_from_word(n - 1, n, &index));
  EXPECT_EQ(index, n - 1);
  EXPECT_FALSE(GaussianStream::index_from_word(n, n, &index));
  EXPECT_FALSE(GaussianStream::index_from_word(kMax, n, &index));
  EXPECT_TRUE(GaussianStream::index_from_word(5, 1, &index));
  EXPECT_EQ(index, 0u);
}

// Mean and variance of 10^6 standard normals. The sample mean has standard
// error 1e-3; the sample variance 1e-3 * sqrt(2) (4th moment 3). Tolerance 5
// standard errors each: false-failure probability < 2 * 5.7e-7.
TEST_P(GaussianStreamKinds, MeanAndVarianceOfAMillionNormals) {
  const std::size_t n = 1000000;
  GaussianStream stream = make(11);
  Vec x(static_cast<Eigen::Index>(n));
  stream.fill(x);
  const double mean = x.mean();
  const double var = (x.array() - mean).square().sum() / static_cast<double>(n - 1);
  EXPECT_NEAR(mean, 0.0, 5 * std::sqrt(1.0 / n));
  EXPECT_NEAR(var, 1.0, 5 * std::sqrt(2.0 / n));
}

// Kolmogorov-Smirnov test against the normal CDF with n = 10^6. Under the
// null, sqrt(n) * D_n tends to the Kolmogorov distribution, whose upper tail
// at 1.95 is 2 * sum_k (-1)^(k-1) exp(-2 k^2 1.95^2) = 0.00100. So the
// false-failure probability is 1e-3 (its finite-n value is slightly less).
TEST_P(GaussianStreamKinds, KolmogorovSmirnovAgainstNormalCdf) {
  const std::size_t n = 1000000;
  GaussianStream stream = make(12);
  std::vector<double> x = draw(stream, n);
  std::sort(x.begin(), x.end());
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-x[i] / std::sqrt(2.0));
    d = std::max(d, std::max(cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf));
  }
  EXPECT_LT(std::sqrt(static_cast<double>(n)) * d, 1.95);
}

// The KS test is weak in the tails, where the privacy guarantee lives; check
// the frequency of |x| > 3 (p = 0.0026998) with n = 10^6 draws: standard
// error sqrt(p(1-p)/n) = 5.2e-5, tolerance 5 standard errors, false-failure
// probability < 6e-7 (normal approximation of a binomial with mean 2700).
TEST_P(GaussianStreamKinds, TailFrequencyBeyondThreeSigma) {
  const std::size_t n = 1000000;
  GaussianStream stream = make(13);
  Vec x(static_cast<Eigen::Index>(n));
  stream.fill(x);
  const double p = std::erfc(3 / std::sqrt(2.0));
  const double freq = static_cast<double>((x.array().abs() > 3).count()) / n;
  EXPECT_NEAR(freq, p, 5 * std::sqrt(p * (1 - p) / n));
}

// Adjacent numbers come in Box-Muller pairs; they must be uncorrelated. The
// lag-1 sample correlation of 10^6 normals has standard error 1e-3; tolerance
// 5 standard errors, false-failure probability < 6e-7.
TEST_P(GaussianStreamKinds, AdjacentNumbersAreUncorrelated) {
  const std::size_t n = 1000000;
  GaussianStream stream = make(14);
  Vec x(static_cast<Eigen::Index>(n));
  stream.fill(x);
  const double lag1 = x.head(n - 1).dot(x.tail(n - 1)) / static_cast<double>(n - 1);
  EXPECT_NEAR(lag1, 0.0, 5 * std::sqrt(1.0 / n));
}

// uniform_index(n) for n = 3, 5, 7 (not powers of two, so a biased modulo
// would show) with 10^5 draws each. Pearson's chi-square with n-1 degrees of
// freedom; the bounds are the upper 1e-6 quantiles (df=2: 27.63, df=4: 33.38,
// df=6: 38.26), so the false-failure probability is < 3e-6 in all.
TEST_P(GaussianStreamKinds, UniformIndexIsUnbiasedChiSquare) {
  const struct {
    std::uint64_t n;
    double bound;
  } cases[] = {{3, 27.63}, {5, 33.38}, {7, 38.26}};
  for (const auto& c : cases) {
    GaussianStream stream = make(static_cast<std::uint32_t>(100 + c.n));
    const int draws = 100000;
    std::vector<int> counts(c.n, 0);
    for (int i = 0; i < draws; ++i) ++counts[stream.uniform_index(c.n)];
    const double expected = static_cast<double>(draws) / c.n;
    double chi2 = 0;
    for (int k : counts) chi2 += (k - expected) * (k - expected) / expected;
    EXPECT_LT(chi2, c.bound) << "n=" << c.n;
  }
}

TEST_P(GaussianStreamKinds, UniformIndexOfOneIsZero) {
  GaussianStream stream = make();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(stream.uniform_index(1), 0u);
}

TEST(GaussianStreamTest, SecureRandomSeedsDiffer) {
  // Two 64-bit draws from /dev/urandom coincide with probability 2^-64.
  EXPECT_NE(secure_random_seed(), secure_random_seed());
}

}  // namespace
}  // namespace dpsosp
