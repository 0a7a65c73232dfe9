// dpsosp: the LibSVM / SVMlight loader (docs/data-formats.md): "label
// idx:val ..." with 1-based increasing indices, into CSR features; read
// through file_input.hpp (plain or gzip).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "data/file_input.hpp"
#include "data/formats.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {

using detail::fail;
using detail::is_space;
using detail::line_at;
using detail::LineReader;
using detail::number_problem;
using detail::parse_double;
using detail::ParseStatus;
using detail::quote;
using detail::trim;

Dataset load_libsvm(const std::string& path, const LoadOptions& options) {
  constexpr const char* kFn = "LibSVM file";
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
      if (index_text.empty() || parsed.ptr != index_text.data() + index_text.size() || parsed.ec != std::errc() ||
          index > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(kFn, path, line_at(line_no), "bad feature index " + quote(index_text) + ": must be a positive integer");
      if (index == 0) fail(kFn, path, line_at(line_no), "bad feature index '0': indices are 1-based");
      if (index <= previous)
        fail(kFn, path, line_at(line_no),
             "feature index " + std::to_string(index) + " after index " + std::to_string(previous) +
                 ": indices must be strictly increasing (no duplicates)");
      // Outside the declared shape: the same words whichever record it is
      // (docs/privacy.md, "Public shape"), so neither the line nor the index.
      if (limit != 0 && index > limit)
        throw Error("LibSVM file " + path + ": a record has a feature index above the declared feature count " +
                    std::to_string(limit) + "; which record is not said, as a refusal must not depend on it");
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

FormatInfo libsvm_format_row() {
  FormatInfo r;
  r.id = FileFormat::kLibsvm;
  r.name = "libsvm";
  r.aliases = {"svmlight", "svm"};
  r.extensions = {".svm", ".libsvm", ".svmlight", ".txt"};
  r.load = load_libsvm;
  r.table = r.sparse = true;
  return r;
}

}  // namespace dpsosp
