// Tests of the BLT factorizations of the prefix sums (include/dpsosp/factorization.hpp):
// against the exact square root's analytic coefficients, against dense
// brute-force matrices (A = B C, column and row norms), and the streaming
// filters against the dense products.
#include "dpsosp/factorization.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

// The exact square root of A: c_k = binom(2k, k) / 4^k = c_{k-1} (2k - 1) / (2k).
std::vector<double> exact_sqrt(Index count) {
  std::vector<double> c(count);
  c[0] = 1;
  for (Index k = 1; k < count; ++k) c[k] = c[k - 1] * (2.0 * k - 1.0) / (2.0 * k);
  return c;
}

double sum_of_squares(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return s;
}

Eigen::MatrixXd toeplitz(const std::vector<double>& coefficients) {
  const auto T = static_cast<Eigen::Index>(coefficients.size());
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(T, T);
  for (Eigen::Index i = 0; i < T; ++i)
    for (Eigen::Index j = 0; j <= i; ++j) m(i, j) = coefficients[static_cast<std::size_t>(i - j)];
  return m;
}

// The product that sets the noise of the worst release, (largest column norm
// of C)^2 * (largest row norm of B)^2, is within 0.5 % of the exact square
// root's at every horizon; each factor within 10 %.
TEST(Factorization, SquareRootBltMatchesTheExactSquareRoot) {
  for (Index T : {1, 2, 7, 8, 63, 64, 65, 255, 1000, 10000, 10001, 100000}) {
    const BltFactorization f = BltFactorization::square_root(T);
    const std::vector<double> exact = exact_sqrt(T);
    const double exact_col2 = sum_of_squares(exact);  // = the exact largest row norm^2 too (B = C)
    const double col = f.max_column_norm(T);
    const double row2 = f.release_variances(T).back();
    EXPECT_NEAR(col * col * row2 / (exact_col2 * exact_col2), 1.0, 0.005) << "T = " << T;
    EXPECT_NEAR(col * col / exact_col2, 1.0, 0.10) << "T = " << T;
    EXPECT_NEAR(row2 / exact_col2, 1.0, 0.10) << "T = " << T;
    // The early coefficients of C are the square root's to 2 %.
    const std::vector<double> c = f.c_coefficients(std::min<Index>(T, 8));
    for (std::size_t k = 0; k < c.size(); ++k) EXPECT_NEAR(c[k] / exact[k], 1.0, 0.02) << "T = " << T << ", k = " << k;
  }
}

// The analytic figure: sum_{k < n} c_k^2 = (ln n + gamma + 4 ln 2) / pi + o(1)
// (the exact coefficients, to 1e-3 from n = 100 on), and the BLT's column
// norm follows it.
TEST(Factorization, ColumnNormGrowsLikeTheLogOfTheHorizon) {
  constexpr double kGamma = 0.57721566490153286, kPi = 3.14159265358979323846;
  for (Index n : {100, 1000, 10000, 100000}) {
    const double analytic = (std::log(static_cast<double>(n)) + kGamma + 4 * std::log(2.0)) / kPi;
    EXPECT_NEAR(sum_of_squares(exact_sqrt(n)), analytic, 1e-3) << n;
    const double col = BltFactorization::square_root(n).max_column_norm(n);
    EXPECT_NEAR(col * col / analytic, 1.0, 0.10) << n;
  }
}

// Brute force on dense T x T matrices: C is the inverse of the Toeplitz matrix
// of C^{-1}'s coefficients, B = A C^{-1} reproduces A = B C, the largest
// column norm of C over all its columns is max_column_norm, and the squared
// row norms of B are release_variances.
TEST(Factorization, DenseBruteForceAgrees) {
  for (Index T : {1, 5, 40, 200}) {
    const BltFactorization f = BltFactorization::square_root(T);
    const Eigen::MatrixXd c_inv = toeplitz(f.inverse_coefficients(T));
    const Eigen::MatrixXd C = c_inv.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(T, T));
    const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(T, T).triangularView<Eigen::Lower>();
    const Eigen::MatrixXd B = A * c_inv;
    EXPECT_LT((B * C - A).cwiseAbs().maxCoeff(), 1e-10) << T;
    EXPECT_LT((toeplitz(f.c_coefficients(T)) - C).cwiseAbs().maxCoeff(), 1e-12) << T;
    EXPECT_LT((toeplitz(f.b_coefficients(T)) - B).cwiseAbs().maxCoeff(), 1e-12) << T;
    double largest = 0;
    for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(T); ++j) largest = std::max(largest, C.col(j).norm());
    EXPECT_NEAR(f.max_column_norm(T), largest, 1e-12 * largest) << T;
    EXPECT_NEAR(f.max_column_norm(T), C.col(0).norm(), 1e-12 * largest) << T;
    const std::vector<double> rows = f.release_variances(T);
    for (Eigen::Index t = 0; t < static_cast<Eigen::Index>(T); ++t)
      EXPECT_NEAR(rows[static_cast<std::size_t>(t)], B.row(t).squaredNorm(), 1e-10) << T << " " << t;
  }
}

