// The speed work changes no bits (issue 7).
//
// 1. Stored checksums: oracle outputs (O1, O2, clipped counts) of every model on
//    dense and sparse data, Gaussian streams, the tree mechanism and the sample
//    order, hashed bit for bit. The values were recorded with the code as it was
//    before the fused engine, the batched generator and the allocation-free tree
//    (this file compiled with -DDPSOSP_RECORD_CHECKSUMS against that library
//    prints them), so any later change of a bit fails here.
// 2. The fused kernels (Model::clipped_gradient_sum / clipped_difference_sum)
//    against their reference form, row for row, alone and shared between threads.
// 3. Whole runs of every algorithm: one thread and two (sharing forced) agree.
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"
#include "test_threads.hpp"

#ifndef DPSOSP_RECORD_CHECKSUMS
#include <gtest/gtest.h>
#include <omp.h>

#include "engine/wide_kernels.hpp"
#include "engine/work_sharing.hpp"
#endif

namespace dpsosp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// FNV-1a over the bytes of the values.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void add(double v) { bytes(&v, sizeof v); }
  void add(std::uint64_t v) { bytes(&v, sizeof v); }
  void add(const Vec& v) {
    add(static_cast<std::uint64_t>(v.size()));
    for (Eigen::Index i = 0; i < v.size(); ++i) add(v[i]);
  }
};

using testing::Labels;

// n records of p N(0,1) features (a fixed stream), optionally sparsified.
Dataset make_data(Index n, Index p, Labels labels, bool sparse, std::uint64_t seed) {
  return testing::make_test_data(n, p, labels, sparse, seed);
}

struct OracleCase {
  const char* model;
  Index p;
  Labels labels;
  bool sparse;
  ModelOptions options;
};

std::vector<OracleCase> oracle_cases() {
  ModelOptions pca;
  pca.rank = 2;
  ModelOptions classes;
  classes.classes = 3;
  classes.hidden = 5;
  return {
      {"logistic", 37, Labels::kBinary, false, {}},      {"logistic", 37, Labels::kBinary, true, {}},
      {"sigmoid", 20, Labels::kBinary, false, {}},       {"cauchy", 9, Labels::kReal, false, {}},
      {"phase-retrieval", 8, Labels::kReal, false, {}},  {"pca", 11, Labels::kNone, false, pca},
      {"softmax", 29, Labels::kClasses, false, classes}, {"softmax", 29, Labels::kClasses, true, classes},
      {"mlp", 13, Labels::kClasses, false, classes},     {"mlp", 13, Labels::kClasses, true, classes},
  };
}

// Oracle outputs along a short made-up trajectory: O1 and O2 clipped and not,
// batches from 1 row to several hundred.
// With stored_seed, the records are first stored in that seed's sample order
// (the pool's own, 5, or another): the checksum must not change.
std::uint64_t oracle_checksum(const OracleCase& c, std::uint64_t stored_seed = 0) {
  Dataset data = make_data(4800, c.p, c.labels, c.sparse, 1000 + c.p);
#ifndef DPSOSP_RECORD_CHECKSUMS
  if (stored_seed != 0) data.store_in_sample_order(stored_seed);
#else
  (void)stored_seed;
#endif
  const auto model = make_model(c.model, c.p, c.options, &data);
  const Index d = model->dim();
  Vec x(static_cast<Eigen::Index>(d)), step(static_cast<Eigen::Index>(d));
  GaussianStream g(31, StreamPurpose::kTest, 1);
  g.fill(x, 0.3);
#ifndef DPSOSP_RECORD_CHECKSUMS
  SamplePool pool(data, 5);  // reads the dataset's order when it is stored in seed 5's
#else
  SamplePool pool(data.rows(), 5);
#endif
  GradientOracles oracles(*model, data, pool);
  Hash h;
  const Index batches[] = {1, 7, 300, 64, 513, 2, 260};
  for (int round = 0; round < 2; ++round) {
    for (Index b : batches) {
      g.fill(step, 0.05);
      const Vec x_prev = x;
      x += step;
      const double clip1 = round == 0 ? 1.0 : kInf;
      const double clip2 = round == 0 ? 0.5 * step.norm() : kInf;
      const OracleOutput o1 = oracles.o1(x, b, clip1);
      h.add(o1.value);
      h.add(static_cast<std::uint64_t>(o1.clipped));
      const OracleOutput o2 = oracles.o2(x, x_prev, b, clip2);
      h.add(o2.value);
      h.add(static_cast<std::uint64_t>(o2.clipped));
    }
  }
  const IndexList again = {3, 1, 4, 1, 5, 9, 2, 6};  // o1_on may repeat records
  const OracleOutput on = oracles.o1_on(x, again, 0.7);
  h.add(on.value);
  h.add(static_cast<std::uint64_t>(on.clipped));
  h.add(static_cast<std::uint64_t>(oracles.gradient_evaluations()));
  return h.h;
}

