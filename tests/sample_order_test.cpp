// The single-pass sample order: SamplePool's Fisher-Yates order and its
// uniformity, records stored in a sample order (store_in_sample_order,
// copy_in_sample_order, stored rows) keeping their indices, and the memory
// the records are allocated in.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "data/dataset_layout.hpp"
#include "data/sample_order.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "test_errors.hpp"

namespace dpsosp {
namespace {

using Layout = detail::DatasetLayout;
using testing::error_of;

Dataset numbered(Index n, Index p, bool sparse, bool labeled = true) {
  RowMatrix m(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(p));
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < p; ++j)
      m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
          (j % 2 == 1 && sparse) ? 0.0 : static_cast<double>(i) * (j % 3 == 2 ? -1.0 : 1.0) + 0.5 * (j % 3 == 1);
  Vec y;
  if (labeled) y = Vec::LinSpaced(static_cast<Eigen::Index>(n), 1000.0, 1000.0 + static_cast<double>(n) - 1.0);
  if (sparse) return Dataset(SparseRowMatrix(m.sparseView()), std::move(y));
  return Dataset(std::move(m), std::move(y));
}

// Every record-indexed accessor gives the same as on the dataset as built.
void expect_same_records(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  ASSERT_EQ(a.has_labels(), b.has_labels());
  const auto p = static_cast<Eigen::Index>(a.cols());
  Vec w = Vec::LinSpaced(p, -1.0, 2.0), ra(p), rb(p);
  for (Index i = 0; i < a.rows(); ++i) {
    EXPECT_EQ(a.row_dot(i, w), b.row_dot(i, w)) << "record " << i;
    EXPECT_EQ(a.row_squared_norm(i), b.row_squared_norm(i)) << "record " << i;
    a.row_dense(i, ra);
    b.row_dense(i, rb);
    EXPECT_EQ(ra, rb) << "record " << i;
    ra.setOnes();
    rb.setOnes();
    a.row_axpy(i, 0.25, ra);
    b.row_axpy(i, 0.25, rb);
    EXPECT_EQ(ra, rb) << "record " << i;
    if (a.has_labels()) EXPECT_EQ(a.label(i), b.label(i)) << "record " << i;
    if (!a.is_sparse()) {
      EXPECT_EQ(Eigen::Map<const Vec>(a.dense_row(i), p), Eigen::Map<const Vec>(b.dense_row(i), p)) << "record " << i;
    }
  }
}

TEST(DatasetSampleOrderTest, RecordsKeepTheirIndicesAndMoveToTheSampleOrder) {
  for (const bool sparse : {false, true}) {
    for (const bool labeled : {true, false}) {
      SCOPED_TRACE(std::string(sparse ? "sparse" : "dense") + (labeled ? ", labeled" : ", unlabeled"));
      const Index n = 1001;
      const Dataset as_built = numbered(n, 7, sparse, labeled);
      Dataset stored = as_built;
      EXPECT_FALSE(Layout::sample_order_seed(stored).has_value());
      EXPECT_EQ(Layout::slot(stored, 5), 5u);
      stored.store_in_sample_order(42);
      ASSERT_EQ(Layout::sample_order_seed(stored), std::optional<std::uint64_t>(42));
      expect_same_records(as_built, stored);
      // Row k of the stored arrays holds the k-th record of the seed's order.
      SamplePool pool(n, 42);
      const IndexList order = pool.draw(n);
      for (Index k = 0; k < n; ++k) {
        ASSERT_EQ(Layout::record_at(stored, k), order[k]);
        ASSERT_EQ(Layout::slot(stored, order[k]), k);
        const double first = sparse ? stored.sparse().coeff(static_cast<Eigen::Index>(k), 0)
                                    : stored.dense()(static_cast<Eigen::Index>(k), 0);
        ASSERT_EQ(first, static_cast<double>(order[k])) << "stored row " << k;
        if (labeled) ASSERT_EQ(stored.labels()[static_cast<Eigen::Index>(k)], 1000.0 + static_cast<double>(order[k]));
      }
      // Not the identity (a layout that moved nothing would pass the above for the identity order only).
      EXPECT_NE(Layout::record_at(stored, 0) + Layout::record_at(stored, 1) * n, Index{0} + Index{1} * n);
      // Subsets are taken by record.
      const IndexList some = {7, 0, 1000, 7, 512};
      expect_same_records(as_built.subset(some), stored.subset(some));
      // Another seed moves them on to its order; the same seed again is a no-op.
      stored.store_in_sample_order(43);
      EXPECT_EQ(Layout::sample_order_seed(stored), std::optional<std::uint64_t>(43));
      expect_same_records(as_built, stored);
      SamplePool other(n, 43);
      EXPECT_EQ(Layout::record_at(stored, 17), other.draw(18)[17]);
      const Dataset before = stored;
      stored.store_in_sample_order(43);
      for (Index k = 0; k < n; ++k) ASSERT_EQ(Layout::record_at(stored, k), Layout::record_at(before, k));
      expect_same_records(as_built, stored);
    }
  }
}

TEST(DatasetSampleOrderTest, EmptyAndSingleRecordDatasets) {
  Dataset empty;
  empty.store_in_sample_order(1);
  EXPECT_EQ(empty.rows(), 0u);
  SamplePool none(empty, 1);
  EXPECT_EQ(none.remaining(), 0u);
  Dataset one = numbered(1, 3, false);
  one.store_in_sample_order(9);
  EXPECT_EQ(Layout::record_at(one, 0), 0u);
  EXPECT_EQ(one.label(0), 1000.0);
}

// stored_rows: the stored arrays as a dataset of their own, sharing memory.
// Copies share the records until one moves them; a moved-from dataset is empty.
TEST(DatasetSampleOrderTest, StoredRowsCopiesAndMoves) {
  for (const bool sparse : {false, true}) {
    Dataset d = numbered(300, 4, sparse);
    d.store_in_sample_order(11);
    const Dataset rows = Layout::stored_rows(d);
    EXPECT_FALSE(Layout::sample_order_seed(rows).has_value());
    ASSERT_EQ(rows.rows(), d.rows());
    for (Index k = 0; k < d.rows(); ++k) {
      ASSERT_EQ(rows.label(k), d.label(Layout::record_at(d, k)));
      ASSERT_EQ(rows.row_dot(k, Vec::Ones(4)), d.row_dot(Layout::record_at(d, k), Vec::Ones(4)));
    }
    if (!sparse) EXPECT_EQ(rows.dense().data(), d.dense().data());  // no copy
    // Moving d's records on leaves the view (and any copy) as it was.
    const Dataset copy = d;
    d.store_in_sample_order(12);
    for (Index k = 0; k < d.rows(); ++k) {
      ASSERT_EQ(rows.label(k), copy.label(Layout::record_at(copy, k)));
      ASSERT_EQ(d.label(k), copy.label(k));
    }
    Dataset moved = std::move(d);
    EXPECT_EQ(moved.rows(), 300u);
    EXPECT_EQ(d.rows(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from dataset is empty
    EXPECT_FALSE(Layout::sample_order_seed(d).has_value());
    d = moved;
    EXPECT_EQ(d.label(7), moved.label(7));
  }
}

TEST(DatasetSampleOrderTest, PoolAdvanceAndReadsOrderOf) {
  Dataset d = numbered(50, 2, false);
  SamplePool plain(d, 3);
  EXPECT_FALSE(Layout::reads_order_of(plain, d));
  d.store_in_sample_order(3);
  SamplePool shared(d, 3), other(d, 4);
  EXPECT_TRUE(Layout::reads_order_of(shared, d));
  EXPECT_FALSE(Layout::reads_order_of(other, d));
  EXPECT_FALSE(Layout::reads_order_of(shared, Dataset(d)));  // a copy has its own order
  EXPECT_EQ(Layout::advance(shared, 10), 0u);
  EXPECT_EQ(Layout::advance(shared, 0), 10u);
  EXPECT_EQ(shared.draw(2), (IndexList{Layout::record_at(d, 10), Layout::record_at(d, 11)}));
  EXPECT_EQ(Layout::advance(shared, 38), 12u);
  EXPECT_CONTAINS(error_of([&] { Layout::advance(shared, 1); }), "only 0 of 50 remain");
}

// Copying records into a sample order gives what moving them there does.
TEST(DatasetSampleOrderTest, CopyInSampleOrderEqualsStoreInSampleOrder) {
  const Dataset built = numbered(2003, 9, false);
  Dataset moved = built;
  moved.store_in_sample_order(21);
  const Dataset copied = copy_in_sample_order(built.dense(), built.labels(), 21);
  EXPECT_EQ(Layout::sample_order_seed(copied), std::optional<std::uint64_t>(21));
  EXPECT_EQ(copied.dense(), moved.dense());
  EXPECT_EQ(copied.labels(), moved.labels());
  expect_same_records(built, copied);
  const Dataset unlabeled = copy_in_sample_order(built.dense(), Vec(), 21);
  EXPECT_FALSE(unlabeled.has_labels());
  EXPECT_EQ(unlabeled.dense(), moved.dense());
  const Vec two = Vec::Zero(2);
  EXPECT_CONTAINS(error_of([&] { copy_in_sample_order(built.dense(), two, 1); }),
                  "copy_in_sample_order: got 2 labels for 2003 records");
}

// A pool over a dataset gives the order of SamplePool(n, seed) whether the
// records are stored in that order (then it reads the dataset's), in another
// seed's, or in their own.
TEST(DatasetSampleOrderTest, PoolOverADatasetDrawsTheSeedsOrder) {
  const Index n = 777;
  Dataset own = numbered(n, 3, false), same = own, other = own;
  same.store_in_sample_order(5);
  other.store_in_sample_order(6);
  SamplePool reference(n, 5);
  const IndexList expect = reference.draw(n);
  for (const Dataset* d : {&own, &same, &other}) {
    SamplePool pool(*d, 5);
    EXPECT_EQ(pool.size(), n);
    IndexList got = pool.draw(100);
    const IndexList rest = pool.draw(n - 100);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, expect);
    EXPECT_CONTAINS(error_of([&] { pool.draw(1); }), "only 0 of 777 remain");
  }
}

// The pool's order is Fisher-Yates on the seed's sample-order stream, one
// uniform_index per swap (docs/noise.md); the shuffle makes its words a batch
// at a time, and must take the same words for the same swaps. Checked against
// that plain form for sizes that end inside and across its batches of words.
TEST(SamplePoolTest, OrderIsPlainFisherYatesOnTheSampleOrderStream) {
  for (Index n : {Index{1}, Index{2}, Index{33}, Index{257}, Index{100003}}) {
    std::vector<Index> expect(n);
    for (Index i = 0; i < n; ++i) expect[i] = i;
    GaussianStream stream(99, StreamPurpose::kSampleOrder);
    for (Index i = n; i > 1; --i) std::swap(expect[i - 1], expect[stream.uniform_index(i)]);
    SamplePool pool(n, 99);
    const IndexList got = pool.draw(n);
    ASSERT_EQ(got.size(), expect.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), expect.begin())) << "n = " << n;
  }
}