// Passes over one order: a record is in the releases i, i + P, i + 2P, ... for
// one i < P. Brute force on the dense C: the largest ||C 1_pattern|| over
// those patterns is cyclic_participation_norm, and it is also the largest over
// every pattern whose participations are at least P apart (the min-separation
// sensitivity: the worst case is the earliest pattern for nonnegative,
// non-increasing coefficients, which C's are; arXiv 2405.13763, Thm 2), so no
// other order of the records in later passes could do worse.
TEST(Factorization, CyclicParticipationNormIsTheWorstPattern) {
  for (Index T : {1, 2, 7, 12, 40}) {
    const BltFactorization f = BltFactorization::square_root(T);
    const Eigen::MatrixXd c_inv = toeplitz(f.inverse_coefficients(T));
    const Eigen::MatrixXd C = c_inv.triangularView<Eigen::Lower>().solve(Eigen::MatrixXd::Identity(T, T));
    const std::vector<double> c = f.c_coefficients(T);
    for (std::size_t k = 0; k < c.size(); ++k) {
      EXPECT_GT(c[k], 0.0) << T << " " << k;
      if (k > 0) EXPECT_LE(c[k], c[k - 1]) << T << " " << k;
    }
    for (Index P = 1; P <= T + 1; ++P) {
      double cyclic = 0;
      for (Index i = 0; i < std::min(P, T); ++i) {
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(T);
        for (Index t = i; t < T; t += P) sum += C.col(static_cast<Eigen::Index>(t));
        cyclic = std::max(cyclic, sum.norm());
      }
      const double got = f.cyclic_participation_norm(T, P);
      EXPECT_NEAR(got, cyclic, 1e-12 * cyclic) << "T = " << T << ", P = " << P;
      if (P >= T) EXPECT_NEAR(got, f.max_column_norm(T), 1e-12 * got) << T;
      if (T > 12) continue;
      // Every subset of the T steps whose members are at least P apart.
      double minsep = 0;
      for (unsigned mask = 1; mask < (1u << T); ++mask) {
        Index last = 0;
        bool first = true, ok = true;
        Eigen::VectorXd sum = Eigen::VectorXd::Zero(T);
        for (Index t = 0; t < T && ok; ++t) {
          if (!(mask >> t & 1u)) continue;
          ok = first || t - last >= P;
          first = false;
          last = t;
          sum += C.col(static_cast<Eigen::Index>(t));
        }
        if (ok) minsep = std::max(minsep, sum.norm());
      }
      EXPECT_NEAR(got, minsep, 1e-12 * minsep) << "T = " << T << ", P = " << P;
    }
  }
  EXPECT_THROW(BltFactorization::square_root(10).cyclic_participation_norm(10, 0), Error);
  EXPECT_THROW(BltFactorization::square_root(10).cyclic_participation_norm(0, 3), Error);
}

// The streaming filters compute B z and C u of a stream of vectors, step by step.
TEST(Factorization, FiltersComputeTheDenseProducts) {
  const Index T = 60, d = 3;
  const BltFactorization f = BltFactorization::square_root(T);
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd z(T, d), u(T, d);
  for (Index t = 0; t < T; ++t)
    for (Index j = 0; j < d; ++j) {
      z(t, j) = normal(gen);
      u(t, j) = normal(gen);
    }
  const Eigen::MatrixXd Bz = toeplitz(f.b_coefficients(T)) * z, Cu = toeplitz(f.c_coefficients(T)) * u;
  BltNoiseFilter noise(f, d);
  BltInverseFilter inverse(f, d);
  for (int pass = 0; pass < 2; ++pass) {  // reset() starts over
    for (Index t = 0; t < T; ++t) {
      const Vec zt = z.row(t).transpose(), ut = u.row(t).transpose();
      EXPECT_LT((noise.next(zt) - Bz.row(t).transpose()).cwiseAbs().maxCoeff(), 1e-11) << t;
      EXPECT_LT((inverse.next(ut) - Cu.row(t).transpose()).cwiseAbs().maxCoeff(), 1e-11) << t;
    }
    noise.reset();
    inverse.reset();
  }
}

