// Tests of the CSV, LibSVM and IDX loaders: known values from tests/data and one
// test per kind of bad input, checking that the message names file, place and reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "test_errors.hpp"
#include "test_fixtures.hpp"

namespace dpsosp {
namespace {

namespace fs = std::filesystem;

const std::string kData = DPSOSP_TEST_DATA_DIR;

// A loader's error is one line (it names the file and the place).
template <class F>
std::string error_of(F&& f) {
  const std::string msg = testing::error_of(std::forward<F>(f));
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
  return msg;
}

LoadOptions unlabeled() {
  LoadOptions o;
  o.labeled = false;
  return o;
}

// Each test writes its ad-hoc files into its own directory, removed afterwards.
class LoaderTest : public testing::ScratchDirTest {
 protected:
  LoaderTest() : ScratchDirTest("dpsosp_loaders_") {}
};

using LoaderCsvTest = LoaderTest;
using LoaderLibsvmTest = LoaderTest;
using LoaderIdxTest = LoaderTest;

// tests/data/csv/small.csv: label, then three features.
void expect_small_csv(const Dataset& d) {
  ASSERT_EQ(d.rows(), 4u);
  ASSERT_EQ(d.cols(), 3u);
  ASSERT_FALSE(d.is_sparse());
  RowMatrix expected(4, 3);
  expected << 0.5, -2, 300, 1.25, 0, -0.75, 2, 4, 8, -3.5, 1e-3, 0;
  EXPECT_EQ(d.dense(), expected);
  EXPECT_EQ(d.labels(), Vec((Vec(4) << 1, 0, 1, -1).finished()));
}

TEST_F(LoaderCsvTest, LoadsLabelFirstColumnAndFeatures) { expect_small_csv(load_csv(kData + "/csv/small.csv")); }

TEST_F(LoaderCsvTest, GzipCrlfAndSpacesReadLikePlainCsv) {
  expect_small_csv(load_csv(kData + "/csv/small.csv.gz"));
  expect_small_csv(load_csv(kData + "/csv/crlf.csv"));
  const Dataset spaces = load_csv(kData + "/csv/spaces.csv");
  EXPECT_EQ(spaces.dense(), load_csv(kData + "/csv/small.csv").dense().topRows(2));
}

TEST_F(LoaderCsvTest, UnlabeledKeepsEveryColumn) {
  const Dataset d = load_csv(kData + "/csv/small.csv", unlabeled());
  EXPECT_FALSE(d.has_labels());
  ASSERT_EQ(d.cols(), 4u);
  EXPECT_EQ(d.dense()(3, 0), -1.0);
  EXPECT_EQ(d.dense()(0, 3), 300.0);
}

TEST_F(LoaderCsvTest, HeaderGivenOrDetected) {
  LoadOptions options;
  options.header = true;
  const Dataset d = load_csv(kData + "/csv/header.csv", options);
  EXPECT_EQ(d.rows(), 2u);
  EXPECT_EQ(d.dense(), load_csv(kData + "/csv/small.csv").dense().topRows(2));
  // Without the option: a first line with a word in a numeric column is a header.
  const Dataset detected = load_csv(kData + "/csv/header.csv");
  EXPECT_EQ(detected.dense(), d.dense());
  EXPECT_EQ(detected.labels(), d.labels());
  const Dataset one = load_csv(kData + "/csv/header_without_flag.csv");
  ASSERT_EQ(one.rows(), 1u);
  EXPECT_EQ(one.label(0), 1.0);
  // A first line of numbers is a record; one with a missing value too (not a header).
  EXPECT_EQ(load_csv(kData + "/csv/small.csv").rows(), 4u);
  LoadOptions zero;
  zero.impute_zero = true;
  const Dataset gap = load_csv(write("gap.csv", "1,,3\n0,4,5\n"), zero);
  ASSERT_EQ(gap.rows(), 2u);
  EXPECT_EQ(gap.dense()(0, 0), 0.0);
  EXPECT_EQ(gap.dense()(0, 1), 3.0);
}

TEST_F(LoaderCsvTest, SkipsFullyEmptyLinesAndReadsUnterminatedLastLine) {
  const Dataset d = load_csv(kData + "/csv/blank_lines.csv");
  EXPECT_EQ(d.dense(), load_csv(kData + "/csv/small.csv").dense().topRows(2));
  const Dataset last = load_csv(kData + "/csv/no_final_newline.csv");
  ASSERT_EQ(last.rows(), 2u);
  EXPECT_EQ(last.dense()(1, 1), 6.0);
}

TEST_F(LoaderCsvTest, LinesAcrossReadBuffersAndUnderflowToZero) {
  // ~1.5 MB: lines straddle the reader's 1 MiB buffer.
  std::ostringstream text;
  constexpr int kRows = 40000;
  for (int i = 0; i < kRows; ++i) text << i % 2 << ", " << i << ".25,-" << i << "e-3,1e-999\n";
  const Dataset d = load_csv(write("big.csv", text.str()));
  ASSERT_EQ(d.rows(), static_cast<Index>(kRows));
  EXPECT_DOUBLE_EQ(d.dense().col(0).sum(), kRows * (kRows - 1) / 2.0 + 0.25 * kRows);
  EXPECT_DOUBLE_EQ(d.dense()(kRows - 1, 1), -(kRows - 1) * 1e-3);
  EXPECT_EQ(d.dense().col(2).cwiseAbs().maxCoeff(), 0.0);  // 1e-999 underflows to 0, not an error
  EXPECT_DOUBLE_EQ(d.labels().sum(), kRows / 2);
}

TEST_F(LoaderCsvTest, RejectsMissingFile) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/no_such_file.csv"); }),
                  "CSV file " + kData + "/csv/no_such_file.csv: cannot open file: No such file or directory");
}

