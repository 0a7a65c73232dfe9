// dpsosp: the CSV loader (docs/data-formats.md): one record per line,
// comma-separated, "quoted" fields; a header line (given or detected), the
// label column by name or index, class names and categorical columns from
// public lists, missing values refused or imputed by a declared rule; read
// through file_input.hpp (plain or gzip).
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "data/file_input.hpp"

namespace dpsosp {

using detail::fail;
using detail::is_space;
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

// The words and rules of one CSV table (docs/data-formats.md).
constexpr const char* kFn = "load_csv";
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// An empty field, NA, N/A or NaN (any case).
bool is_missing(std::string_view t) {
  if (t.empty()) return true;
  if (t.size() > 3) return false;
  std::string lower;
  for (const char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "na" || lower == "n/a" || lower == "nan";
}

// Splits a line into its trimmed fields; a field in double quotes is unquoted
// ("" inside it is one quote). Unquoted text goes into `scratch`, reserved to
// the line's size so that the views into it stay valid. Returns why the line
// cannot be split, or nullptr.
const char* split_fields(std::string_view line, std::vector<std::string_view>& fields, std::string& scratch) {
  fields.clear();
  scratch.clear();
  scratch.reserve(line.size());
  std::size_t pos = 0;
  for (;;) {
    std::size_t p = pos;
    while (p < line.size() && is_space(line[p])) ++p;
    if (p < line.size() && line[p] == '"') {
      const std::size_t begin = scratch.size();
      std::size_t q = p + 1;
      bool closed = false;
      while (q < line.size()) {
        if (line[q] == '"') {
          if (q + 1 < line.size() && line[q + 1] == '"') {
            scratch.push_back('"');
            q += 2;
            continue;
          }
          closed = true;
          ++q;
          break;
        }
        scratch.push_back(line[q++]);
      }
      if (!closed) return "a quoted field has no closing quote (a field cannot span lines)";
      while (q < line.size() && is_space(line[q])) ++q;
      if (q < line.size() && line[q] != ',') return "text after a quoted field's closing quote";
      fields.push_back(trim(std::string_view(scratch).substr(begin)));
      if (q >= line.size()) return nullptr;
      pos = q + 1;
    } else {
      const std::size_t comma = line.find(',', pos);
      fields.push_back(trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)));
      if (comma == std::string_view::npos) return nullptr;
      pos = comma + 1;
    }
  }
}

bool is_number(std::string_view token) {
  double value = 0.0;
  return !token.empty() && parse_double(token, value) != ParseStatus::kNotNumber;
}

bool is_index(const std::string& ref) {
  return !ref.empty() && ref.size() < 10 && std::all_of(ref.begin(), ref.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string listed(const std::vector<std::string>& items, const char* sep) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i == 8 && items.size() > 10) return text + sep + "... (" + std::to_string(items.size()) + " in all)";
    text += (i == 0 ? "" : sep) + items[i];
  }
  return text;
}

enum class Kind { kNumber, kLabel, kLabelName, kCategorical };

struct Column {
  Kind kind = Kind::kNumber;
  std::string name;  // from the header line; empty without one
  std::vector<std::string> values;  // class names or categories, in order
  std::map<std::string, std::size_t, std::less<>> index_of;
  bool impute = false;
  double impute_number = 0.0;
  std::size_t impute_category = kNone;  // kNone: no category
};

std::string column_text(std::size_t j, const Column& c) {
  return c.name.empty() ? "column " + std::to_string(j) + " (0-based)" : "column " + detail::quote(c.name);
}

// The table's layout: each column's kind and rules, from the options (names
// resolved through the header line).
class Table {
 public:
  Table(const std::string& path, const LoadOptions& o, std::size_t columns, const std::vector<std::string>* names)
      : path_(path), columns_(columns) {
    if (names != nullptr) {
      for (std::size_t j = 0; j < columns; ++j) columns_[j].name = (*names)[j];
      names_ = names;
    }
    if (o.labeled) {
      label_ = o.label_column.empty() ? 0 : resolve(o.label_column, "the label column (--label)");
      Column& label = columns_[label_];
      if (o.class_names.empty()) {
        label.kind = Kind::kLabel;
      } else {
        label.kind = Kind::kLabelName;
        set_values(label, o.class_names, "class");
      }
    }
    for (const CsvCategorical& c : o.categorical) {
      const std::string what = "the categorical column " + detail::quote(c.column) + " (--categorical)";
      const std::size_t j = resolve(c.column, what);
      if (o.labeled && j == label_)
        fail(kFn, path_, "", what + " is the label column; a label's names are the classes (--classes)");
      if (columns_[j].kind == Kind::kCategorical) fail(kFn, path_, "", what + " is declared twice");
      if (c.categories.empty()) fail(kFn, path_, "", what + " has no categories");
      columns_[j].kind = Kind::kCategorical;
      set_values(columns_[j], c.categories, "category");
    }
    for (const CsvImpute& rule : o.impute) {
      const std::string what = "--impute " + rule.column + "=" + rule.value;
      const std::size_t j = resolve(rule.column, what);
      Column& c = columns_[j];
      if (c.kind == Kind::kLabel || c.kind == Kind::kLabelName)
        fail(kFn, path_, "", what + ": names the label column; labels are never imputed");
      if (c.impute) fail(kFn, path_, "", what + ": a second rule for " + column_text(j, c));
      c.impute = true;
      if (c.kind == Kind::kCategorical) {
        const auto it = c.index_of.find(rule.value);
        if (it == c.index_of.end())
          fail(kFn, path_, "", what + ": " + detail::quote(rule.value) + " is not one of the column's categories (" +
                                   listed(c.values, "|") + ")");
        c.impute_category = it->second;
      } else if (parse_double(trim(rule.value), c.impute_number) != ParseStatus::kOk) {
        fail(kFn, path_, "", what + ": expected a finite number for the numeric " + column_text(j, c));
      }
    }
    if (o.impute_zero)
      for (Column& c : columns_)
        if (!c.impute && (c.kind == Kind::kNumber || c.kind == Kind::kCategorical)) c.impute = true;
    for (const Column& c : columns_)
      features_ += c.kind == Kind::kCategorical ? c.values.size() : (c.kind == Kind::kNumber ? 1 : 0);
  }

