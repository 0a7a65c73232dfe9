// dpsosp: the CSV loader (docs/data-formats.md): one record per line, numeric,
// comma-separated; read through file_input.hpp (plain or gzip).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "data/file_input.hpp"

namespace dpsosp {

using detail::fail;
using detail::line_at;
using detail::LineReader;
using detail::number_problem;
using detail::parse_double;
using detail::ParseStatus;
using detail::trim;

namespace {

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

// Whether every comma-separated field of the line is a number.
bool all_numeric(std::string_view line) {
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = line.find(',', pos);
    const std::string_view token =
        trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    double value = 0.0;
    if (token.empty() || parse_double(token, value) == ParseStatus::kNotNumber) return false;
    if (comma == std::string_view::npos) return true;
    pos = comma + 1;
  }
}

}  // namespace

Dataset load_csv(const std::string& path, const LoadOptions& options) {
  constexpr const char* kFn = "load_csv";
  LineReader reader(kFn, path);
  DenseRows features;
  std::vector<double> labels;
  std::size_t columns = 0;
  Index rows = 0;
  std::string_view line;
  if (options.header) {
    if (!reader.next(line)) fail(kFn, path, "", "empty file (no header, no records)");
    // A header has a field that is not a number; a first line of numbers is a
    // record, which header = true would silently drop. This checks the file's
    // form before any run (as the NaN check does), and releases nothing.
    if (!line.empty() && all_numeric(line))
      fail(kFn, path, line_at(1),
           "a header line was expected (--header), but the first line is all numbers: a record, not a header; "
           "leave out --header");
  }
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

}  // namespace dpsosp
