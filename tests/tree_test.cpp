// Tests of the streaming tree mechanism (include/dpsosp/tree.hpp).
//
// Statistical tests use fixed seeds (deterministic); each states the chance
// that a correct implementation would fail it for a seed picked at random.
#include "dpsosp/tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

constexpr std::uint64_t kSeed = 77031;

int popcount(std::uint64_t t) {
  int c = 0;
  for (; t != 0; t &= t - 1) ++c;
  return c;
}

int trailing_zeros(std::uint64_t t) {
  int k = 0;
  for (; (t & 1u) == 0; t >>= 1) ++k;
  return k;
}

// The right ends of the dyadic nodes covering [1, t], largest node first:
// t = 2^b1 + 2^b2 + ... (b1 > b2 > ...) gives 2^b1, 2^b1 + 2^b2, ..., t.
std::vector<std::uint64_t> node_ends(std::uint64_t t) {
  std::vector<std::uint64_t> ends;
  std::uint64_t end = 0;
  for (int b = 63; b >= 0; --b) {
    if ((t >> b) & 1u) {
      end += std::uint64_t{1} << b;
      ends.push_back(end);
    }
  }
  return ends;
}

TreeNoise make_tree(Index dim, double sigma, std::uint32_t index = 0, bool all_ones = false) {
  return TreeNoise(dim, sigma, GaussianStream(kSeed, StreamPurpose::kTest, index), all_ones);
}

TEST(TreeNoiseTest, AllOnesModeHasTheExactDyadicStructure) {
  const std::uint64_t horizon = 1000;
  const int depth_bound = 10;  // ceil(log2(1000 + 1))
  TreeNoise tree = make_tree(3, 1.0, 0, /*all_ones=*/true);
  Vec previous = Vec::Zero(3);
  for (std::uint64_t t = 1; t <= horizon; ++t) {
    const Vec& noise = tree.next();
    ASSERT_EQ(tree.step(), t);
    ASSERT_TRUE((noise.array() == static_cast<double>(popcount(t))).all()) << "t=" << t;
    ASSERT_EQ(tree.live_vectors(), static_cast<Index>(popcount(t))) << "t=" << t;
    ASSERT_LE(tree.live_vectors(), static_cast<Index>(depth_bound)) << "t=" << t;
    // From t-1 to t, trailing_zeros(t) nodes close and one opens.
    ASSERT_TRUE(((noise - previous).array() == 1.0 - trailing_zeros(t)).all()) << "t=" << t;
    previous = noise;
  }
}

// With real noise, TREE(t) must be the sum of the vectors drawn at the steps
// that end its dyadic nodes: the node opened at step e covers (e - 2^k, e]
// and gets the e-th fresh vector of the stream. Recompute that directly and
// compare bit for bit (the implementation adds the nodes largest first too).
TEST(TreeNoiseTest, MatchesTheDirectSumOfDyadicNodeNoise) {
  const Index dim = 5;
  const double sigma = 1.5;
  const std::uint64_t horizon = 300;
  GaussianStream reference(kSeed, StreamPurpose::kTest, 4);
  std::vector<Vec> step_noise(horizon + 1);
  for (std::uint64_t s = 1; s <= horizon; ++s) {
    step_noise[s].resize(dim);
    reference.fill(step_noise[s], sigma);
  }
  TreeNoise tree = make_tree(dim, sigma, 4);
  for (std::uint64_t t = 1; t <= horizon; ++t) {
    const std::vector<std::uint64_t> ends = node_ends(t);
    Vec expected = step_noise[ends[0]];
    for (std::size_t i = 1; i < ends.size(); ++i) expected = step_noise[ends[i]] + expected;
    const Vec& noise = tree.next();
    for (Index j = 0; j < dim; ++j) ASSERT_EQ(noise[j], expected[j]) << "t=" << t << " j=" << j;
  }
}

// Per-coordinate variance of TREE(t) is sigma^2 popcount(t). With d = 40000
// independent coordinates, the mean of squares has relative standard error
// sqrt(2/d) = 0.71%; tolerance 6 standard errors per t, false-failure
// probability < 6 * 2e-9.
TEST(TreeNoiseTest, VarianceIsSigmaSquaredTimesPopcount) {
  const Index dim = 40000;
  const double sigma = 0.7;
  TreeNoise tree = make_tree(dim, sigma, 5);
  const std::vector<std::uint64_t> checked = {1, 2, 3, 7, 8, 255};
  for (std::uint64_t t = 1; t <= 255; ++t) {
    const Vec& noise = tree.next();
    if (std::find(checked.begin(), checked.end(), t) == checked.end()) continue;
    const double expected = sigma * sigma * popcount(t);
    const double mean_square = noise.squaredNorm() / static_cast<double>(dim);
    EXPECT_NEAR(mean_square, expected, 6 * expected * std::sqrt(2.0 / dim)) << "t=" << t;
  }
}

