// Internal: a record file read once, front to back, with read-ahead: a second
// thread reads the file in 4 MiB chunks (pread, posix_fadvise SEQUENTIAL) up
// to kAhead chunks ahead of the records decoded, so reading and computing
// overlap and at most (kAhead + 1) chunks plus the batch in use sit in
// memory, whatever the file's size. Streamed runs (the oracles) and
// RecordFile::scan read through it.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/record_format.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/record_file.hpp"

namespace dpsosp::detail {

class RecordStream final : public ByteSource {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
  static constexpr std::size_t kAhead = 4;

  /// Opens path, whose header `info` is (checked by the caller), at record 0.
  RecordStream(const std::string& path, const RecordFileInfo& info, const char* who);
  ~RecordStream() override;
  RecordStream(const RecordStream&) = delete;
  RecordStream& operator=(const RecordStream&) = delete;

  const RecordFileInfo& info() const { return info_; }
  /// Records position() .. position() + count - 1 of the file, as rows 0..
  /// of a dataset (dense or CSR as the file is); check_finite refuses NaN and
  /// Inf. Throws Error past the last record or when the file cannot be read.
  Dataset next(Index count, bool check_finite = false);
  /// Passes over the next count records.
  void skip(Index count);
  Index position() const { return position_; }
  /// The ByteSource of the decoder: the next n bytes of the file's records.
  const unsigned char* take(std::size_t n) override;

 private:
  void read_ahead();  // the second thread's loop
  void next_chunk();  // the consumer's: the next chunk read, in order
  void check_count(Index count, const char* what) const;

  RecordFileInfo info_;
  const char* who_;
  std::string path_;
  int fd_ = -1;
  RecordDecoder decoder_;
  Index position_ = 0;
  // Shared with the reader thread (under mutex_).
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<unsigned char>> full_;  // chunks read, oldest first
  std::vector<std::vector<unsigned char>> spare_;  // chunks to read into
  std::size_t chunks_made_ = 0;
  bool stop_ = false, done_ = false;
  std::string error_;
  // The consumer's own.
  std::vector<unsigned char> current_;
  std::size_t at_ = 0;
  std::vector<unsigned char> scratch_;  // bytes that straddle two chunks
  std::thread reader_;  // started last: everything above exists when it runs
};

}  // namespace dpsosp::detail