// Against the binary tree of the same length (depth D, every node sigma_tree
// = s sqrt(D) / mu): the mean noise variance of a release is 2.15 / 3.7 / 4.5
// times the square root's at L = 7 / 63 / 255, the worst release's 3.2 / 6.3 / 8.0.
TEST(Factorization, SquareRootBeatsTheTree) {
  struct Case {
    Index L;
    double mean_ratio, max_ratio;
  };
  for (const Case& c : {Case{7, 2.152, 3.210}, Case{63, 3.695, 6.335}, Case{255, 4.515, 7.992}}) {
    int depth = 0;
    while ((Index{1} << depth) - 1 < c.L) ++depth;
    double tree_mean = 0, tree_max = 0;
    for (Index t = 1; t <= c.L; ++t) {
      const double v = depth * static_cast<double>(__builtin_popcountll(t));
      tree_mean += v / static_cast<double>(c.L);
      tree_max = std::max(tree_max, v);
    }
    const BltFactorization f = BltFactorization::square_root(c.L);
    const double col2 = std::pow(f.max_column_norm(c.L), 2);
    const std::vector<double> rows = f.release_variances(c.L);
    double mf_mean = 0;
    for (double r : rows) mf_mean += col2 * r / static_cast<double>(c.L);
    EXPECT_NEAR(tree_mean / mf_mean, c.mean_ratio, 0.01 * c.mean_ratio) << c.L;
    EXPECT_NEAR(tree_max / (col2 * rows.back()), c.max_ratio, 0.01 * c.max_ratio) << c.L;
  }
}

TEST(Factorization, BadArgumentsAreRefused) {
  EXPECT_THROW(BltFactorization::square_root(0), Error);
  BltFactorization f;
  EXPECT_THROW(f.Validate(), Error);
  f.theta = {0.5, 1.0};
  f.weight = {-0.1, -0.1};
  EXPECT_THROW(f.Validate(), Error);
  f.theta = {0.5};
  EXPECT_THROW(f.Validate(), Error);
  EXPECT_THROW(BltFactorization::square_root(10).max_column_norm(0), Error);
  EXPECT_THROW(BltFactorization::square_root(10).c_coefficients(0), Error);
}

// The banded square root: the square root's first coefficients
// binom(2k, k) / 4^k = Gamma(k + 1/2) / (sqrt(pi) k!), cut at the band; its
// inverse's coefficients, the streaming filter, the column norm and the mean
// prefix variance against dense matrices; and the property the amplification
// argument needs: columns a band apart (the steps of one record's group)
// touch disjoint rows.
TEST(Factorization, BandedSquareRootAgreesWithDenseMatrices) {
  const BandedFactorization wide = BandedFactorization::square_root(40);
  for (Index k = 0; k < 40; ++k) {
    const double exact = std::exp(std::lgamma(k + 0.5) - std::lgamma(k + 1.0)) / std::sqrt(3.14159265358979323846);
    EXPECT_NEAR(wide.c[k], exact, 1e-13 * exact) << k;
  }
  const Index T = 30;
  for (Index bands : {1, 2, 3, 7}) {
    SCOPED_TRACE(bands);
    const BandedFactorization f = BandedFactorization::square_root(bands);
    Eigen::MatrixXd C = Eigen::MatrixXd::Zero(T, T);
    for (Index i = 0; i < T; ++i)
      for (Index j = i; j < T && j < i + bands; ++j) C(j, i) = f.c[j - i];
    const Eigen::MatrixXd inverse = C.inverse();
    const std::vector<double> w = f.inverse_coefficients(T);
    for (Index t = 0; t < T; ++t) EXPECT_NEAR(w[t], inverse(t, 0), 1e-12) << t;
    EXPECT_NEAR(f.column_norm(), C.colwise().norm().maxCoeff(), 1e-14);
    const Eigen::MatrixXd A = Eigen::MatrixXd::Ones(T, T).triangularView<Eigen::Lower>();
    const Eigen::MatrixXd B = A * inverse;
    EXPECT_NEAR(f.mean_prefix_variance(T), B.rowwise().squaredNorm().mean(), 1e-9 * B.rowwise().squaredNorm().mean());
    // The filter: C^{-1} applied to a stream, step by step.
    std::mt19937_64 rng(3);
    std::normal_distribution<double> normal;
    Eigen::MatrixXd Z(T, 3);
    for (Index t = 0; t < T; ++t)
      for (int j = 0; j < 3; ++j) Z(t, j) = normal(rng);
    const Eigen::MatrixXd want = inverse * Z;
    BandedInverseFilter filter(f, 3);
    for (Index t = 0; t < T; ++t) {
      const Vec got = filter.next(Z.row(t).transpose());
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(got[j], want(t, j), 1e-10) << t << " " << j;
    }
    for (Index i = 0; i + bands < T; ++i)
      for (Index k = i + bands; k < T; k += bands) EXPECT_EQ(C.col(i).dot(C.col(k)), 0.0) << i << " " << k;
  }
  EXPECT_THROW(BandedFactorization::square_root(0), Error);
  EXPECT_THROW(BandedFactorization::square_root(3).mean_prefix_variance(0), Error);
}

}  // namespace
}  // namespace dpsosp
