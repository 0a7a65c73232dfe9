// dpsosp: record files read front to back with read-ahead (record_stream.hpp):
// the shared part and the BlockStream.
#include "data/record_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp::detail {

std::unique_ptr<RecordStream> make_ring_stream(const std::string& path, const RecordFileInfo& info, const char* who,
                                               bool check_finite);  // ring_stream.cpp

int open_record_file(const std::string& path, const char* who) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(std::string(who) + " " + path + ": cannot open file: " + std::strerror(errno));
  // The reads are sequential: the kernel reads further ahead itself.
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return fd;
}

std::unique_ptr<RecordStream> open_record_stream(const std::string& path, const RecordFileInfo& info, const char* who,
                                                 bool check_finite) {
  if (!info.sparse) return make_ring_stream(path, info, who, check_finite);
  return std::make_unique<BlockStream>(path, info, who, check_finite);
}

void RecordStream::check_count(Index count, const char* what) const {
  if (count > info_.rows - position_)
    throw Error(std::string(who_) + " " + path_ + ": asked to " + what + " " + std::to_string(count) +
                " records at record " + std::to_string(position_) + " of " + std::to_string(info_.rows));
}

void RecordStream::ended() const { throw Error(std::string(who_) + " " + path_ + ": no more records to read"); }

std::atomic<std::size_t>& BlockStream::block_bytes() {
  static std::atomic<std::size_t> bytes{kBlockBytes};
  return bytes;
}

BlockStream::BlockStream(const std::string& path, const RecordFileInfo& info, const char* who, bool check_finite)
    : RecordStream(info, who, path),
      fd_(open_record_file(path, who)),
      block_bytes_(block_bytes().load()),
      check_finite_(check_finite),
      reader_state_(fd_, info, who, path, check_finite) {
  start_reader();
}

BlockStream::~BlockStream() {
  stop_reader();
  ::close(fd_);
}

void BlockStream::start_reader() {
  reader_ = std::thread([this] { read_ahead(); });
}

void BlockStream::stop_reader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (reader_.joinable()) reader_.join();
}

void BlockStream::rewind() {
  stop_reader();
  ready_.clear();
  stop_ = done_ = false;
  error_ = nullptr;
  reader_state_ = BlockReader(fd_, info_, who_, path_, check_finite_);
  current_ = Dataset();
  current_first_ = 0;
  position_ = 0;
  start_reader();
}

void BlockStream::read_ahead() {
  const std::uint64_t per = info_.sparse ? std::max<std::uint64_t>(1, info_.payload_bytes / info_.rows)
                                         : std::max<std::uint64_t>(1, dense_record_bytes(info_));
  const Index most = std::max<Index>(1, block_bytes_ / per);
  while (!reader_state_.done()) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < kAhead; });
      if (stop_) return;
    }
    Dataset block;
    try {
      block = reader_state_.read(reader_state_.records_in_blocks_up_to(most));
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      done_ = true;
      changed_.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    ready_.push_back(std::move(block));
    changed_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
  changed_.notify_all();
}

bool BlockStream::pull() {
  current_first_ += current_.rows();
  current_ = Dataset();  // freed before waiting: at most kAhead + 1 blocks
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || done_; });
  if (ready_.empty()) {
    if (error_) std::rethrow_exception(error_);
    return false;
  }
  current_ = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return true;
}

RecordStream::Rows BlockStream::next(Index count) {
  check_count(count, "read");
  while (count > 0 && position_ >= current_first_ + current_.rows()) {
    if (!pull()) ended();
  }
  const Index end = position_ + count;
  Rows out;
  if (count == 0 || end <= current_first_ + current_.rows()) {  // in place
    out.data = current_;
    out.rows.resize(count);
    std::iota(out.rows.begin(), out.rows.end(), position_ - current_first_);
    position_ = end;
    return out;
  }
  std::vector<Dataset> parts;  // the rows span blocks: copied into one dataset
  while (position_ < end) {
    if (position_ >= current_first_ + current_.rows() && !pull()) ended();
    const Index from = position_ - current_first_;
    const Index take = std::min(end - position_, current_.rows() - from);
    parts.push_back(copy_rows(current_, from, take));
    position_ += take;
  }
  out.data = concatenate_rows(parts);
  out.rows.resize(count);
  std::iota(out.rows.begin(), out.rows.end(), Index{0});
  return out;
}

void BlockStream::skip(Index count) {
  check_count(count, "skip");
  const Index end = position_ + count;
  while (end > current_first_ + current_.rows()) {
    if (!pull()) ended();
  }
  position_ = end;
}

RecordStream::Rows BlockStream::next_block() {
  Rows out;
  if (position_ >= current_first_ + current_.rows() && !pull()) return out;
  const Index from = position_ - current_first_;
  out.data = from == 0 ? current_ : copy_rows(current_, from, current_.rows() - from);
  out.rows.resize(out.data.rows());
  std::iota(out.rows.begin(), out.rows.end(), Index{0});
  position_ = current_first_ + current_.rows();
  return out;
}

}  // namespace dpsosp::detail
