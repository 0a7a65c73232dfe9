// Tests of Dataset row access, file-format names, load_dataset and SamplePool.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
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

const std::string kData = DPSOSP_TEST_DATA_DIR;

// The same 3x4 matrix stored dense and sparse (with an all-zero row).
RowMatrix example_matrix() {
  RowMatrix m(3, 4);
  m << 1.0, 0.0, -2.0, 0.5, 0.0, 0.0, 0.0, 0.0, 3.0, 4.0, 0.0, 0.0;
  return m;
}

Dataset dense_example() { return Dataset(example_matrix(), Vec::LinSpaced(3, 1.0, 3.0)); }
Dataset sparse_example() {
  return Dataset(SparseRowMatrix(example_matrix().sparseView()), Vec::LinSpaced(3, 1.0, 3.0));
}

TEST(DatasetTest, DenseAndSparseRowOperationsAgree) {
  const Dataset dense = dense_example();
  const Dataset sparse = sparse_example();
  ASSERT_FALSE(dense.is_sparse());
  ASSERT_TRUE(sparse.is_sparse());
  ASSERT_EQ(sparse.sparse().nonZeros(), 5);
  Vec w(4);
  w << 1.0, -1.0, 2.0, 4.0;
  const double expected_dot[] = {1.0 - 4.0 + 2.0, 0.0, 3.0 - 4.0};
  const double expected_norm[] = {1.0 + 4.0 + 0.25, 0.0, 25.0};
  for (Index i = 0; i < 3; ++i) {
    for (const Dataset* d : {&dense, &sparse}) {
      EXPECT_DOUBLE_EQ(d->row_dot(i, w), expected_dot[i]) << "row " << i << " sparse=" << d->is_sparse();
      EXPECT_DOUBLE_EQ(d->row_squared_norm(i), expected_norm[i]);
      Vec row = Vec::Constant(4, 99.0);  // row_dense must overwrite, zeros included
      d->row_dense(i, row);
      EXPECT_EQ(row, example_matrix().row(static_cast<Eigen::Index>(i)).transpose());
      Vec acc = Vec::Ones(4);
      d->row_axpy(i, -2.0, acc);
      EXPECT_EQ(acc, Vec::Ones(4) - 2.0 * example_matrix().row(static_cast<Eigen::Index>(i)).transpose());
    }
  }
}

TEST(DatasetTest, ShapeAndLabels) {
  const Dataset d = dense_example();
  EXPECT_EQ(d.rows(), 3u);
  EXPECT_EQ(d.cols(), 4u);
  EXPECT_TRUE(d.has_labels());
  EXPECT_DOUBLE_EQ(d.label(2), 3.0);
  const Dataset unlabeled(example_matrix(), Vec());
  EXPECT_FALSE(unlabeled.has_labels());
  EXPECT_EQ(unlabeled.rows(), 3u);
  const Dataset empty;
  EXPECT_EQ(empty.rows(), 0u);
  EXPECT_EQ(empty.cols(), 0u);
}

TEST(DatasetTest, ConstructorsRejectLabelCountMismatch) {
  const std::string dense_msg = error_of([] { (void)Dataset(example_matrix(), Vec::Zero(2)); });
  EXPECT_CONTAINS(dense_msg, "Dataset: got 2 labels for 3 rows (expected 0 or 3)");
  const std::string sparse_msg =
      error_of([] { (void)Dataset(SparseRowMatrix(example_matrix().sparseView()), Vec::Zero(4)); });
  EXPECT_CONTAINS(sparse_msg, "got 4 labels for 3 rows");
}

