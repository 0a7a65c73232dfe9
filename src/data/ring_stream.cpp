// dpsosp: dense records streamed through a ring of rows (record_stream.hpp).
//
// The reader thread reads the file's records, piece by piece (at most a file
// block's worth, about 1 MiB), into ring row (record mod R); it may write a
// row once the consumer is done with the record it held. The consumer's
// batch [p, p + b) is then rows (p + k) mod R of one Dataset that lives as
// long as the stream: no allocation and no copy a batch. What the two threads
// share is guarded by one mutex: written_ (records read so far) and released_
// (records the consumer is done with); a row's bytes are written before
// written_ passes it and read after, so the mutex orders them.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <numeric>

#include "data/record_stream.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::detail {
namespace {

class RingStream final : public RecordStream {
 public:
  static constexpr Index kPieceBytes = Index{1} << 20;

  RingStream(const std::string& path, const RecordFileInfo& info, const char* who, bool check_finite)
      : RecordStream(info, who, path), fd_(open_record_file(path, who)), check_finite_(check_finite) {
    const std::size_t row_bytes = static_cast<std::size_t>(info.cols) * 8 + (info.labeled ? 8 : 0);
    capacity_ = std::max<Index>(2, ring_stream_bytes().load() / row_bytes);
    RowMatrix rows = allocate_records(capacity_, info.cols);
    Vec labels = info.labeled ? allocate_labels(capacity_) : Vec();
    rows_ = rows.data();
    labels_ = labels.data();
    ring_ = Dataset(std::move(rows), std::move(labels));  // the buffers move, not their addresses
    reader_ = std::thread([this] { read_ahead(); });
  }
  ~RingStream() override {
    stop_reader();
    ::close(fd_);
  }
  RingStream(const RingStream&) = delete;
  RingStream& operator=(const RingStream&) = delete;

  Rows next(Index count) override {
    check_count(count, "read");
    release(position_);  // the previous batch is done
    Rows out;
    out.rows.resize(count);
    if (count <= capacity_ / 2) {  // in place: its rows are held until the next call of next
      wait_written(position_ + count);
      for (Index k = 0; k < count; ++k) out.rows[k] = (position_ + k) % capacity_;
      out.data = ring_;
      held_ = position_;
      position_ += count;
      return out;
    }
    // A batch larger than half the ring: copied out as the ring fills.
    const Index d = info_.cols;
    RowMatrix m = allocate_records(count, d);
    Vec y = info_.labeled ? allocate_labels(count) : Vec();
    for (Index copied = 0; copied < count;) {
      const Index have = wait_written(position_ + 1);
      const Index slot = position_ % capacity_;
      const Index c = std::min({have - position_, count - copied, capacity_ - slot});
      std::memcpy(m.row(static_cast<Eigen::Index>(copied)).data(), rows_ + slot * d, c * d * sizeof(double));
      if (info_.labeled) std::memcpy(y.data() + copied, labels_ + slot, c * sizeof(double));
      copied += c;
      position_ += c;
      release(position_);
    }
    std::iota(out.rows.begin(), out.rows.end(), Index{0});
    out.data = Dataset(std::move(m), std::move(y));
    held_ = position_;  // a copy: no ring rows held
    return out;
  }

  void skip(Index count) override {
    check_count(count, "skip");
    position_ += count;
    release(std::min(position_, held_));  // the rows of the last batch stay held
  }

  void rewind() override {
    stop_reader();
    stop_ = false;
    error_ = nullptr;
    written_ = released_ = held_ = position_ = 0;
    reader_ = std::thread([this] { read_ahead(); });
  }