// allocate_records: the shape asked for, for sizes below and above the size
// from which it asks for huge pages (4 MiB), writable, and usable as a
// Dataset's features once filled. (Whether the kernel grants huge pages is
// not observable from here and changes only the speed.)
TEST(AllocateRecordsTest, ShapesAndContentsSurviveTheMoveIntoADataset) {
  for (Index rows : {Index{0}, Index{1}, Index{3}, Index{70000}}) {
    RowMatrix x = allocate_records(rows, 9);
    ASSERT_EQ(static_cast<Index>(x.rows()), rows);
    ASSERT_EQ(x.cols(), 9);
    for (Eigen::Index i = 0; i < x.size(); ++i) x.data()[i] = static_cast<double>(i);
    const double* storage = x.data();
    const Dataset d(std::move(x), Vec());
    EXPECT_EQ(d.rows(), rows);
    if (rows == 0) continue;
    EXPECT_EQ(d.dense().data(), storage);  // moved, not copied
    EXPECT_EQ(d.dense()(static_cast<Eigen::Index>(rows - 1), 8), static_cast<double>(rows * 9 - 1));
  }
}

// allocate_labels likewise: the length asked for (below and above 4 MiB),
// and the very storage ends up in the Dataset.
TEST(AllocateRecordsTest, LabelsKeepTheirStorageInADataset) {
  for (Index rows : {Index{0}, Index{2}, Index{600000}}) {
    Vec y = allocate_labels(rows);
    ASSERT_EQ(static_cast<Index>(y.size()), rows);
    for (Eigen::Index i = 0; i < y.size(); ++i) y[i] = i % 2 == 0 ? 1.0 : -1.0;
    const double* storage = y.data();
    const Dataset d(RowMatrix::Zero(static_cast<Eigen::Index>(rows), 2), std::move(y));
    if (rows == 0) continue;
    EXPECT_EQ(d.labels().data(), storage);
    EXPECT_EQ(d.label(rows - 1), rows % 2 == 0 ? -1.0 : 1.0);
  }
}