TEST(DatasetTest, RowAccessChecksIndexAndWidth) {
  for (const Dataset& d : {dense_example(), sparse_example()}) {
    EXPECT_CONTAINS(error_of([&] { d.row_squared_norm(3); }), "row_squared_norm: row 3 out of range (rows = 3)");
    EXPECT_CONTAINS(error_of([&] { d.row_dot(0, Vec::Zero(3)); }), "row_dot: vector has 3 entries, expected 4");
    Vec out(5);
    EXPECT_CONTAINS(error_of([&] { d.row_axpy(0, 1.0, out); }), "row_axpy: vector has 5 entries");
    EXPECT_CONTAINS(error_of([&] { d.row_dense(0, out); }), "row_dense: vector has 5 entries");
    EXPECT_CONTAINS(error_of([&] { d.subset({0, 7}); }), "subset: row 7 out of range");
  }
}

TEST(DatasetTest, SubsetKeepsOrderLabelsAndStorageKind) {
  for (const Dataset& d : {dense_example(), sparse_example()}) {
    const Dataset s = d.subset({2, 0, 2});
    EXPECT_EQ(s.is_sparse(), d.is_sparse());
    ASSERT_EQ(s.rows(), 3u);
    ASSERT_EQ(s.cols(), 4u);
    EXPECT_EQ(s.labels(), Vec((Vec(3) << 3.0, 1.0, 3.0).finished()));
    Vec row(4);
    s.row_dense(0, row);
    EXPECT_EQ(row, example_matrix().row(2).transpose());
    s.row_dense(1, row);
    EXPECT_EQ(row, example_matrix().row(0).transpose());
    EXPECT_EQ(d.subset({}).rows(), 0u);
  }
  const Dataset unlabeled = Dataset(example_matrix(), Vec()).subset({1});
  EXPECT_FALSE(unlabeled.has_labels());
}

TEST(DataFormatTest, ParseFileFormatNames) {
  EXPECT_EQ(parse_file_format("csv"), FileFormat::kCsv);
  EXPECT_EQ(parse_file_format("CSV"), FileFormat::kCsv);
  EXPECT_EQ(parse_file_format("libsvm"), FileFormat::kLibsvm);
  EXPECT_EQ(parse_file_format("svmlight"), FileFormat::kLibsvm);
  EXPECT_EQ(parse_file_format("idx"), FileFormat::kIdx);
  EXPECT_EQ(parse_file_format("records"), FileFormat::kRecords);
  EXPECT_CONTAINS(
      error_of([] { parse_file_format("parquet"); }),
      "--format: unknown format 'parquet' (expected one of csv, libsvm, svmlight, svm, idx, records, dpsr)");
}

TEST(DataFormatTest, EachRowOfTheFormatTableIsReachable) {
  // Every format's names and extensions lead back to its row, its loader is
  // set, and no name or extension belongs to two rows.
  std::set<std::string> names, extensions;
  for (const FormatInfo& f : format_table()) {
    EXPECT_EQ(format_info(f.id).name, f.name);
    EXPECT_NE(f.load, nullptr) << f.name;
    EXPECT_FALSE(f.extensions.empty()) << f.name;
    std::vector<std::string> all = f.aliases;
    all.push_back(f.name);
    for (const std::string& n : all) {
      EXPECT_TRUE(names.insert(n).second) << n;
      EXPECT_EQ(parse_file_format(n), f.id) << n;
    }
    for (const std::string& e : f.extensions) {
      EXPECT_TRUE(extensions.insert(e).second) << e;
      EXPECT_EQ(guess_file_format("/no/such/dir/records" + e), f.id) << e;
      EXPECT_EQ(guess_file_format("/no/such/dir/records" + e + ".gz"), f.id) << e;
    }
    EXPECT_CONTAINS(format_names(" | "), f.name);
  }
  EXPECT_EQ(format_table().size(), 4u);
  EXPECT_TRUE(format_info(FileFormat::kCsv).csv_options && format_info(FileFormat::kCsv).table);
  EXPECT_TRUE(format_info(FileFormat::kLibsvm).sparse);
  EXPECT_TRUE(format_info(FileFormat::kIdx).labels_file && !format_info(FileFormat::kIdx).table);
  EXPECT_FALSE(format_info(FileFormat::kRecords).table);
}