  std::size_t size() const { return columns_.size(); }
  std::size_t features() const { return features_; }
  const Column& operator[](std::size_t j) const { return columns_[j]; }

  // Whether a field of the first line says that it is a header: a word in a
  // numeric column (not a number, not a missing value).
  bool looks_like_header(const std::vector<std::string_view>& fields) const {
    for (std::size_t j = 0; j < fields.size() && j < columns_.size(); ++j) {
      const Kind k = columns_[j].kind;
      if ((k == Kind::kNumber || k == Kind::kLabel) && !is_missing(fields[j]) && !is_number(fields[j])) return true;
    }
    return false;
  }

 private:
  std::size_t resolve(const std::string& ref, const std::string& what) const {
    const std::size_t n = columns_.size();
    if (is_index(ref)) {
      const std::size_t j = std::stoul(ref);
      if (j >= n)
        fail(kFn, path_, "", what + ": column " + ref + " (0-based) does not exist: the file has " + std::to_string(n) +
                                 (n == 1 ? " column" : " columns"));
      return j;
    }
    // A name: the header line's (load_csv takes one whenever a column is named).
    std::size_t found = kNone, count = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (columns_[j].name == ref) found = found == kNone ? j : found, ++count;
    if (count == 0)
      fail(kFn, path_, "", what + ": the header line has no column " + detail::quote(ref) + " (its columns: " +
                               (names_ ? listed(*names_, ", ") : std::string()) + ")");
    if (count > 1)
      fail(kFn, path_, "", what + ": the header line names " + std::to_string(count) + " columns " +
                               detail::quote(ref) + "; give the column's 0-based index");
    return found;
  }

  void set_values(Column& c, const std::vector<std::string>& values, const char* what) const {
    c.values = values;
    for (std::size_t k = 0; k < values.size(); ++k)
      if (!c.index_of.emplace(values[k], k).second)
        fail(kFn, path_, "", std::string(what) + " " + detail::quote(values[k]) + " is declared twice");
  }

  const std::string& path_;
  std::vector<Column> columns_;
  const std::vector<std::string>* names_ = nullptr;
  std::size_t label_ = kNone;
  std::size_t features_ = 0;
};

// Whether every field of the line is a number.
bool all_numeric(const std::vector<std::string_view>& fields) {
  return std::all_of(fields.begin(), fields.end(), [](std::string_view f) { return is_number(f); });
}

bool names_a_column(const LoadOptions& o) {
  if (o.labeled && !o.label_column.empty() && !is_index(o.label_column)) return true;
  for (const auto& c : o.categorical)
    if (!is_index(c.column)) return true;
  for (const auto& r : o.impute)
    if (!is_index(r.column)) return true;
  return false;
}

}  // namespace

