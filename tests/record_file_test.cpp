// Record files (record_file.hpp): what is written is what is read, whole or
// streamed, in record order or a shuffle seed's; the header is checked
// against the file; bad bytes are refused with a message naming the record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_errors.hpp"

namespace dpsosp {
namespace {

using testing::error_of;
using testing::Labels;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "record_file_test_" + std::to_string(::getpid()) + "_" + name;
}

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Record i of a against record j of b: label and features, bit for bit.
void expect_same_record(const Dataset& a, Index i, const Dataset& b, Index j) {
  ASSERT_EQ(a.cols(), b.cols());
  if (a.has_labels()) EXPECT_EQ(a.label(i), b.label(j));
  Vec u(static_cast<Eigen::Index>(a.cols())), v(u.size());
  a.row_dense(i, u);
  b.row_dense(j, v);
  EXPECT_EQ(std::memcmp(u.data(), v.data(), sizeof(double) * u.size()), 0) << "record " << i;
}

TEST(RecordFile, WritesAndReadsBackEveryKind) {
  for (bool sparse : {false, true}) {
    for (Labels labels : {Labels::kBinary, Labels::kNone}) {
      SCOPED_TRACE(std::string(sparse ? "sparse" : "dense") + (labels == Labels::kNone ? " unlabeled" : " labeled"));
      const Dataset data = testing::make_test_data(300, 7, labels, sparse, 5);
      const std::string path = temp_path("kinds.dpsr");
      RecordWriteOptions w;
      w.block_records = 64;  // blocks of 64 records, the last one of 44
      write_record_file(data, path, w);
      const RecordFileInfo info = read_record_file_info(path);
      EXPECT_EQ(info.rows, 300u);
      EXPECT_EQ(info.cols, 7u);
      EXPECT_EQ(info.sparse, sparse);
      EXPECT_EQ(info.labeled, labels != Labels::kNone);
      EXPECT_FALSE(info.shuffle_seed.has_value());
      if (sparse) EXPECT_EQ(info.nonzeros, static_cast<Index>(data.sparse().nonZeros()));
      const Dataset back = load_record_file(path);
      ASSERT_EQ(back.rows(), data.rows());
      EXPECT_EQ(back.is_sparse(), sparse);
      for (Index i = 0; i < data.rows(); ++i) expect_same_record(data, i, back, i);
      EXPECT_EQ(info.block_records, 64u);
      // Scanned: the same records, and the same fingerprint as whole.
      Index seen = 0;
      RecordFile file(path);
      file.scan([&](const Dataset& chunk, Index first) {
        EXPECT_EQ(first, seen);
        for (Index k = 0; k < chunk.rows(); ++k) expect_same_record(data, first + k, chunk, k);
        seen += chunk.rows();
      });
      EXPECT_EQ(seen, 300u);
      EXPECT_EQ(record_fingerprint(back), record_fingerprint(load_dataset(path, FileFormat::kRecords)));
      std::remove(path.c_str());
    }
  }
}

TEST(RecordFile, ShuffledFileHoldsTheSeedsSampleOrder) {
  const Dataset data = testing::make_test_data(257, 4, Labels::kReal, false, 6);
  const std::string path = temp_path("shuffled.dpsr");
  RecordWriteOptions o;
  o.shuffle_seed = 99;
  write_record_file(data, path, o);
  EXPECT_EQ(read_record_file_info(path).shuffle_seed.value_or(0), 99u);
  const Dataset back = load_record_file(path);
  const IndexList order = SamplePool(data.rows(), 99).draw(data.rows());
  for (Index k = 0; k < order.size(); ++k) expect_same_record(data, order[k], back, k);
  std::remove(path.c_str());
}

TEST(RecordFile, Float32RoundsToNearestAndRefusesWhatDoesNotFit) {
  RowMatrix x(2, 2);
  x << 0.1, -3.0, 1e-50, 2.5;
  const std::string path = temp_path("f32.dpsr");
  RecordWriteOptions o;
  o.values = RecordValueType::kFloat32;
  write_record_file(Dataset(x, Vec()), path, o);
  const Dataset back = load_record_file(path);
  EXPECT_EQ(back.dense()(0, 0), static_cast<double>(0.1f));
  EXPECT_EQ(back.dense()(1, 0), static_cast<double>(static_cast<float>(1e-50)));
  EXPECT_EQ(read_record_file_info(path).payload_bytes, 4u * 4u);
  x(1, 1) = 1e300;
  EXPECT_CONTAINS(error_of([&] { write_record_file(Dataset(x, Vec()), path, o); }), "record 1, feature 1 = ");
  EXPECT_EQ(load_record_file(path).dense()(1, 1), 2.5) << "a failed write leaves the old file";
  std::remove(path.c_str());
}

TEST(RecordFile, BadFilesAreRefusedNamingTheProblem) {
  const Dataset data = testing::make_test_data(10, 3, Labels::kBinary, false, 7);
  const std::string path = temp_path("bad.dpsr");
  write_record_file(data, path);
  const std::vector<char> good = bytes_of(path);
  std::vector<char> b = good;
  b[0] = 'X';
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "not a dpsosp record file");
  b = good;
  b.pop_back();
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { RecordFile f(path); }), "truncated or padded");
  b = good;
  b.push_back(0);
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "truncated or padded");
  b = good;
  b[16] = 11;  // n = 11 records: the sizes no longer fit the payload
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "its sizes need");
  // A NaN in record 4's feature 2 (one block: 10 labels, then the rows): refused, naming it.
  b = good;
  const double nan = std::nan("");
  std::memcpy(b.data() + 128 + 10 * 8 + (4 * 3 + 2) * 8, &nan, 8);
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "record 4 (0-based), feature 2 is nan");
  EXPECT_CONTAINS(error_of([&] { RecordFile(path).scan([](const Dataset&, Index) {}); }), "record 4 (0-based)");
  EXPECT_CONTAINS(error_of([&] { load_record_file(temp_path("missing.dpsr")); }), "cannot open file");
  std::remove(path.c_str());
}

TEST(RecordFile, SparseIndicesMustIncreaseAndFit) {
  std::vector<Eigen::Triplet<double, std::int64_t>> t = {{0, 1, 1.0}, {0, 3, 2.0}, {1, 0, 3.0}};
  SparseRowMatrix s(2, 4);
  s.setFromTriplets(t.begin(), t.end());
  const std::string path = temp_path("sparse.dpsr");
  write_record_file(Dataset(s, Vec()), path);
  std::vector<char> b = bytes_of(path);
  // One block: counts [2][1], indices [1][3][0], values; make record 0's second index 1.
  const std::uint32_t one = 1, nine = 9;
  std::memcpy(b.data() + 128 + 2 * 4 + 4, &one, 4);
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "record 0 (0-based), feature index 1 after index 1");
  std::memcpy(b.data() + 128 + 2 * 4 + 4, &nine, 4);
  write_bytes(path, b);
  EXPECT_CONTAINS(error_of([&] { load_record_file(path); }), "feature index 9: out of range for 4 features");
  std::remove(path.c_str());
}

TEST(RecordFile, ScanNoticesAFileChangedSinceItWasOpened) {
  const Dataset data = testing::make_test_data(20, 3, Labels::kBinary, false, 8);
  const std::string path = temp_path("changed.dpsr");
  write_record_file(data, path);
  RecordFile file(path);
  write_record_file(testing::make_test_data(20, 3, Labels::kBinary, false, 9), path);  // a new inode
  EXPECT_CONTAINS(error_of([&] { file.check_unchanged("test"); }), "changed since it was opened");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dpsosp