TEST_F(LoaderCsvTest, RejectsFileWithoutRecords) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/empty.csv"); }), "empty.csv: empty file (no records)");
  EXPECT_CONTAINS(error_of([this] { load_csv(write("blank.csv", "\n\r\n\n")); }), "empty file (no records)");
  LoadOptions options;
  options.header = true;
  EXPECT_CONTAINS(error_of([&] { load_csv(kData + "/csv/header_only.csv", options); }),
                  "header_only.csv: no records after the header line");
}

TEST_F(LoaderCsvTest, RejectsRaggedRows) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/ragged.csv"); }),
                  "CSV file " + kData + "/csv/ragged.csv line 3: expected 3 columns, got 2");
}

TEST_F(LoaderCsvTest, RejectsNonNumericToken) {
  const std::string msg = error_of([] { load_csv(kData + "/csv/non_numeric.csv"); });
  EXPECT_CONTAINS(msg, "non_numeric.csv line 3: non-numeric value 'abc' in column 1 (0-based)");
  EXPECT_EQ(msg.find("--header"), std::string::npos);  // the hint is for line 1 only
}

TEST_F(LoaderCsvTest, RejectsPartiallyNumericToken) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/partial_number.csv"); }),
                  "partial_number.csv line 2: non-numeric value '1.5x' in column 1 (0-based)");
  EXPECT_CONTAINS(error_of([this] { load_csv(write("hex.csv", "1,2\n1,0x10\n")); }), "non-numeric value '0x10'");
}

TEST_F(LoaderCsvTest, RejectsNanAndInf) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/nan.csv"); }),
                  "nan.csv line 2: missing value ('nan') in column 2 (0-based)");
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/inf.csv"); }), "inf.csv line 2: non-finite value '-inf'");
}

TEST_F(LoaderCsvTest, RejectsOverflow) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/overflow.csv"); }),
                  "overflow.csv line 3: value '1e999' in column 1 (0-based) overflows a double");
}

TEST_F(LoaderCsvTest, RejectsBlankRecordsAndEmptyFields) {
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/only_commas.csv"); }),
                  "only_commas.csv line 2: record has no values (only spaces/commas)");
  EXPECT_CONTAINS(error_of([] { load_csv(kData + "/csv/empty_field.csv"); }),
                  "empty_field.csv line 2: missing value (an empty field) in column 1 (0-based)");
}