// TREE(t) and TREE(t+1) share the nodes of t that stay open: popcount(t) -
// trailing_zeros(t+1) of them, so their per-coordinate covariance is sigma^2
// times that. The mean of x*y over d = 40000 coordinates has standard error
// sqrt((v_t v_{t+1} + c^2) / d); tolerance 6 standard errors per pair,
// false-failure probability < 5 * 2e-9.
TEST(TreeNoiseTest, ConsecutiveReleasesShareExactlyTheOpenNodes) {
  const Index dim = 40000;
  const double sigma = 1.0;
  TreeNoise tree = make_tree(dim, sigma, 6);
  Vec previous = tree.next();
  for (std::uint64_t t = 1; t < 16; ++t) {
    const Vec current = tree.next();  // TREE(t + 1)
    if (t == 4 || t == 5 || t == 6 || t == 7 || t == 11) {
      const double shared = popcount(t) - trailing_zeros(t + 1);
      const double var_t = popcount(t), var_next = popcount(t + 1);
      const double covariance = previous.dot(current) / static_cast<double>(dim);
      const double se = std::sqrt((var_t * var_next + shared * shared) / dim);
      EXPECT_NEAR(covariance, shared, 6 * se) << "t=" << t;
    }
    previous = current;
  }
}

TEST(TreeNoiseTest, RestartStartsAFreshTreeWithFreshNoise) {
  const Index dim = 4;
  GaussianStream reference(kSeed, StreamPurpose::kTest, 8);
  std::vector<Vec> step_noise(9);
  for (int s = 1; s <= 8; ++s) {
    step_noise[s].resize(dim);
    reference.fill(step_noise[s], 2.0);
  }
  TreeNoise tree = make_tree(dim, 2.0, 8);
  for (int t = 1; t <= 5; ++t) tree.next();
  tree.restart();
  EXPECT_EQ(tree.step(), 0u);
  EXPECT_EQ(tree.live_vectors(), 0u);
  // The new tree's leaves take the stream's 6th, 7th, 8th vectors.
  const Vec first = tree.next();
  EXPECT_EQ(first, step_noise[6]);
  EXPECT_NE(first, step_noise[1]);
  EXPECT_EQ(tree.next(), step_noise[7]);
  const Vec third = tree.next();
  EXPECT_EQ(third, step_noise[7] + step_noise[8]);
  EXPECT_EQ(tree.live_vectors(), 2u);

  TreeNoise ones = make_tree(2, 1.0, 0, /*all_ones=*/true);
  for (int t = 1; t <= 7; ++t) ones.next();
  ones.restart();
  EXPECT_EQ(ones.next(), Vec::Ones(2));
}

TEST(TreeNoiseTest, SameSeedGivesBitIdenticalNoiseOtherIndexDiffers) {
  TreeNoise a = make_tree(6, 0.3, 9), b = make_tree(6, 0.3, 9), c = make_tree(6, 0.3, 10);
  for (int t = 1; t <= 100; ++t) {
    const Vec& na = a.next();
    const Vec& nb = b.next();
    const Vec& nc = c.next();
    for (Eigen::Index j = 0; j < 6; ++j) {
      ASSERT_EQ(na[j], nb[j]) << "t=" << t;
      ASSERT_NE(na[j], nc[j]) << "t=" << t;
    }
  }
}

// draw_ahead changes when the numbers are computed, never which: a tree with
// a lookahead (any first count, refills larger or smaller than a node, one
// thread or two, a node split between the lookahead and the stream) gives
// bit-identical releases to one without, across restarts, for an odd
// dimension (so nodes start at odd positions of the stream).
TEST(TreeNoiseTest, DrawAheadGivesBitIdenticalReleases) {
  struct Ahead {
    std::size_t count, refill;
    int threads;
  };
  for (const Ahead& a : {Ahead{0, 0, 1}, Ahead{5, 0, 1}, Ahead{13, 0, 2}, Ahead{0, 3, 1}, Ahead{1, 3, 2},
                         Ahead{700, 11, 1}, Ahead{9000, 4100, 2}, Ahead{20000, 0, 2}}) {
    TreeNoise plain = make_tree(7, 0.6, 4), ahead = make_tree(7, 0.6, 4);
    ahead.draw_ahead(a.count, a.refill, a.threads);
    for (int t = 1; t <= 700; ++t) {
      if (t % 97 == 0) {
        plain.restart();
        ahead.restart();
      }
      const Vec& p = plain.next();
      const Vec& q = ahead.next();
      for (Eigen::Index j = 0; j < 7; ++j) {
        ASSERT_EQ(p[j], q[j]) << "t=" << t << " j=" << j << " count=" << a.count << " refill=" << a.refill;
      }
    }
  }
}

TEST(TreeNoiseTest, SigmaZeroGivesZeroNoise) {
  TreeNoise tree = make_tree(3, 0.0);
  for (int t = 1; t <= 20; ++t) EXPECT_TRUE(tree.next().isZero(0.0));
  EXPECT_EQ(tree.sigma(), 0.0);
}

TEST(TreeNoiseTest, RejectsInvalidArguments) {
  EXPECT_THROW(make_tree(0, 1.0), Error);
  EXPECT_THROW(make_tree(3, -0.1), Error);
  EXPECT_THROW(make_tree(3, std::nan("")), Error);
  EXPECT_THROW(make_tree(3, std::numeric_limits<double>::infinity()), Error);
  try {
    make_tree(3, -2.0);
    FAIL() << "expected dpsosp::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("TreeNoise: sigma"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dpsosp