// The pool keeps 32-bit entries while n fits and 64-bit ones beyond; both
// shuffles make the same permutation (the wide one cannot be reached with a
// test-sized n through the pool, so it is called directly).
TEST(SamplePoolTest, ThirtyTwoAndSixtyFourBitOrdersAgree) {
  for (Index n : {Index{1}, Index{2}, Index{33}, Index{1000}, Index{4097}}) {
    std::vector<std::uint32_t> narrow;
    std::vector<std::uint64_t> wide;
    detail::shuffle_order(narrow, n, 99);
    detail::shuffle_order(wide, n, 99);
    ASSERT_EQ(narrow.size(), n);
    ASSERT_TRUE(std::equal(narrow.begin(), narrow.end(), wide.begin(), wide.end())) << "n " << n;
    SamplePool pool(n, 99);
    const IndexList drawn = pool.draw(n);
    EXPECT_TRUE(std::equal(drawn.begin(), drawn.end(), wide.begin(), wide.end())) << "n " << n;
  }
}

// Chi-square goodness of fit of the first drawn index over seeds 0..19999, n = 10.
// Under a uniform shuffle the statistic is chi^2 with 9 degrees of freedom; the
// bound 44.81 is its 1 - 1e-6 quantile, so a correct implementation fails with
// probability 1e-6 over the choice of seeds (and, seeds being fixed, never flakes).
TEST(SamplePoolTest, FirstPositionIsUniform) {
  constexpr int kSeeds = 20000;
  constexpr Index kN = 10;
  std::vector<double> counts(kN, 0.0);
  for (int s = 0; s < kSeeds; ++s) counts[SamplePool(kN, static_cast<std::uint64_t>(s)).draw(1)[0]] += 1.0;
  const double expected = static_cast<double>(kSeeds) / kN;
  double chi2 = 0.0;
  for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 44.81);
}

// All 5! = 120 orders of n = 5 over 24000 seeds: chi^2 with 119 degrees of freedom,
// bound 207.2 = its 1 - 1e-6 quantile (false-failure probability 1e-6). This catches
// the classic off-by-one Fisher-Yates bugs that still give uniform first positions.
TEST(SamplePoolTest, WholePermutationIsUniform) {
  constexpr int kSeeds = 24000;
  std::map<IndexList, double> counts;
  for (int s = 0; s < kSeeds; ++s) counts[SamplePool(5, 1000003u + static_cast<std::uint64_t>(s)).draw(5)] += 1.0;
  ASSERT_EQ(counts.size(), 120u);
  const double expected = kSeeds / 120.0;
  double chi2 = 0.0;
  for (const auto& entry : counts) chi2 += (entry.second - expected) * (entry.second - expected) / expected;
  EXPECT_LT(chi2, 207.2);
}

}  // namespace
}  // namespace dpsosp