TEST_F(LoaderCsvTest, LabeledDataNeedsAFeatureColumn) {
  const std::string path = write("single.csv", "1\n2\n");
  EXPECT_CONTAINS(error_of([&] { load_csv(path); }), "line 1: labeled data needs a label and at least one feature");
  EXPECT_EQ(load_csv(path, unlabeled()).cols(), 1u);
}

// tests/data/libsvm/small.svm
TEST_F(LoaderLibsvmTest, LoadsSparseRecordsAndSkipsComments) {
  const Dataset d = load_libsvm(kData + "/libsvm/small.svm");
  ASSERT_TRUE(d.is_sparse());
  ASSERT_EQ(d.rows(), 4u);
  ASSERT_EQ(d.cols(), 4u);
  EXPECT_EQ(d.labels(), Vec((Vec(4) << 1, 0, -1, 3).finished()));
  RowMatrix expected(4, 4);
  expected << 0.5, 0, -2, 0, 0, 0, 0, 0, 0, 1.5, 0, 0, 1, 2, 0, 4;
  EXPECT_EQ(RowMatrix(d.sparse()), expected);
  EXPECT_EQ(d.sparse().nonZeros(), 6);
  const Dataset crlf = load_libsvm(kData + "/libsvm/crlf.svm");
  EXPECT_EQ(crlf.cols(), 3u);
  EXPECT_EQ(crlf.labels(), Vec((Vec(2) << 1, -1).finished()));
}

TEST_F(LoaderLibsvmTest, FeatureCountFromOption) {
  LoadOptions options;
  options.libsvm_features = 10;
  EXPECT_EQ(load_libsvm(kData + "/libsvm/small.svm", options).cols(), 10u);
  options.libsvm_features = 3;
  const std::string message = error_of([&] { load_libsvm(kData + "/libsvm/small.svm", options); });
  EXPECT_CONTAINS(message, "small.svm: a record has a feature index above the declared feature count 3");
  // The same words whichever record it is, and whatever its index (the
  // public-shape rule): neighbouring files are refused alike.
  options.libsvm_features = 2;
  const std::string first = error_of([&] { load_libsvm(write("a.svm", "1 3:1\n0 1:1\n0 2:1\n"), options); });
  const std::string last = error_of([&] { load_libsvm(write("a.svm", "0 1:1\n0 2:1\n1 99999999:1\n"), options); });
  EXPECT_EQ(first, last);
  EXPECT_EQ(first.find("line"), std::string::npos) << first;
}

TEST_F(LoaderLibsvmTest, RejectsZeroAndNegativeIndices) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 1:2\n1 0:1 2:3\n")); }),
                  "a.svm line 2: bad feature index '0': indices are 1-based");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "1 -3:1\n")); }),
                  "b.svm line 1: bad feature index '-3': must be a positive integer");
}

TEST_F(LoaderLibsvmTest, RejectsNonIntegerIndex) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 1.5:2\n")); }),
                  "line 1: bad feature index '1.5': must be a positive integer");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "1 x:2\n")); }), "bad feature index 'x'");
}

TEST_F(LoaderLibsvmTest, RejectsNonIncreasingAndDuplicateIndices) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 3:1 2:1\n")); }),
                  "line 1: feature index 2 after index 3: indices must be strictly increasing");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "1 1:1\n-1 2:1 2:5\n")); }),
                  "b.svm line 2: feature index 2 after index 2");
}

TEST_F(LoaderLibsvmTest, RejectsMissingColon) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 1:1 7\n")); }),
                  "a.svm line 1: feature '7' lacks ':' (expected index:value)");
}

TEST_F(LoaderLibsvmTest, RejectsBadLabel) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 1:1\nyes 1:1\n")); }),
                  "a.svm line 2: bad label: non-numeric label 'yes'");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "nan 1:1\n")); }), "non-finite label 'nan'");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("c.svm", "1:1 2:1\n")); }), "non-numeric label '1:1'");
}

TEST_F(LoaderLibsvmTest, RejectsNonFiniteOrBadValue) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "1 1:1 2:inf\n")); }),
                  "a.svm line 1: non-finite value 'inf' of feature 2 (NaN/Inf not allowed)");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "1 1:NaN\n")); }), "non-finite value 'NaN'");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("c.svm", "1 1:1e400\n")); }),
                  "value '1e400' of feature 1 overflows a double");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("d.svm", "1 1:\n")); }), "non-numeric value '' of feature 1");
}

