// Internal: what the file loaders (csv.cpp, libsvm.cpp, idx.cpp) share: a
// gzip-or-plain byte stream, a fast line reader, number parsing and the
// one-line error messages that name the file and the place.
//
// Every file is read through zlib's gzread, which passes plain files through
// unchanged, so "x.csv" and "x.csv.gz" take the same path. Errors are one line
// naming the file and the line (text formats) or the byte offset (IDX): a user
// fixing a 10^6-line file needs to know where to look.
#pragma once
#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <locale>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

namespace dpsosp::detail {

/// Throws Error "FN: PATH WHERE: REASON" (WHERE may be empty).
[[noreturn]] void fail(const char* fn, const std::string& path, const std::string& where, const std::string& reason);

/// "line N", "byte offset N": the WHERE of fail.
std::string line_at(std::size_t line);
std::string offset_at(std::uint64_t offset);

/// A token quoted for a message, cut at 40 characters: a pathological token
/// must not flood the line.
std::string quote(std::string_view token);

/// A gzread stream (plain or gzip) that reports zlib and OS errors as Error.
class GzInput {
 public:
  GzInput(const char* fn, const std::string& path);
  ~GzInput();
  GzInput(const GzInput&) = delete;
  GzInput& operator=(const GzInput&) = delete;

  /// Reads up to n bytes; fewer only at the end of the stream.
  std::size_t read(void* dst, std::size_t n);
  std::uint64_t offset() const { return offset_; }

 private:
  [[noreturn]] void stream_error();

  const char* fn_;
  std::string path_;
  gzFile file_ = nullptr;
  std::uint64_t offset_ = 0;
};

/// Line-by-line reading over a large buffer; getline on an istream is several
/// times slower on 10^8-value files. Strips "\r" so CRLF files read as LF ones.
class LineReader {
 public:
  // The buffer is left uninitialised: zeroing 1 MB per file was most of the
  // time of a small file (and of a fuzzer's run).
  LineReader(const char* fn, const std::string& path) : in_(fn, path), buf_(new char[kBufferSize]) {}

  /// The next line (without its terminator), valid until the next call.
  bool next(std::string_view& line) {
    if (carry_used_) carry_.clear(), carry_used_ = false;
    for (;;) {
      if (pos_ < end_) {
        const char* start = buf_.get() + pos_;
        const void* nl = std::memchr(start, '\n', end_ - pos_);
        if (nl != nullptr) {
          const std::size_t len = static_cast<const char*>(nl) - start;
          pos_ += len + 1;
          ++line_no_;
          if (carry_.empty()) {
            line = strip_cr(std::string_view(start, len));
          } else {
            carry_.append(start, len);
            carry_used_ = true;
            line = strip_cr(carry_);
          }
          return true;
        }
        carry_.append(start, end_ - pos_);
      }
      pos_ = 0;
      end_ = in_.read(buf_.get(), kBufferSize);
      if (end_ == 0) {
        if (carry_.empty()) return false;  // no unterminated last line
        ++line_no_;
        carry_used_ = true;
        line = strip_cr(carry_);
        return true;
      }
    }
  }
  std::size_t line_number() const { return line_no_; }

 private:
  static std::string_view strip_cr(std::string_view s) {
    return (!s.empty() && s.back() == '\r') ? s.substr(0, s.size() - 1) : s;
  }
  static constexpr std::size_t kBufferSize = 1u << 20;
  GzInput in_;
  std::unique_ptr<char[]> buf_;
  std::size_t pos_ = 0, end_ = 0, line_no_ = 0;
  std::string carry_;
  bool carry_used_ = false;
};

inline bool is_space(char c) { return c == ' ' || c == '\t'; }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

enum class ParseStatus { kOk, kNotNumber, kNonFinite, kOverflow };

/// Locale-independent and whole-token: "1.5x" is not 1.5, "nan"/"inf" are refused.
inline ParseStatus parse_double(std::string_view token, double& out) {
  const char* first = token.data();
  const char* last = first + token.size();
  // from_chars rejects a leading '+', which LibSVM labels ("+1") use.
  if (first != last && *first == '+' && last - first > 1 && first[1] != '-' && first[1] != '+') ++first;
  const auto result = std::from_chars(first, last, out);
  if (result.ptr != last || result.ec == std::errc::invalid_argument || first == last) return ParseStatus::kNotNumber;
  if (result.ec == std::errc::result_out_of_range) {
    // from_chars leaves out untouched here; tell overflow from underflow
    // (which is a legitimate 0) with the classic-locale stream parser.
    std::istringstream stream{std::string(first, last)};
    stream.imbue(std::locale::classic());
    stream >> out;
    if (stream.fail()) return ParseStatus::kOverflow;
    return ParseStatus::kOk;
  }
  if (!std::isfinite(out)) return ParseStatus::kNonFinite;
  return ParseStatus::kOk;
}

/// Why a numeric token was refused, for the error message; place is e.g. "in column 3".
std::string number_problem(ParseStatus status, std::string_view token, const std::string& what,
                           const std::string& place);

}  // namespace dpsosp::detail