 private:
  void stop_reader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    if (reader_.joinable()) reader_.join();
  }
  void release(Index upto) {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = std::max(released_, upto);
    changed_.notify_all();
  }
  // Waits until records before `upto` are read; returns how many are.
  Index wait_written(Index upto) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return written_ >= upto || error_; });
    if (written_ < upto) std::rethrow_exception(error_);
    return written_;
  }

  void pread_all(void* to, std::size_t bytes, std::uint64_t at) const {
    auto* p = static_cast<char*>(to);
    for (std::size_t got = 0; got < bytes;) {
      const ssize_t r = ::pread(fd_, p + got, bytes - got, static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0)
        throw Error(std::string(who_) + " " + path_ + ": " +
                    (r < 0 ? std::string("read error: ") + std::strerror(errno)
                           : std::string("the file ends early (truncated while being read?)")));
      got += static_cast<std::size_t>(r);
    }
  }

  // Records [at, at + c) of the file, all in one file block, into ring rows slot..
  void read_piece(Index at, Index c, Index slot) {
    const Index b = info_.block_records, d = info_.cols;
    const Index block = at / b, in_block = at % b, block_len = std::min(b, info_.rows - block * b);
    const std::size_t vb = value_bytes(info_.values);
    const std::uint64_t block_at =
        kRecordHeaderBytes + static_cast<std::uint64_t>(block) * b * dense_record_bytes(info_);
    const std::uint64_t labels_bytes = info_.labeled ? 8 * block_len : 0;
    if (info_.labeled) pread_all(labels_ + slot, c * 8, block_at + 8 * in_block);
    double* rows = rows_ + slot * d;
    const std::uint64_t features_at = block_at + labels_bytes + static_cast<std::uint64_t>(in_block) * d * vb;
    if (vb == 8) {
      pread_all(rows, c * d * 8, features_at);
    } else {
      raw_.resize(c * d * 4);
      pread_all(raw_.data(), raw_.size(), features_at);
      for (Index k = 0; k < c * d; ++k) {
        float f;
        std::memcpy(&f, raw_.data() + 4 * k, 4);
        rows[k] = static_cast<double>(f);
      }
    }
    if (!check_finite_) return;
    if (all_finite(rows, static_cast<std::size_t>(c * d)) && (!info_.labeled || all_finite(labels_ + slot, c))) return;
    for (Index k = 0; k < c; ++k) {
      const auto bad = [&](const std::string& what, double v) {
        throw Error(std::string(who_) + " " + path_ + ": record " + std::to_string(at + k) + " (0-based), " + what +
                    " is " + (std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")) + "; NaN and Inf are not allowed");
      };
      if (info_.labeled && !std::isfinite(labels_[slot + k])) bad("its label", labels_[slot + k]);
      for (Index j = 0; j < d; ++j)
        if (!std::isfinite(rows[k * d + j])) bad("feature " + std::to_string(j), rows[k * d + j]);
    }
  }

  void read_ahead() {
    const Index piece = std::max<Index>(1, kPieceBytes / std::max<std::uint64_t>(1, dense_record_bytes(info_)));
    Index at = 0;
    try {
      while (at < info_.rows) {
        Index room = 0;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [&] { return stop_ || at < released_ + capacity_; });
          if (stop_) return;
          if (released_ > at) {  // records nobody needs: not read
            at = released_;
            written_ = std::max(written_, at);
            if (at >= info_.rows) break;
          }
          room = released_ + capacity_ - at;
        }
        const Index slot = at % capacity_;
        const Index b = info_.block_records;
        const Index c = std::min({room, capacity_ - slot, piece, b - at % b, info_.rows - at});
        read_piece(at, c, slot);
        at += c;
        std::lock_guard<std::mutex> lock(mutex_);
        written_ = at;
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
    }
  }

  int fd_;
  bool check_finite_;
  Index capacity_ = 0;
  Dataset ring_;
  double* rows_ = nullptr;  // ring_'s arrays, which the reader thread writes
  double* labels_ = nullptr;
  std::vector<unsigned char> raw_;  // the reader's: float32 values before conversion
  std::mutex mutex_;
  std::condition_variable changed_;
  Index written_ = 0, released_ = 0;
  Index held_ = 0;  // the consumer's: records from here on may be in the Rows last returned
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread reader_;  // started last
};

}  // namespace

std::atomic<std::size_t>& ring_stream_bytes() {
  static std::atomic<std::size_t> bytes{std::size_t{32} << 20};
  return bytes;
}

std::unique_ptr<RecordStream> make_ring_stream(const std::string& path, const RecordFileInfo& info, const char* who,
                                               bool check_finite) {
  return std::make_unique<RingStream>(path, info, who, check_finite);
}

}  // namespace dpsosp::detail