TEST_F(LoaderLibsvmTest, RejectsEmptyFileAndWhitespaceRecords) {
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("a.svm", "# only a comment\n\n")); }),
                  "a.svm: empty file (no records)");
  EXPECT_CONTAINS(error_of([this] { load_libsvm(write("b.svm", "1 1:1\n \t\n")); }),
                  "b.svm line 2: record has no values (only whitespace)");
  EXPECT_CONTAINS(error_of([] { load_libsvm(kData + "/libsvm/missing.svm"); }), "cannot open file");
}

// ---- IDX ----

std::string be32(std::uint32_t v) {
  const char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
                     static_cast<char>(v)};
  return std::string(b, 4);
}

// tests/data/idx/tiny-*: 3 images of 2x3 pixels and labels 7, 0, 9.
void expect_tiny_idx(const Dataset& d) {
  ASSERT_EQ(d.rows(), 3u);
  ASSERT_EQ(d.cols(), 6u);
  RowMatrix bytes(3, 6);
  bytes << 0, 51, 255, 102, 0, 204, 255, 255, 255, 0, 0, 0, 1, 2, 3, 4, 5, 6;
  EXPECT_TRUE(d.dense().isApprox(bytes / 255.0, 1e-15));
  EXPECT_DOUBLE_EQ(d.dense()(0, 1), 0.2);
  EXPECT_EQ(d.labels(), Vec((Vec(3) << 7, 0, 9).finished()));
}

TEST_F(LoaderIdxTest, LoadsPlainAndGzipImagesWithLabels) {
  expect_tiny_idx(load_idx(kData + "/idx/tiny-images-idx3-ubyte", kData + "/idx/tiny-labels-idx1-ubyte"));
  expect_tiny_idx(load_idx(kData + "/idx/tiny-images-idx3-ubyte.gz", kData + "/idx/tiny-labels-idx1-ubyte.gz"));
  EXPECT_FALSE(load_idx(kData + "/idx/tiny-images-idx3-ubyte").has_labels());
}

TEST_F(LoaderIdxTest, Float32AndInt32AreNotScaled) {
  float f[2] = {-1.5f, 0.25f};
  std::uint32_t bits[2];
  std::memcpy(bits, f, sizeof bits);
  const std::string images = write("f-images", be32(0x0D02) + be32(2) + be32(1) + be32(bits[0]) + be32(bits[1]));
  const std::string labels = write("i-labels", be32(0x0C01) + be32(2) + be32(70000) + be32(0xFFFFFFFFu));
  const Dataset d = load_idx(images, labels);
  EXPECT_EQ(d.dense(), RowMatrix((RowMatrix(2, 1) << -1.5, 0.25).finished()));
  EXPECT_EQ(d.labels(), Vec((Vec(2) << 70000, -1).finished()));
}

TEST_F(LoaderIdxTest, RejectsBadMagic) {
  EXPECT_CONTAINS(error_of([] { load_idx(kData + "/csv/small.csv"); }),
                  "small.csv byte offset 0: bad magic 0x312c302e: not an IDX file");
}

TEST_F(LoaderIdxTest, RejectsUnsupportedTypeCode) {
  EXPECT_CONTAINS(error_of([this] { load_idx(write("x", be32(0x0A03) + be32(1) + be32(1) + be32(1) + "1234")); }),
                  "byte offset 2: unsupported IDX type code 0x0a");
}

TEST_F(LoaderIdxTest, RejectsZeroDimensions) {
  EXPECT_CONTAINS(error_of([this] { load_idx(write("x", be32(0x0803) + be32(2) + be32(0) + be32(2))); }),
                  "x byte offset 8: dimension 1 is 0");
  EXPECT_CONTAINS(error_of([this] { load_idx(write("y", be32(0x0800))); }),
                  "byte offset 3: IDX file with 0 dimensions");
}

