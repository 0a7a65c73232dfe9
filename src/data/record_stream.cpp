// dpsosp: a record file read front to back with read-ahead (record_stream.hpp).
#include "data/record_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "dpsosp/error.hpp"

namespace dpsosp::detail {

RecordStream::RecordStream(const std::string& path, const RecordFileInfo& info, const char* who)
    : info_(info), who_(who), path_(path), decoder_(info, who, path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(std::string(who) + ": " + path + ": cannot open file: " + std::strerror(errno));
  // Tell the kernel the reads are sequential: it reads further ahead itself.
  (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  reader_ = std::thread([this] { read_ahead(); });
}

RecordStream::~RecordStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) ::close(fd_);
}

void RecordStream::read_ahead() {
  std::uint64_t offset = kRecordHeaderBytes;
  const std::uint64_t end = kRecordHeaderBytes + info_.payload_bytes;
  while (offset < end) {
    std::vector<unsigned char> chunk;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !spare_.empty() || chunks_made_ < kAhead + 1; });
      if (stop_) return;
      if (!spare_.empty()) {
        chunk = std::move(spare_.back());
        spare_.pop_back();
      } else {
        ++chunks_made_;
      }
    }
    const auto bytes = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, end - offset));
    chunk.resize(bytes);
    std::size_t got = 0;
    std::string error;
    while (got < bytes) {
      const ssize_t r = ::pread(fd_, chunk.data() + got, bytes - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        error = std::string("read error at byte ") + std::to_string(offset + got) + ": " + std::strerror(errno);
        break;
      }
      if (r == 0) {
        error = "the file ends at byte " + std::to_string(offset + got) + ", its header promises " +
                std::to_string(end) + " (truncated while being read?)";
        break;
      }
      got += static_cast<std::size_t>(r);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error.empty()) {
      error_ = error;
      done_ = true;
      changed_.notify_all();
      return;
    }
    full_.push_back(std::move(chunk));
    offset += bytes;
    changed_.notify_all();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = true;
  changed_.notify_all();
}

void RecordStream::next_chunk() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!current_.empty() || current_.capacity() > 0) spare_.push_back(std::move(current_));
  changed_.notify_all();
  changed_.wait(lock, [&] { return !full_.empty() || done_; });
  if (full_.empty()) {
    throw Error(std::string(who_) + ": " + path_ + ": " +
                (error_.empty() ? std::string("no more records to read") : error_));
  }
  current_ = std::move(full_.front());
  full_.pop_front();
  at_ = 0;
}

const unsigned char* RecordStream::take(std::size_t n) {
  if (n <= current_.size() - at_) {
    const unsigned char* p = current_.data() + at_;
    at_ += n;
    return p;
  }
  // The bytes straddle chunks: gather them.
  scratch_.resize(n);
  std::size_t have = current_.size() - at_;
  if (have > 0) std::memcpy(scratch_.data(), current_.data() + at_, have);
  at_ = current_.size();
  while (have < n) {
    next_chunk();
    const std::size_t m = std::min(n - have, current_.size());
    std::memcpy(scratch_.data() + have, current_.data(), m);
    have += m;
    at_ = m;
  }
  return scratch_.data();
}

void RecordStream::check_count(Index count, const char* what) const {
  if (count > info_.rows - position_)
    throw Error(std::string(who_) + ": " + path_ + ": asked to " + what + " " + std::to_string(count) +
                " records at record " + std::to_string(position_) + " of " + std::to_string(info_.rows));
}

Dataset RecordStream::next(Index count, bool check_finite) {
  check_count(count, "read");
  Dataset out = decoder_.decode(*this, count, position_, check_finite);
  position_ += count;
  return out;
}

void RecordStream::skip(Index count) {
  check_count(count, "skip");
  decoder_.skip(*this, count, position_);
  position_ += count;
}

}  // namespace dpsosp::detail
