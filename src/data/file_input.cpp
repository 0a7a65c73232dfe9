// dpsosp: the loaders' shared reading (file_input.hpp): the gzip-or-plain
// stream and the error messages.
#include "data/file_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dpsosp/error.hpp"

namespace dpsosp::detail {

void fail(const char* fn, const std::string& path, const std::string& where, const std::string& reason) {
  const std::string shown = path == "-" ? "(stdin)" : path;
  throw Error(std::string(fn) + " " + shown + (where.empty() ? "" : " " + where) + ": " + reason);
}

std::string line_at(std::size_t line) { return "line " + std::to_string(line); }
std::string offset_at(std::uint64_t offset) { return "byte offset " + std::to_string(offset); }

std::string quote(std::string_view token) {
  constexpr std::size_t kMax = 40;
  std::string s(token.substr(0, kMax));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + s + (token.size() > kMax ? "...'" : "'");
}

GzInput::GzInput(const char* fn, const std::string& path) : fn_(fn), path_(path) {
  // "-" is the standard input (gzip or plain, read once). open() first so that
  // a missing file reports errno, which gzopen may not.
  const int fd = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(fn, path, "", std::string("cannot open file: ") + std::strerror(errno));
  file_ = gzdopen(fd, "rb");
  if (file_ == nullptr) {
    ::close(fd);
    fail(fn, path, "", "cannot open file: out of memory");
  }
  gzbuffer(file_, 1u << 20);
}

GzInput::~GzInput() { gzclose(file_); }

std::size_t GzInput::read(void* dst, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
    const int got = gzread(file_, static_cast<char*>(dst) + done, chunk);
    if (got < 0) stream_error();
    if (got == 0) {
      // A gzip stream cut short reads as a clean end unless we ask.
      int err = Z_OK;
      gzerror(file_, &err);
      if (err != Z_OK) stream_error();
      break;
    }
    done += static_cast<std::size_t>(got);
    offset_ += static_cast<std::uint64_t>(got);
  }
  return done;
}

void GzInput::stream_error() {
  int err = Z_OK;
  std::string msg = gzerror(file_, &err);
  // zlib prefixes the name it was given, "<fd:3>" after gzdopen: noise here.
  if (msg.rfind("<fd:", 0) == 0 && msg.find(": ") != std::string::npos) msg = msg.substr(msg.find(": ") + 2);
  std::string reason;
  if (err == Z_ERRNO)
    reason = std::string("read error: ") + std::strerror(errno);
  else if (err == Z_BUF_ERROR)
    reason = "truncated gzip stream (unexpected end of file)";
  else
    // zlib discards a failed read, so the fault lies at or after this offset.
    reason = "corrupted gzip stream (zlib: " + msg + ") at or after this uncompressed offset";
  fail(fn_, path_, offset_at(offset_), reason);
}

std::string number_problem(ParseStatus status, std::string_view token, const std::string& what,
                           const std::string& place) {
  const std::string at = place.empty() ? "" : " " + place;
  switch (status) {
    case ParseStatus::kNonFinite: return "non-finite " + what + " " + quote(token) + at + " (NaN/Inf not allowed)";
    case ParseStatus::kOverflow: return what + " " + quote(token) + at + " overflows a double";
    default: return "non-numeric " + what + " " + quote(token) + at;
  }
}

}  // namespace dpsosp::detail