TEST_F(LoaderIdxTest, RejectsTruncatedFile) {
  const std::string header = be32(0x0803) + be32(2) + be32(2) + be32(2);
  EXPECT_CONTAINS(error_of([&] { load_idx(write("x", header + "1234567")); }),
                  "x byte offset 23: truncated: the header promises 8 data bytes after offset 16, the file has 7");
  EXPECT_CONTAINS(error_of([&] { load_idx(write("y", header.substr(0, 10))); }),
                  "byte offset 8: truncated header: missing size of dimension 1");
  EXPECT_CONTAINS(error_of([&] { load_idx(write("z", "")); }), "file too short for the 4-byte IDX magic");
  EXPECT_CONTAINS(error_of([&] { load_idx(write("w", header + "123456789")); }),
                  "byte offset 24: unexpected data after the 8 bytes the header describes");
}

TEST_F(LoaderIdxTest, RejectsLabelCountMismatch) {
  const std::string labels = write("labels", be32(0x0801) + be32(2) + "\x01\x02");
  EXPECT_CONTAINS(
      error_of([&] { load_idx(kData + "/idx/tiny-images-idx3-ubyte", labels); }),
      "labels byte offset 4: labels file has 2 labels but " + kData + "/idx/tiny-images-idx3-ubyte has 3 images");
  EXPECT_CONTAINS(
      error_of([] { load_idx(kData + "/idx/tiny-labels-idx1-ubyte", kData + "/idx/tiny-images-idx3-ubyte"); }),
      "a labels file has 1 dimension");
}

TEST_F(LoaderIdxTest, RejectsCorruptedAndTruncatedGzip) {
  EXPECT_CONTAINS(error_of([] { load_idx(kData + "/idx/corrupt-images-idx3-ubyte.gz"); }),
                  "corrupt-images-idx3-ubyte.gz byte offset 0: corrupted gzip stream (zlib: incorrect data check)");
  EXPECT_CONTAINS(
      error_of([] { load_idx(kData + "/idx/truncated-gzip-images-idx3-ubyte.gz"); }),
      "truncated-gzip-images-idx3-ubyte.gz byte offset 141: truncated gzip stream (unexpected end of file)");
}

TEST_F(LoaderIdxTest, RejectsMissingFile) {
  EXPECT_CONTAINS(error_of([] { load_idx(kData + "/idx/tiny-images-idx3-ubyte", kData + "/idx/nope"); }),
                  "IDX file " + kData + "/idx/nope: cannot open file: No such file or directory");
}

// The t10k split of Fashion-MNIST: 1000 images per class, and the pixel sum
// 573469082 (of the raw bytes) computed independently with Python's gzip module.
TEST(LoaderFashionMnistTest, LoadsTestSplit) {
  const std::string dir = "/usr/share/datasets/fashion-mnist/";
  const std::string images = dir + "t10k-images-idx3-ubyte.gz";
  const std::string labels = dir + "t10k-labels-idx1-ubyte.gz";
  ASSERT_TRUE(fs::exists(images) && fs::exists(labels))
      << images << " is missing: install the package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)";
  const Dataset d = load_idx(images, labels);
  ASSERT_EQ(d.rows(), 10000u);
  ASSERT_EQ(d.cols(), 784u);
  EXPECT_EQ(d.dense().minCoeff(), 0.0);
  EXPECT_EQ(d.dense().maxCoeff(), 1.0);
  EXPECT_NEAR(d.dense().sum() * 255.0, 573469082.0, 1e-3);
  EXPECT_NEAR(d.dense().mean(), 0.2868493, 1e-7);
  std::vector<int> per_class(10, 0);
  for (Index i = 0; i < d.rows(); ++i) {
    const double y = d.label(i);
    ASSERT_TRUE(y >= 0 && y <= 9 && y == static_cast<int>(y)) << "label " << y << " at " << i;
    ++per_class[static_cast<int>(y)];
  }
  EXPECT_EQ(per_class, std::vector<int>(10, 1000));
  EXPECT_EQ(d.label(0), 9.0);  // first labels: 9 2 1 1 6
  EXPECT_EQ(d.label(4), 6.0);
  EXPECT_DOUBLE_EQ(d.dense().row(0).sum() * 255.0, 33456.0);
}

}  // namespace
}  // namespace dpsosp