std::uint64_t stream_checksum() {
  GaussianStream s(42, StreamPurpose::kTest, 3);
  Hash h;
  Vec v(1001);
  s.fill(v, 1.5);
  h.add(v);
  for (int i = 0; i < 5; ++i) h.add(s.next());
  for (int i = 0; i < 3; ++i) h.add(s.next_u64());
  for (int i = 0; i < 3; ++i) h.add(s.uniform_index(1000));
  h.add(s.uniform());
  Vec w(10);
  s.fill(w, 0.25);
  h.add(w);
  h.add(s.next());
  h.add(s.position());
  return h.h;
}

std::uint64_t tree_checksum() {
  TreeNoise tree(37, 0.7, GaussianStream(testing::test_noise_key(), StreamPurpose::kTreeNoise));
  Hash h;
  for (int t = 1; t <= 100; ++t) {
    if (t == 60) tree.restart();
    h.add(tree.next());
  }
  return h.h;
}

std::uint64_t pool_checksum() {
  SamplePool pool(100000, 77);
  Hash h;
  const IndexList all = pool.draw(100000);
  for (Index i : all) h.add(static_cast<std::uint64_t>(i));
  return h.h;
}

#ifdef DPSOSP_RECORD_CHECKSUMS
}  // namespace
}  // namespace dpsosp

int main() {
  using namespace dpsosp;
  for (const auto& c : oracle_cases())
    std::printf("{\"%s\", %zu, %s, 0x%016" PRIx64 "ull},\n", c.model, c.p, c.sparse ? "true" : "false",
                oracle_checksum(c));
  std::printf("stream 0x%016" PRIx64 "ull\ntree 0x%016" PRIx64 "ull\npool 0x%016" PRIx64 "ull\n", stream_checksum(),
              tree_checksum(), pool_checksum());
  return 0;
}
#else

struct Recorded {
  const char* model;
  Index p;
  bool sparse;
  std::uint64_t checksum;
};

// Recorded before the speed work (see the top of the file).
constexpr Recorded kOracleChecksums[] = {
    {"logistic", 37, false, 0xf1b3497943fe5685ull},
    {"logistic", 37, true, 0x72cfda326d109cb7ull},
    {"sigmoid", 20, false, 0xbc4e5a135acac2adull},
    {"cauchy", 9, false, 0xaa8a266d3e610848ull},
    {"phase-retrieval", 8, false, 0xcfaf76d6ae941c60ull},
    {"pca", 11, false, 0x7e2a627557260d7dull},
    {"softmax", 29, false, 0x4c612a025df7f62full},
    {"softmax", 29, true, 0xa05032b4cbbb7e37ull},
    {"mlp", 13, false, 0x24e9fe8429aa61e8ull},
    {"mlp", 13, true, 0xe3f0a9046b36350aull},
};
constexpr std::uint64_t kStreamChecksum = 0xae7a7004fd50b5afull;
// Re-recorded when the tree's noise moved from the seed's Philox stream to the
// secret AES stream (SPEC section 8; the tree code itself unchanged).
constexpr std::uint64_t kTreeChecksum = 0x604b105b11eab1c1ull;
constexpr std::uint64_t kPoolChecksum = 0x9e1e7b9492d70e07ull;

TEST(PerfDeterminism, OracleOutputsMatchTheRecordedChecksums) {
  const auto cases = oracle_cases();
  ASSERT_EQ(cases.size(), sizeof kOracleChecksums / sizeof kOracleChecksums[0]);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(std::string(cases[i].model) + (cases[i].sparse ? " sparse" : " dense"));
    ASSERT_STREQ(cases[i].model, kOracleChecksums[i].model);
    for (int mode : {1, 2}) {
      testing::ForcedThreads forced(mode, mode);
      EXPECT_EQ(oracle_checksum(cases[i]), kOracleChecksums[i].checksum) << "threads " << mode;
    }
  }
}

// The same checksums with the records stored in the pool's sample order (the
// pool then reads the dataset's order and the records front to back) and in
// another seed's (every record reached through its slot).
TEST(PerfDeterminism, OracleOutputsMatchTheRecordedChecksumsWithRecordsInASampleOrder) {
  const std::vector<OracleCase> cases = oracle_cases();
  ASSERT_EQ(cases.size(), sizeof kOracleChecksums / sizeof kOracleChecksums[0]);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    for (const std::uint64_t stored : {std::uint64_t{5}, std::uint64_t{6}}) {
      for (const int mode : {1, 2}) {
        testing::ForcedThreads forced(mode, mode);
        EXPECT_EQ(oracle_checksum(cases[i], stored), kOracleChecksums[i].checksum)
            << cases[i].model << (cases[i].sparse ? " sparse" : " dense") << ", stored in seed " << stored
            << "'s order, threads " << mode;
      }
    }
  }
}