Dataset load_csv(const std::string& path, const LoadOptions& options) {
  LineReader reader(kFn, path);
  DenseRows features;
  std::vector<double> labels;
  std::vector<std::string_view> fields;
  std::string scratch;
  std::string_view line;
  const auto split = [&](std::string_view text, std::size_t line_no) {
    if (const char* problem = split_fields(text, fields, scratch)) fail(kFn, path, line_at(line_no), problem);
  };

  // The first line that is not empty: a header, or the first record.
  std::size_t first_no = 0;
  while (reader.next(line))
    if (!line.empty()) {
      first_no = reader.line_number();
      break;
    }
  if (first_no == 0) fail(kFn, path, "", options.header ? "empty file (no header, no records)" : "empty file (no records)");
  const std::string first(line);
  split(first, first_no);
  const std::size_t columns = fields.size();
  if (options.labeled && columns < 2)
    fail(kFn, path, line_at(first_no), "labeled data needs a label and at least one feature column, got 1 column");

  // A header: --header, or a column named by its name, or detected.
  bool header = options.header;
  const bool named = names_a_column(options);
  if ((header || named) && all_numeric(fields))
    fail(kFn, path, line_at(first_no),
         header ? "a header line was expected (--header), but the first line is all numbers: a record, not a header; "
                  "leave out --header"
                : "a column is named by its header name, but the first line is all numbers: a record, not a header "
                  "line; name the column by its 0-based index");
  std::vector<std::string> names;
  std::unique_ptr<Table> table;
  if (named) {
    header = true;
  } else if (!header) {
    table = std::make_unique<Table>(path, options, columns, nullptr);
    header = table->looks_like_header(fields);
  }
  if (header) {
    for (const std::string_view f : fields) names.emplace_back(f);
    table = std::make_unique<Table>(path, options, columns, &names);
  }
  const Table& t = *table;
  const std::size_t cols = t.features();
  if (cols == 0) fail(kFn, path, "", "no feature columns (every column is the label)");

  Index rows = 0;
  std::vector<double> one_hot;
  const auto record = [&](std::string_view text, std::size_t line_no) {
    if (text.find_first_not_of(" \t,") == std::string_view::npos)
      fail(kFn, path, line_at(line_no), "record has no values (only spaces/commas)");
    split(text, line_no);
    if (fields.size() != columns)
      fail(kFn, path, line_at(line_no),
           "expected " + std::to_string(columns) + " columns, got " + std::to_string(fields.size()));
    for (std::size_t j = 0; j < columns; ++j) {
      const Column& c = t[j];
      const std::string_view token = fields[j];
      if (is_missing(token)) {
        const std::string what = token.empty() ? "an empty field" : detail::quote(token);
        if (c.kind == Kind::kLabel || c.kind == Kind::kLabelName)
          fail(kFn, path, line_at(line_no), "missing label (" + what + ") in " + column_text(j, c) +
                                                ": labels are never imputed; fill it in or leave the record out");
        if (!c.impute) {
          const std::string rule = c.name.empty() ? std::to_string(j) : c.name;
          fail(kFn, path, line_at(line_no),
               "missing value (" + what + ") in " + column_text(j, c) + ": fill it in, or declare a rule: --impute zero or --impute " +
                   rule + "=VALUE");
        }
        if (c.kind == Kind::kCategorical) {
          for (std::size_t k = 0; k < c.values.size(); ++k) features.push(k == c.impute_category ? 1.0 : 0.0);
        } else {
          features.push(c.impute_number);
        }
        continue;
      }
      if (c.kind == Kind::kLabelName || c.kind == Kind::kCategorical) {
        const auto it = c.index_of.find(token);
        if (it == c.index_of.end()) {
          // Named no record: whether one record's value is declared must not
          // show in what the refusal says (SPEC section 9).
          if (c.kind == Kind::kLabelName)
            fail(kFn, path, "", "a label in " + column_text(j, c) + " is not one of the " +
                                    std::to_string(c.values.size()) + " declared classes (--classes " +
                                    listed(c.values, ",") + "); every label must be one of them, compared as text");
          fail(kFn, path, "", "a value in the categorical " + column_text(j, c) + " is not one of its " +
                                  std::to_string(c.values.size()) + " declared categories (" + listed(c.values, "|") +
                                  "); every value must be one of them, compared as text");
        }
        if (c.kind == Kind::kLabelName) {
          labels.push_back(static_cast<double>(it->second));
        } else {
          for (std::size_t k = 0; k < c.values.size(); ++k) features.push(k == it->second ? 1.0 : 0.0);
        }
        continue;
      }
      double value = 0.0;
      const ParseStatus status = parse_double(token, value);
      if (status != ParseStatus::kOk) {
        std::string reason =
            number_problem(status, token, c.kind == Kind::kLabel ? "label" : "value", "in " + column_text(j, c));
        if (status == ParseStatus::kNotNumber)
          reason += c.kind == Kind::kLabel ? " (named classes: declare them, --classes a,b,c)"
                                           : " (a categorical column: declare its categories, --categorical COL=a|b|c)";
        fail(kFn, path, line_at(line_no), reason);
      }
      if (c.kind == Kind::kLabel) labels.push_back(value);
      else features.push(value);
    }
    ++rows;
  };
  if (!header) record(first, first_no);
  while (reader.next(line)) {
    if (line.empty()) continue;  // fully empty lines (e.g. trailing ones) are skipped
    record(line, reader.line_number());
  }
  if (rows == 0)
    fail(kFn, path, "", header ? "no records after the header line" : "empty file (no records)");
  Vec label_vec = allocate_labels(static_cast<Index>(labels.size()));
  label_vec = Eigen::Map<const Vec>(labels.data(), static_cast<Eigen::Index>(labels.size()));
  return Dataset(features.take(rows, static_cast<Index>(cols)), std::move(label_vec));
}

}  // namespace dpsosp