TEST(DataFormatTest, GuessFileFormatFromName) {
  EXPECT_EQ(guess_file_format("data.csv"), FileFormat::kCsv);
  EXPECT_EQ(guess_file_format("/tmp/x/Data.CSV.gz"), FileFormat::kCsv);
  EXPECT_EQ(guess_file_format("a9a.svm"), FileFormat::kLibsvm);
  EXPECT_EQ(guess_file_format("a9a.libsvm"), FileFormat::kLibsvm);
  EXPECT_EQ(guess_file_format("a9a.svmlight.gz"), FileFormat::kLibsvm);
  EXPECT_EQ(guess_file_format("a9a.txt"), FileFormat::kLibsvm);
  EXPECT_EQ(guess_file_format("train-images-idx3-ubyte.gz"), FileFormat::kIdx);
  EXPECT_EQ(guess_file_format("t10k-labels-idx1-ubyte"), FileFormat::kIdx);
  EXPECT_EQ(guess_file_format("pixels.idx.gz"), FileFormat::kIdx);
  EXPECT_EQ(guess_file_format("train.DPSR"), FileFormat::kRecords);
  const std::string msg = error_of([] { guess_file_format("dir.csv/records.bin"); });
  EXPECT_CONTAINS(msg, "data file dir.csv/records.bin: cannot tell its format");
  EXPECT_CONTAINS(msg, "pass --format csv|libsvm|idx|records");
}

TEST(DataFormatTest, AFileThatSaysWhatItIsIsReadAsThat) {
  // A record file and an IDX array say what they are in their first bytes,
  // whatever their names; a name tells the others.
  const std::string dir = ::testing::TempDir();
  const std::string records = dir + "/records.bin", idx = dir + "/images.data";
  RowMatrix m(2, 3);
  m << 1, 2, 3, 4, 5, 6;
  write_record_file(Dataset(m, Vec::Ones(2)), records);
  EXPECT_EQ(guess_file_format(records), FileFormat::kRecords);
  {
    std::ofstream out(idx, std::ios::binary);
    const unsigned char header[] = {0, 0, 0x08, 3, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 7};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
  }
  EXPECT_EQ(guess_file_format(idx), FileFormat::kIdx);
  const std::string text = dir + "/table.csv";
  std::ofstream(text) << "0,1\n";
  EXPECT_EQ(guess_file_format(text), FileFormat::kCsv);
  std::remove(records.c_str());
  std::remove(idx.c_str());
  std::remove(text.c_str());
}

TEST(DataFormatTest, LoadDatasetDispatchesOnFormat) {
  const Dataset csv = load_dataset(kData + "/csv/small.csv", FileFormat::kCsv);
  EXPECT_FALSE(csv.is_sparse());
  EXPECT_EQ(csv.rows(), 4u);
  const Dataset svm = load_dataset(kData + "/libsvm/small.svm", FileFormat::kLibsvm);
  EXPECT_TRUE(svm.is_sparse());
  EXPECT_EQ(svm.cols(), 4u);
  LoadOptions unlabeled;
  unlabeled.labeled = false;
  EXPECT_EQ(load_dataset(kData + "/csv/small.csv", FileFormat::kCsv, unlabeled).cols(), 4u);
}

TEST(DataFormatTest, LoadDatasetFindsIdxLabelsBesideImages) {
  const Dataset d = load_dataset(kData + "/idx/tiny-images-idx3-ubyte.gz", FileFormat::kIdx);
  ASSERT_TRUE(d.has_labels());
  EXPECT_EQ(d.labels(), Vec((Vec(3) << 7.0, 0.0, 9.0).finished()));
  LoadOptions unlabeled;
  unlabeled.labeled = false;
  EXPECT_FALSE(load_dataset(kData + "/idx/tiny-images-idx3-ubyte", FileFormat::kIdx, unlabeled).has_labels());
  // No silent fallback to unlabeled data when the labels cannot be found.
  EXPECT_CONTAINS(error_of([] { load_dataset(kData + "/idx/corrupt-images-idx3-ubyte.gz", FileFormat::kIdx); }),
                  "corrupt-labels-idx1-ubyte.gz not found beside the images");
  EXPECT_CONTAINS(error_of([] { load_dataset(kData + "/csv/small.csv", FileFormat::kIdx); }),
                  "cannot derive the IDX labels file from the name");
}

