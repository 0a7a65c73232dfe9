// dpsosp: file loaders for CSV, LibSVM/SVMlight and IDX (MNIST-style) data.
//
// Every file is read through zlib's gzread, which passes plain files through
// unchanged, so "x.csv" and "x.csv.gz" take the same path. Errors are one line
// naming the file and the line (text formats) or the byte offset (IDX): a user
// fixing a 10^6-line file needs to know where to look.
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <locale>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

[[noreturn]] void fail(const char* fn, const std::string& path, const std::string& where,
                       const std::string& reason) {
  throw Error(std::string(fn) + ": " + path + (where.empty() ? "" : " " + where) + ": " + reason);
}

std::string line_at(std::size_t line) { return "line " + std::to_string(line); }
std::string offset_at(std::uint64_t offset) { return "byte offset " + std::to_string(offset); }

// Tokens are quoted in messages; a pathological token must not flood the line.
std::string quote(std::string_view token) {
  constexpr std::size_t kMax = 40;
  std::string s(token.substr(0, kMax));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  return "'" + s + (token.size() > kMax ? "...'" : "'");
}

// A gzread stream (plain or gzip) that reports zlib and OS errors as Error.
class GzInput {
 public:
  GzInput(const char* fn, const std::string& path) : fn_(fn), path_(path) {
    // open() first so that a missing file reports errno, which gzopen may not.
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) fail(fn, path, "", std::string("cannot open file: ") + std::strerror(errno));
    file_ = gzdopen(fd, "rb");
    if (file_ == nullptr) {
      ::close(fd);
      fail(fn, path, "", "cannot open file: out of memory");
    }
    gzbuffer(file_, 1u << 20);
  }
  ~GzInput() { gzclose(file_); }
  GzInput(const GzInput&) = delete;
  GzInput& operator=(const GzInput&) = delete;

  /// Reads up to n bytes; fewer only at the end of the stream.
  std::size_t read(void* dst, std::size_t n) {
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
  std::uint64_t offset() const { return offset_; }

 private:
  [[noreturn]] void stream_error() {
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

  const char* fn_;
  std::string path_;
  gzFile file_ = nullptr;
  std::uint64_t offset_ = 0;
};

// Line-by-line reading over a large buffer; getline on an istream is several
// times slower on 10^8-value files. Strips "\r" so CRLF files read as LF ones.
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

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

enum class ParseStatus { kOk, kNotNumber, kNonFinite, kOverflow };

// Locale-independent and whole-token: "1.5x" is not 1.5, "nan"/"inf" are refused.
ParseStatus parse_double(std::string_view token, double& out) {
  const char* first = token.data();
  const char* last = first + token.size();
  // from_chars rejects a leading '+', which LibSVM labels ("+1") use.
  if (first != last && *first == '+' && last - first > 1 && first[1] != '-' && first[1] != '+') ++first;
  const auto result = std::from_chars(first, last, out);
  if (result.ptr != last || result.ec == std::errc::invalid_argument || first == last)
    return ParseStatus::kNotNumber;
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

// Why a numeric token was refused, for the error message; place is e.g. "in column 3".
std::string number_problem(ParseStatus status, std::string_view token, const std::string& what,
                           const std::string& place) {
  const std::string at = place.empty() ? "" : " " + place;
  switch (status) {
    case ParseStatus::kNonFinite: return "non-finite " + what + " " + quote(token) + at + " (NaN/Inf not allowed)";
    case ParseStatus::kOverflow: return what + " " + quote(token) + at + " overflows a double";
    default: return "non-numeric " + what + " " + quote(token) + at;
  }
}

// Rows of a growing dense table kept in blocks, so the final copy into one
// matrix needs little more than the matrix itself (no 2x peak of a vector).
class DenseRows {
 public:
  explicit DenseRows(std::size_t block_values = 1u << 20) : block_values_(block_values) {}
  void push(double v) {
    if (blocks_.empty() || blocks_.back().size() == blocks_.back().capacity()) {
      // Blocks grow from 4096 values to block_values_ (a small file need not
      // reserve 8 MB; most of a fuzzer's time went there).
      const std::size_t size = std::min(block_values_, std::size_t{4096} << std::min<std::size_t>(blocks_.size(), 20));
      blocks_.emplace_back();
      blocks_.back().reserve(size);
    }
    blocks_.back().push_back(v);
  }
  RowMatrix take(Index rows, Index cols) {
    RowMatrix out = allocate_records(rows, cols);
    double* dst = out.data();
    for (auto& block : blocks_) {
      dst = std::copy(block.begin(), block.end(), dst);
      std::vector<double>().swap(block);
    }
    return out;
  }

 private:
  std::size_t block_values_;
  std::vector<std::vector<double>> blocks_;
};

}  // namespace

Dataset load_csv(const std::string& path, const LoadOptions& options) {
  constexpr const char* kFn = "load_csv";
  LineReader reader(kFn, path);
  DenseRows features;
  std::vector<double> labels;
  std::size_t columns = 0;
  Index rows = 0;
  std::string_view line;
  if (options.header && !reader.next(line)) fail(kFn, path, "", "empty file (no header, no records)");
  while (reader.next(line)) {
    if (line.empty()) continue;  // fully empty lines (e.g. trailing ones) are skipped
    const std::size_t line_no = reader.line_number();
    if (line.find_first_not_of(" \t,") == std::string_view::npos)
      fail(kFn, path, line_at(line_no), "record has no values (only spaces/commas)");
    std::size_t col = 0;
    std::size_t pos = 0;
    for (;;) {
      const std::size_t comma = line.find(',', pos);
      const std::string_view token =
          trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
      ++col;
      double value = 0.0;
      if (token.empty()) fail(kFn, path, line_at(line_no), "empty field in column " + std::to_string(col));
      const ParseStatus status = parse_double(token, value);
      if (status != ParseStatus::kOk) {
        std::string reason = number_problem(status, token, "value", "in column " + std::to_string(col));
        if (status == ParseStatus::kNotNumber && rows == 0 && !options.header)
          reason += "; if the first line is a header, pass --header";
        fail(kFn, path, line_at(line_no), reason);
      }
      if (options.labeled && col == 1)
        labels.push_back(value);
      else
        features.push(value);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    if (columns == 0) {
      columns = col;
      if (options.labeled && columns < 2)
        fail(kFn, path, line_at(line_no), "labeled data needs a label and at least one feature column, got 1 column");
    } else if (col != columns) {
      fail(kFn, path, line_at(line_no),
           "expected " + std::to_string(columns) + " columns, got " + std::to_string(col));
    }
    ++rows;
  }
  if (rows == 0)
    fail(kFn, path, "", options.header ? "no records after the header line" : "empty file (no records)");
  const Index cols = options.labeled ? columns - 1 : columns;
  Vec label_vec = allocate_labels(static_cast<Index>(labels.size()));
  label_vec = Eigen::Map<const Vec>(labels.data(), static_cast<Eigen::Index>(labels.size()));
  return Dataset(features.take(rows, cols), std::move(label_vec));
}

Dataset load_libsvm(const std::string& path, const LoadOptions& options) {
  constexpr const char* kFn = "load_libsvm";
  LineReader reader(kFn, path);
  std::vector<std::int64_t> outer{0};
  std::vector<std::int64_t> inner;
  std::vector<double> values;
  std::vector<double> labels;
  std::uint64_t max_index = 0;
  const std::uint64_t limit = options.libsvm_features;
  std::string_view line;
  while (reader.next(line)) {
    const std::size_t line_no = reader.line_number();
    const std::size_t hash = line.find('#');
    const bool has_comment = hash != std::string_view::npos;
    if (has_comment) line = line.substr(0, hash);
    std::string_view rest = trim(line);
    if (rest.empty()) {
      if (line.empty() || has_comment) continue;  // empty and comment-only lines
      fail(kFn, path, line_at(line_no), "record has no values (only whitespace)");
    }
    auto next_token = [&rest]() {
      std::size_t end = 0;
      while (end < rest.size() && !is_space(rest[end])) ++end;
      const std::string_view token = rest.substr(0, end);
      rest = trim(rest.substr(end));
      return token;
    };
    const std::string_view label_token = next_token();
    double label = 0.0;
    const ParseStatus label_status = parse_double(label_token, label);
    if (label_status != ParseStatus::kOk)
      fail(kFn, path, line_at(line_no), "bad label: " + number_problem(label_status, label_token, "label", ""));
    labels.push_back(label);
    std::uint64_t previous = 0;
    while (!rest.empty()) {
      const std::string_view token = next_token();
      const std::size_t colon = token.find(':');
      if (colon == std::string_view::npos)
        fail(kFn, path, line_at(line_no), "feature " + quote(token) + " lacks ':' (expected index:value)");
      const std::string_view index_text = token.substr(0, colon);
      const std::string_view value_text = token.substr(colon + 1);
      if (index_text == "qid" && previous == 0) continue;  // SVMlight ranking groups: ignored
      std::uint64_t index = 0;
      const auto parsed = std::from_chars(index_text.data(), index_text.data() + index_text.size(), index);
      if (index_text.empty() || parsed.ptr != index_text.data() + index_text.size() ||
          parsed.ec != std::errc() || index > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(kFn, path, line_at(line_no), "bad feature index " + quote(index_text) + ": must be a positive integer");
      if (index == 0) fail(kFn, path, line_at(line_no), "bad feature index '0': indices are 1-based");
      if (index <= previous)
        fail(kFn, path, line_at(line_no),
             "feature index " + std::to_string(index) + " after index " + std::to_string(previous) +
                 ": indices must be strictly increasing (no duplicates)");
      if (limit != 0 && index > limit)
        fail(kFn, path, line_at(line_no),
             "feature index " + std::to_string(index) + " exceeds the number of features " + std::to_string(limit));
      double value = 0.0;
      const ParseStatus status = parse_double(value_text, value);
      if (status != ParseStatus::kOk)
        fail(kFn, path, line_at(line_no),
             number_problem(status, value_text, "value", "of feature " + std::to_string(index)));
      previous = index;
      inner.push_back(static_cast<std::int64_t>(index - 1));
      values.push_back(value);
    }
    max_index = std::max(max_index, previous);
    outer.push_back(static_cast<std::int64_t>(inner.size()));
  }
  if (labels.empty()) fail(kFn, path, "", "empty file (no records)");
  const std::int64_t rows = static_cast<std::int64_t>(labels.size());
  const std::int64_t cols = static_cast<std::int64_t>(limit != 0 ? limit : max_index);
  // Fill the CSR arrays directly: assigning an Eigen::Map reserves
  // 2 * max(rows, cols) entries, so one huge index ("1 99999999999999:1") would
  // ask for petabytes (found by fuzz/fuzz_libsvm).
  SparseRowMatrix features(rows, cols);
  features.resizeNonZeros(static_cast<Eigen::Index>(values.size()));
  std::copy(outer.begin(), outer.end(), features.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), features.innerIndexPtr());
  std::copy(values.begin(), values.end(), features.valuePtr());
  Vec label_vec = allocate_labels(static_cast<Index>(rows));
  label_vec = Eigen::Map<const Vec>(labels.data(), rows);
  return Dataset(std::move(features), std::move(label_vec));
}

namespace {

struct IdxArray {
  int type = 0;
  std::vector<std::uint64_t> dims;
  std::size_t element_size = 0;
};

std::size_t idx_element_size(int type) {
  switch (type) {
    case 0x08: case 0x09: return 1;  // unsigned / signed byte
    case 0x0B: return 2;             // int16
    case 0x0C: case 0x0D: return 4;  // int32 / float32
    case 0x0E: return 8;             // float64
    default: return 0;
  }
}

std::uint64_t big_endian(const unsigned char* p, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v = (v << 8) | p[i];
  return v;
}

std::string hex(std::uint64_t value, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", digits, static_cast<unsigned long long>(value));
  return text;
}

IdxArray read_idx_header(GzInput& in, const char* fn, const std::string& path) {
  unsigned char magic[4];
  if (in.read(magic, 4) != 4) fail(fn, path, offset_at(in.offset()), "file too short for the 4-byte IDX magic");
  if (magic[0] != 0 || magic[1] != 0)
    fail(fn, path, offset_at(0),
         "bad magic " + hex(big_endian(magic, 4), 8) + ": not an IDX file (expected 0x0000TTNN)");
  IdxArray array;
  array.type = magic[2];
  array.element_size = idx_element_size(array.type);
  if (array.element_size == 0)
    fail(fn, path, offset_at(2),
         "unsupported IDX type code " + hex(magic[2], 2) +
             " (supported: 0x08 ubyte, 0x09 sbyte, 0x0b int16, 0x0c int32, 0x0d float32, 0x0e float64)");
  if (magic[3] == 0) fail(fn, path, offset_at(3), "IDX file with 0 dimensions");
  std::uint64_t elements = 1;
  for (int k = 0; k < magic[3]; ++k) {
    unsigned char b[4];
    const std::uint64_t at = in.offset();
    if (in.read(b, 4) != 4) fail(fn, path, offset_at(at), "truncated header: missing size of dimension " + std::to_string(k));
    const std::uint64_t dim = big_endian(b, 4);
    if (dim == 0) fail(fn, path, offset_at(at), "dimension " + std::to_string(k) + " is 0");
    if (elements > (std::uint64_t{1} << 40) / dim)
      fail(fn, path, offset_at(at), "dimensions describe more than 2^40 elements");
    elements *= dim;
    array.dims.push_back(dim);
  }
  return array;
}

double decode_element(const unsigned char* p, int type) {
  const std::uint64_t bits = big_endian(p, idx_element_size(type));
  switch (type) {
    case 0x09: return static_cast<std::int8_t>(bits);
    case 0x0B: return static_cast<std::int16_t>(bits);
    case 0x0C: return static_cast<std::int32_t>(bits);
    case 0x0D: {
      const auto bits32 = static_cast<std::uint32_t>(bits);
      float f;
      std::memcpy(&f, &bits32, sizeof f);
      return f;
    }
    case 0x0E: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    default: return static_cast<double>(bits);  // 0x08, unsigned byte
  }
}

// Reads the raw bytes of count elements. The buffer grows only as data arrive,
// so a header that promises 2^40 elements in a short file is reported as
// truncated instead of allocating for the promise (found by fuzz/fuzz_idx).
std::vector<unsigned char> read_idx_bytes(GzInput& in, const char* fn, const std::string& path,
                                          const IdxArray& array, std::uint64_t count) {
  const std::uint64_t header = in.offset();
  const std::uint64_t total = count * array.element_size;
  constexpr std::uint64_t kChunk = 1u << 22;
  std::vector<unsigned char> bytes;
  while (bytes.size() < total) {
    const std::size_t done = bytes.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(total - done, kChunk));
    bytes.resize(done + want);
    const std::size_t got = in.read(bytes.data() + done, want);
    if (got < want)
      fail(fn, path, offset_at(in.offset()),
           "truncated: the header promises " + std::to_string(total) + " data bytes after offset " +
               std::to_string(header) + ", the file has " + std::to_string(done + got));
  }
  unsigned char extra;
  if (in.read(&extra, 1) != 0)
    fail(fn, path, offset_at(header + total), "unexpected data after the " + std::to_string(total) + " bytes the header describes");
  return bytes;
}

// Decodes the elements read after offset `header`; unsigned-byte images are scaled to [0,1].
void decode_idx_values(const std::vector<unsigned char>& bytes, const char* fn, const std::string& path,
                       const IdxArray& array, std::uint64_t header, double scale, double* out) {
  for (std::size_t i = 0; i < bytes.size(); i += array.element_size) {
    const double v = decode_element(bytes.data() + i, array.type);
    if (!std::isfinite(v)) fail(fn, path, offset_at(header + i), "non-finite value (NaN/Inf)");
    *out++ = v * scale;
  }
}

}  // namespace

Dataset load_idx(const std::string& images_path, const std::string& labels_path) {
  constexpr const char* kFn = "load_idx";
  GzInput images(kFn, images_path);
  const IdxArray image_array = read_idx_header(images, kFn, images_path);
  const std::uint64_t rows = image_array.dims[0];
  std::uint64_t cols = 1;
  for (std::size_t k = 1; k < image_array.dims.size(); ++k) cols *= image_array.dims[k];
  const std::uint64_t image_header = images.offset();
  const std::vector<unsigned char> image_bytes = read_idx_bytes(images, kFn, images_path, image_array, rows * cols);
  RowMatrix features = allocate_records(static_cast<Index>(rows), static_cast<Index>(cols));
  const double scale = image_array.type == 0x08 ? 1.0 / 255.0 : 1.0;
  decode_idx_values(image_bytes, kFn, images_path, image_array, image_header, scale, features.data());

  Vec labels;
  if (!labels_path.empty()) {
    GzInput label_input(kFn, labels_path);
    const IdxArray label_array = read_idx_header(label_input, kFn, labels_path);
    if (label_array.dims.size() != 1)
      fail(kFn, labels_path, offset_at(3),
           "a labels file has 1 dimension (magic 0x00000801 for bytes), got " + std::to_string(label_array.dims.size()));
    if (label_array.dims[0] != rows)
      fail(kFn, labels_path, offset_at(4),
           "labels file has " + std::to_string(label_array.dims[0]) + " labels but " + images_path + " has " +
               std::to_string(rows) + " images");
    const std::uint64_t label_header = label_input.offset();
    const std::vector<unsigned char> label_bytes = read_idx_bytes(label_input, kFn, labels_path, label_array, rows);
    labels = allocate_labels(static_cast<Index>(rows));
    decode_idx_values(label_bytes, kFn, labels_path, label_array, label_header, 1.0, labels.data());
  }
  return Dataset(std::move(features), std::move(labels));
}

}  // namespace dpsosp
