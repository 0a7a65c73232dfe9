// The AVX2 inner loops (src/engine/wide_kernels.hpp) give the bits of the Eigen
// expressions they replace in this (SSE2) build: reductions in Eigen's SSE2
// summation order, elementwise operations entry for entry. The engine's
// checksums (perf_determinism_test.cpp) run through them wherever
// wide::enabled(); this file checks the functions themselves, over lengths,
// offsets and row counts the one-time check in wide_check.cpp does not try.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dpsosp/types.hpp"
#include "engine/eigen_order.hpp"
#include "engine/wide_kernels.hpp"

namespace dpsosp::detail {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(WideKernels, EnabledWhereverTheProcessorHasAvx2) {
  // On an SSE2 build with an AVX2 processor, a disabled wide path means its
  // one-time check found a difference: a bug, not a fallback to accept.
  if (eigen_order::kPacket != 2 || !wide::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 or not an SSE2 build";
  EXPECT_TRUE(wide::enabled());
}

TEST(WideKernels, ReductionsAndElementwiseOperationsGiveEigensBits) {
  if (!wide::enabled()) GTEST_SKIP() << "wide kernels not enabled here";
  std::uint64_t state = 12345;
  auto random = [&] {  // mixed signs and magnitudes: a change of summation order shows
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    return (u - 0.5) * std::ldexp(1.0, static_cast<int>(state >> 58) - 32);
  };
  int compared = 0;
  for (Index n = 1; n <= 300; n += (n < 40 ? 1 : 7)) {
    const auto len = static_cast<Eigen::Index>(n);
    std::vector<double> pool(static_cast<std::size_t>(9 * (n + 3)));
    for (double& v : pool) v = random();
    pool[3] = -0.0;  // signed zeros and a subnormal along the way
    pool[5] = 4.9e-324;
    for (int offset = 0; offset < 4; ++offset) {
      const double* w = pool.data() + offset;
      const double* rows[8];
      const double* ws[8];
      for (int r = 0; r < 8; ++r) {
        rows[r] = pool.data() + (r + 1) * (n + 3) + (offset + r) % 4;
        ws[r] = w;
      }
      for (Index count = 1; count <= 8; ++count) {
        double dots[8], norms[8];
        wide::dots(rows, ws, count, n, dots);
        wide::squared_norms(rows, count, n, norms);
        for (Index r = 0; r < count; ++r) {
          const Eigen::Map<const Vec> a(rows[r], len), x(w, len);
          ASSERT_TRUE(same_bits(dots[r], a.dot(x))) << "n " << n << " offset " << offset << " row " << r;
          ASSERT_TRUE(same_bits(norms[r], a.squaredNorm())) << "n " << n << " offset " << offset << " row " << r;
          ++compared;
        }
      }
      const Eigen::Map<const Vec> a(rows[0], len), x(w, len);
      const double s1 = random(), s0 = random();
      Vec want(len), got(len);
      // The rows s1 a and s1 a - s0 a themselves, added to zeros.
      want.noalias() = s1 * a;
      want = Vec::Zero(len) + want;
      got.setZero();
      wide::add_scaled_record(got.data(), a.data(), s1, s0, false, wide::kRowAsIs, 1.0, n);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(double) * n), 0) << "s1 a, n " << n;
      want.noalias() = s1 * a - s0 * a;
      want = Vec::Zero(len) + want;
      got.setZero();
      wide::add_scaled_record(got.data(), a.data(), s1, s0, true, wide::kRowAsIs, 1.0, n);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(double) * n), 0) << "s1 a - s0 a, n " << n;
      want = a;
      want *= s0;
      got = a;
      wide::scale_in_place(got.data(), s0, n);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(double) * n), 0) << "scale_in_place, n " << n;
      want = a;
      want += x;
      got = a;
      wide::add(got.data(), x.data(), n);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), sizeof(double) * n), 0) << "add, n " << n;
    }
  }
  EXPECT_GT(compared, 10000);
}

// Rows that are multiples of a record (a margin model's): the squared norm and
// the add of s1 a (- s0 a), as is, clipped (times f) or zeroed, against the
// Eigen forms of the reference: out = s1 * a (- s0 * a); out *= f; sum += out.
TEST(WideKernels, ScaledRecordRowsGiveTheVectorFormsBits) {
  if (!wide::enabled()) GTEST_SKIP() << "wide kernels not enabled here";
  std::uint64_t state = 777;
  auto random = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    return (u - 0.5) * std::ldexp(1.0, static_cast<int>(state >> 58) - 32);
  };
  for (Index n = 1; n <= 260; n += (n < 40 ? 1 : 11)) {
    const auto len = static_cast<Eigen::Index>(n);
    std::vector<double> pool(static_cast<std::size_t>(8 * (n + 3)));
    for (double& v : pool) v = random();
    const double* rows[8];
    double s1[8], s0[8];
    for (int r = 0; r < 8; ++r) {
      rows[r] = pool.data() + r * (n + 3) + r % 4;
      s1[r] = random();
      s0[r] = r == 5 ? s1[r] : random();  // one row that is exactly zero
    }
    for (bool difference : {false, true}) {
      for (Index count = 1; count <= 8; ++count) {
        double norms[8];
        wide::scaled_squared_norms(rows, s1, difference ? s0 : nullptr, count, n, norms);
        for (Index r = 0; r < count; ++r) {
          const Eigen::Map<const Vec> a(rows[r], len);
          Vec v(len);
          if (difference) {
            v.noalias() = s1[r] * a - s0[r] * a;
          } else {
            v.noalias() = s1[r] * a;
          }
          ASSERT_TRUE(same_bits(norms[r], v.squaredNorm())) << "n " << n << " row " << r;
          if (count != 8) continue;
          const double f = random();
          for (int mode : {wide::kRowAsIs, wide::kRowScaled, wide::kRowZero}) {
            Vec clipped = v;
            if (mode == wide::kRowScaled) clipped *= f;
            if (mode == wide::kRowZero) clipped.setZero();
            Vec want = Eigen::Map<const Vec>(rows[(r + 1) % 8], len);
            Vec got = want;
            want += clipped;
            wide::add_scaled_record(got.data(), rows[r], s1[r], s0[r], difference, mode, f, n);
            ASSERT_EQ(std::memcmp(want.data(), got.data(), sizeof(double) * n), 0)
                << "n " << n << " row " << r << " mode " << mode << " difference " << difference;
          }
        }
      }
    }
  }
}

TEST(WideKernels, InfinitiesAndNaNsPropagateAsInEigen) {
  if (!wide::enabled()) GTEST_SKIP() << "wide kernels not enabled here";
  const double inf = std::numeric_limits<double>::infinity();
  Vec a = Vec::LinSpaced(11, -1.0, 1.0);
  a[4] = inf;
  const Vec x = Vec::Constant(11, 2.0);
  const double* rows[1] = {a.data()};
  const double* ws[1] = {x.data()};
  double dot, norm;
  wide::dots(rows, ws, 1, 11, &dot);
  wide::squared_norms(rows, 1, 11, &norm);
  EXPECT_EQ(dot, a.dot(x));
  EXPECT_EQ(norm, inf);
  a[7] = -inf;  // inf - inf: NaN either way
  wide::dots(rows, ws, 1, 11, &dot);
  EXPECT_TRUE(std::isnan(dot));
  EXPECT_TRUE(std::isnan(a.dot(x)));
}

}  // namespace
}  // namespace dpsosp::detail