TEST(SamplePoolTest, FullDrainUsesEveryIndexOnce) {
  SamplePool pool(1000, 42);
  EXPECT_EQ(pool.size(), 1000u);
  std::vector<int> seen(1000, 0);
  for (Index k : {0, 1, 7, 100, 392, 500}) {
    const IndexList batch = pool.draw(k);
    ASSERT_EQ(batch.size(), k);
    for (Index i : batch) ++seen.at(i);
  }
  EXPECT_EQ(pool.used(), 1000u);
  EXPECT_EQ(pool.remaining(), 0u);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
}

TEST(SamplePoolTest, DrawBeyondRemainingThrows) {
  SamplePool pool(10, 1);
  pool.draw(7);
  EXPECT_CONTAINS(error_of([&] { pool.draw(4); }), "SamplePool::draw: asked for 4 records but only 3 of 10 remain");
  EXPECT_EQ(pool.remaining(), 3u);  // a refused draw consumes nothing
  EXPECT_EQ(pool.draw(3).size(), 3u);
  EXPECT_TRUE(pool.draw(0).empty());
  SamplePool empty(0, 1);
  EXPECT_CONTAINS(error_of([&] { empty.draw(1); }), "only 0 of 0 remain");
}

TEST(SamplePoolTest, OrderIsAFunctionOfTheSeed) {
  SamplePool a(500, 7), b(500, 7), c(500, 8);
  const IndexList first = a.draw(500);
  EXPECT_EQ(first, b.draw(500));
  EXPECT_NE(first, c.draw(500));
  // Drawing in pieces gives the same sequence as drawing at once.
  SamplePool d(500, 7);
  IndexList pieces = d.draw(123);
  const IndexList rest = d.draw(377);
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  EXPECT_EQ(pieces, first);
  // Not the identity: a shuffle that forgot to shuffle would pass the tests above.
  IndexList identity(500);
  for (Index i = 0; i < 500; ++i) identity[i] = i;
  EXPECT_NE(first, identity);
}

// A dataset of n records with distinct, recognisable features and labels:
// record i's features are (i, i + 0.5, -i, ...), its label 1000 + i; sparse
// records keep every other feature (record 0's only one: 0 is not stored).

// all_finite (types.hpp) against std::isfinite, value by value: a single NaN,
// +inf or -inf at every position of vectors whose lengths cover the
// vectorized body and the scalar tail, among extreme finite values (the
// largest double, whose product with 0 is still 0; subnormals; -0).
TEST(AllFinite, AgreesWithIsfiniteAtEveryPosition) {
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), inf, -inf};
  const double finite[] = {std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::denorm_min(),
                           -0.0,
                           1.5,
                           -3e300};
  EXPECT_TRUE(all_finite(Vec(0)));
  for (Eigen::Index n = 1; n <= 37; ++n) {
    Vec v(n);
    for (Eigen::Index k = 0; k < n; ++k) v[k] = finite[k % 6];
    EXPECT_TRUE(all_finite(v)) << n;
    for (const double bad : specials) {
      for (Eigen::Index k = 0; k < n; ++k) {
        Vec w = v;
        w[k] = bad;
        EXPECT_FALSE(all_finite(w)) << "n " << n << " position " << k << " value " << bad;
      }
    }
  }
  RowMatrix m = RowMatrix::Constant(5, 7, std::numeric_limits<double>::max());
  EXPECT_TRUE(all_finite(m));
  m(4, 6) = -inf;
  EXPECT_FALSE(all_finite(m));
}

}  // namespace
}  // namespace dpsosp