// The same checksums through the SSE2 forms, as on a processor without AVX2
// (on this machine the test above runs through the wide kernels).
TEST(PerfDeterminism, OracleOutputsMatchTheRecordedChecksumsWithoutWideKernels) {
  struct WideOff {
    WideOff() { detail::wide::turn_off_for_tests(true); }
    ~WideOff() { detail::wide::turn_off_for_tests(false); }
  } off;
  ASSERT_FALSE(detail::wide::enabled());
  const auto cases = oracle_cases();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(std::string(cases[i].model) + (cases[i].sparse ? " sparse" : " dense"));
    for (int mode : {1, 2}) {
      testing::ForcedThreads forced(mode, mode);
      EXPECT_EQ(oracle_checksum(cases[i]), kOracleChecksums[i].checksum) << "threads " << mode;
    }
  }
}

TEST(PerfDeterminism, StreamsTreeAndSampleOrderMatchTheRecordedChecksums) {
  EXPECT_EQ(stream_checksum(), kStreamChecksum);
  EXPECT_EQ(tree_checksum(), kTreeChecksum);
  EXPECT_EQ(pool_checksum(), kPoolChecksum);
}

// The reference form of the fused kernels: rows from batch_gradients, each
// clipped, added in order.
ClippedSum reference_sum(const Model& m, const Dataset& data, const IndexList& idx, const Vec& x, const Vec* x_prev,
                         double clip) {
  RowMatrix a, b;
  m.batch_gradients(x, data, idx, a);
  if (x_prev != nullptr) {
    m.batch_gradients(*x_prev, data, idx, b);
    a -= b;
  }
  ClippedSum out;
  out.sum = Vec::Zero(static_cast<Eigen::Index>(m.dim()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    if (clip_to_norm(a.row(i).transpose(), clip)) ++out.clipped;
  for (Eigen::Index i = 0; i < a.rows(); ++i) out.sum += a.row(i).transpose();
  return out;
}

void expect_same_bits(const ClippedSum& got, const ClippedSum& want) {
  ASSERT_EQ(got.sum.size(), want.sum.size());
  EXPECT_EQ(got.clipped, want.clipped);
  EXPECT_EQ(std::memcmp(got.sum.data(), want.sum.data(), sizeof(double) * static_cast<std::size_t>(got.sum.size())), 0);
}

TEST(PerfDeterminism, FusedKernelsEqualTheReferenceFormAloneAndShared) {
  for (const auto& c : oracle_cases()) {
    SCOPED_TRACE(std::string(c.model) + (c.sparse ? " sparse" : " dense"));
    const Dataset data = make_data(3000, c.p, c.labels, c.sparse, 7);
    const auto model = make_model(c.model, c.p, c.options, &data);
    const Index d = model->dim();
    Vec x(static_cast<Eigen::Index>(d)), x_prev(static_cast<Eigen::Index>(d));
    GaussianStream g(8, StreamPurpose::kTest, 2);
    g.fill(x, 0.4);
    g.fill(x_prev, 0.4);
    x_prev += x;
    // Batches below and above the sharing threshold and the block size.
    for (Index b : {Index{1}, Index{9}, Index{700}, Index{2000}}) {
      const IndexList idx = SamplePool(data.rows(), b).draw(b);
      for (double clip : {kInf, 0.0, 0.3, 5.0}) {
        const ClippedSum want1 = reference_sum(*model, data, idx, x, nullptr, clip);
        const ClippedSum want2 = reference_sum(*model, data, idx, x, &x_prev, clip);
        for (int mode : {1, 2}) {
          SCOPED_TRACE("batch " + std::to_string(b) + " threads " + std::to_string(mode));
          testing::ForcedThreads forced(mode, mode);
          expect_same_bits(model->clipped_gradient_sum(x, data, idx, clip), want1);
          expect_same_bits(model->clipped_difference_sum(x, x_prev, data, idx, clip), want2);
          // The base class's default (block by block over batch_gradients) too.
          expect_same_bits(model->Model::clipped_gradient_sum(x, data, idx, clip), want1);
          expect_same_bits(model->Model::clipped_difference_sum(x, x_prev, data, idx, clip), want2);
        }
      }
    }
  }
}

TEST(PerfDeterminism, KernelErrorsInsideSharedWorkBecomeExceptions) {
  // A label out of range is found by the kernel, possibly on a helper thread.
  RowMatrix x = RowMatrix::Ones(4000, 5);
  Vec y = Vec::Zero(4000);
  y[3999] = 7;  // not a class of a 3-class model
  const Dataset data(std::move(x), std::move(y));
  ModelOptions o;
  o.classes = 3;
  const auto model = make_model("softmax", 5, o);
  IndexList idx(4000);
  for (Index i = 0; i < idx.size(); ++i) idx[i] = i;
  testing::ForcedThreads forced(2, 2);
  EXPECT_THROW(model->clipped_gradient_sum(Vec::Zero(15), data, idx, 1.0), Error);
}

}  // namespace
}  // namespace dpsosp
#endif
