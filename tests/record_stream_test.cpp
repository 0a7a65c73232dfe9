// The record stream (src/data/record_stream.hpp): any sequence of reads and
// skips gives the file's records, in place in a block or copied across
// blocks; a streamed run over many small blocks keeps a loaded run's bits.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "data/record_stream.hpp"
#include "dpsosp/dpsosp.hpp"
#include "run_cases.hpp"

namespace dpsosp {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "record_stream_test_" + std::to_string(::getpid()) + "_" + name;
}

// For its lifetime, blocks (CSR) and rings (dense) of about `bytes` bytes of records.
class SmallBlocks {
 public:
  explicit SmallBlocks(std::size_t bytes)
      : block_(detail::BlockStream::block_bytes().exchange(bytes)),
        ring_(detail::ring_stream_bytes().exchange(bytes)) {}
  ~SmallBlocks() {
    detail::BlockStream::block_bytes().store(block_);
    detail::ring_stream_bytes().store(ring_);
  }

 private:
  std::size_t block_, ring_;
};

TEST(RecordStream, ReadsAndSkipsGiveTheFilesRecordsAcrossBlocks) {
  SmallBlocks small(600);  // blocks of 7 records (the file's); rings of 7 rows
  for (bool sparse : {false, true}) {
    for (RecordValueType type : {RecordValueType::kFloat64, RecordValueType::kFloat32}) {
      SCOPED_TRACE(std::string(sparse ? "sparse " : "dense ") + record_value_type_name(type));
      const std::string path = temp_path("stream.dpsr");
      RecordWriteOptions w;
      w.values = type;
      w.block_records = 7;
      write_record_file(testing::make_test_data(500, 9, testing::Labels::kReal, sparse, 3), path, w);
      const Dataset whole = load_record_file(path);
      const auto opened = detail::open_record_stream(path, read_record_file_info(path), "test");
      detail::RecordStream& stream = *opened;
      GaussianStream g(4, StreamPurpose::kTest, 0);
      Index at = 0;
      bool read = true;
      while (at < whole.rows()) {
        // Mostly short batches, now and then one above half the ring (copied out).
        const Index most = g.uniform() < 0.1 ? 60 : 20;
        const Index count = std::min<Index>(whole.rows() - at, static_cast<Index>(most * g.uniform()));
        if (read) {
          const detail::RecordStream::Rows rows = stream.next(count);
          ASSERT_EQ(rows.rows.size(), count);
          // The rows stay valid until the next read, skips between included
          // (a run's shares skip the rest of each batch): given the reader
          // thread time to read ahead, they still hold the records.
          const Index skipped = std::min<Index>(whole.rows() - at - count, static_cast<Index>(3 * g.uniform()));
          stream.skip(skipped);
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          for (Index k = 0; k < count; ++k) {
            Vec u(9), v(9);
            whole.row_dense(at + k, u);
            rows.data.row_dense(rows.rows[k], v);
            ASSERT_EQ(std::memcmp(u.data(), v.data(), sizeof(double) * 9), 0) << "record " << at + k;
            ASSERT_EQ(whole.label(at + k), rows.data.label(rows.rows[k]));
          }
          at += skipped;
        } else {
          stream.skip(count);
        }
        at += count;
        read = !read;
        EXPECT_EQ(stream.position(), at);
      }
      std::remove(path.c_str());
    }
  }
}

TEST(RecordStream, AStreamedRunOverSmallBlocksKeepsTheLoadedBits) {
  SmallBlocks small(3000);  // batches span blocks, and many fall inside one
  const std::string path = temp_path("run.dpsr");
  for (bool sparse : {false, true}) {
    RecordWriteOptions w;
    w.block_records = 16;
    write_record_file(testing::run_data(sparse), path, w);
    const Dataset loaded = load_record_file(path);
    const auto model = make_model("logistic", loaded.cols());
    const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
    for (const std::string& algo : testing::every_algorithm()) {
      SCOPED_TRACE(algo + (sparse ? " sparse" : " dense"));
      RunOptions o = testing::short_run(algo, 0);
      o.sample_order = SampleOrder::kFile;
      const Summary want = minimize(*model, loaded, x0, o);
      const Summary got = minimize(*model, RecordFile(path), x0, o);
      EXPECT_TRUE(testing::same_bits(got.x, want.x));
      EXPECT_EQ(got.steps, want.steps);
    }
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dpsosp
