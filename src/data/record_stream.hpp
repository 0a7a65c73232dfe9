// Internal: a record file read once, front to back, with read-ahead on a
// second thread, so that reading and computing overlap and a bounded number
// of records sit in memory whatever the file's size. Streamed runs (the
// oracles) read through one; RecordFile::scan through a BlockStream.
//
//  * RingStream (dense records): one ring of rows, allocated once (32 MiB:
//    it stays in a large cache), which the reader thread fills, straight from the file
//    (pread) where the values are float64, as far ahead as the rows the
//    consumer is done with allow. A batch is read in place, its rows where the
//    ring holds them (no copy, no allocation a batch); one larger than half
//    the ring is copied out as the ring fills.
//  * BlockStream (CSR records, and scans): whole blocks of about kBlockBytes
//    of records, kAhead of them read ahead; a batch inside one block is read
//    in place, one spanning blocks is copied.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "data/record_format.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/record_file.hpp"

namespace dpsosp::detail {

class RecordStream {
 public:
  virtual ~RecordStream() = default;
  /// Records position() .. position() + count - 1 of the file: records
  /// `rows` of `data`, valid until the next call of next (skip keeps them).
  /// Throws Error past the last
  /// record or when the file cannot be read (with check_finite, at a
  /// non-finite value).
  struct Rows {
    Dataset data;
    IndexList rows;
  };
  virtual Rows next(Index count) = 0;
  /// Passes over the next count records.
  virtual void skip(Index count) = 0;
  /// Back to record 0, for another pass over the file (a run of several
  /// epochs); the rows given out before are no longer valid.
  virtual void rewind() = 0;
  Index position() const { return position_; }
  const RecordFileInfo& info() const { return info_; }

 protected:
  RecordStream(const RecordFileInfo& info, const char* who, std::string path)
      : info_(info), who_(who), path_(std::move(path)) {}
  void check_count(Index count, const char* what) const;
  [[noreturn]] void ended() const;
  RecordFileInfo info_;
  const char* who_;
  std::string path_;
  Index position_ = 0;
};

/// The bytes of a RingStream's ring (32 MiB; tests make it small to wrap it
/// often). Only memory and speed depend on it.
std::atomic<std::size_t>& ring_stream_bytes();

/// The stream for a file (ring for dense records, blocks for CSR), at record 0.
std::unique_ptr<RecordStream> open_record_stream(const std::string& path, const RecordFileInfo& info, const char* who,
                                                 bool check_finite = false);
/// The file opened for reading (posix_fadvise SEQUENTIAL); throws Error.
int open_record_file(const std::string& path, const char* who);

class BlockStream final : public RecordStream {
 public:
  static constexpr std::size_t kBlockBytes = std::size_t{4} << 20;
  static constexpr std::size_t kAhead = 3;
  /// The bytes of records a block holds (kBlockBytes; tests make it small
  /// to read many blocks). Only memory and speed depend on it.
  static std::atomic<std::size_t>& block_bytes();

  BlockStream(const std::string& path, const RecordFileInfo& info, const char* who, bool check_finite = false);
  ~BlockStream() override;
  BlockStream(const BlockStream&) = delete;
  BlockStream& operator=(const BlockStream&) = delete;
  Rows next(Index count) override;
  void skip(Index count) override;
  void rewind() override;
  /// The rest of the block in use, or the next block; no rows at the end.
  Rows next_block();

 private:
  void start_reader();
  void stop_reader();
  void read_ahead();  // the second thread's loop
  bool pull();        // the next block into current_; false at the end

  int fd_;
  std::size_t block_bytes_;
  std::mutex mutex_;  // guards what the reader thread shares: ready_, stop_, done_, error_
  std::condition_variable changed_;
  std::deque<Dataset> ready_;
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  bool check_finite_;
  BlockReader reader_state_;
  Dataset current_;  // the consumer's block, and the first record it holds
  Index current_first_ = 0;
  std::thread reader_;  // started last: everything above exists when it runs
};

}  // namespace dpsosp::detail
