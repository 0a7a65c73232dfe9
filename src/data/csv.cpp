// dpsosp: the CSV loader (docs/data-formats.md): one record per line,
// comma-separated, "quoted" fields; a header line (given or detected), the
// label column by name or index, class names and categorical columns from
// public lists, missing values refused or imputed by a declared rule; read
// through file_input.hpp (plain or gzip).
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "data/csv_table.hpp"
#include "data/file_input.hpp"
#include "data/formats.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"

namespace dpsosp {

using namespace detail::csv;

using detail::fail;
using detail::is_space;
using detail::line_at;
using detail::LineReader;
using detail::number_problem;
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

// A header name that users give a label column (any case).
bool label_like(const std::string& name) {
  const std::string lower = lowered(name);
  for (const char* word : {"target", "label", "labels", "class", "y", "outcome"})
    if (lower == word) return true;
  return false;
}

// The notes of CsvNotes, from the layout (the header line and the options).
CsvNotes layout_notes(const std::string& path, const LoadOptions& o, const Table& t, bool header) {
  const OptionWords words{o.keyword_words};
  CsvNotes notes;
  for (std::size_t j = 0; header && j < t.size(); ++j)
    if (t[j].name.empty() && (t[j].kind == Kind::kNumber || t[j].kind == Kind::kCategorical))
      notes.warnings.push_back("CSV file " + path + ": column " + std::to_string(j) +
                               " (0-based) has no name in the header line and is read as a feature; a table's index "
                               "that pandas' to_csv wrote (without index=False) is no feature: save the table without "
                               "it");
  if (!o.labeled || !o.label_column.empty()) return notes;
  std::size_t like = kNone;
  for (std::size_t j = 1; header && j < t.size() && like == kNone; ++j)
    if (t[j].kind == Kind::kNumber && label_like(t[j].name)) like = j;  // not one declared otherwise
  const std::string read = "the labels were read from column 0" +
                           (t[0].name.empty() ? std::string() : ", " + detail::quote(t[0].name)) +
                           " (the first column, the default)";
  if (like == kNone) {
    notes.label_origin = read + ": " + words.label(header ? "NAME" : "INDEX", !header) +
                         (header ? " (or a 0-based index)" : " (0-based)") + " reads them from another column";
    return notes;
  }
  const std::string pick = ", and " + column_text(like, t[like]) +
                           " is named like a label: " + words.label(t[like].name, false) + " reads them from it";
  notes.label_origin = read + pick;
  notes.warnings.push_back("CSV file " + path + ": " + read + pick + " (" + words.label("0", true) +
                           " keeps the first column and this warning away)");
  return notes;
}

}  // namespace

Dataset load_csv(const std::string& path, const LoadOptions& options) { return load_csv(path, options, nullptr); }

Dataset load_csv(const std::string& path, const LoadOptions& options, std::vector<bool>* one_hot_features,
                 CsvNotes* notes) {
  const OptionWords words{options.keyword_words};
  LineReader reader(kFn, path);
  DenseRows features;
  std::vector<double> labels;
  std::vector<double> weights;
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
  if (first_no == 0)
    fail(kFn, path, "", options.header ? "empty file (no header, no records)" : "empty file (no records)");
  // A spreadsheet's "CSV UTF-8" starts with a byte-order mark: not part of
  // the first field (a header's first name, or a record's first value).
  std::string first(line);
  if (first.rfind("\xEF\xBB\xBF", 0) == 0) first.erase(0, 3);
  split(first, first_no);
  const std::size_t columns = fields.size();
  if (columns == 1) {
    // One field whose text holds semicolons or tabs: another separator (a
    // spreadsheet's ';' where the decimal mark is a comma), not one column.
    for (const auto& [mark, name] : {std::pair<char, const char*>{';', "semicolons"}, {'\t', "tabs"}})
      if (fields[0].find(mark) != std::string_view::npos)
        fail(kFn, path, line_at(first_no),
             std::string("the fields are separated by commas, and this line has none but ") + name +
                 ": save the table with commas between fields (and a '.' decimal mark)");
  }
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
  const CsvNotes layout = layout_notes(path, options, t, header);
  if (notes) *notes = layout;
  // A refusal of a label read from the default column says so.
  const std::string origin = layout.label_origin.empty() ? std::string() : "; " + layout.label_origin;
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
          fail(kFn, path, line_at(line_no),
               "missing label (" + what + ") in " + column_text(j, c) +
                   ": labels are never imputed; fill it in or leave the record out" + origin);
        if (c.kind == Kind::kWeight)
          fail(kFn, path, line_at(line_no),
               "missing weight (" + what + ") in " + column_text(j, c) + ": weights are never imputed");
        if (!c.impute) {
          const std::string rule = c.name.empty() ? std::to_string(j) : c.name;
          fail(kFn, path, line_at(line_no),
               "missing value (" + what + ") in " + column_text(j, c) +
                   ": fill it in, or declare a rule: " + words.impute_rules(rule));
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
            fail(kFn, path, "",
                 "a label in " + column_text(j, c) + " is not one of the " + std::to_string(c.values.size()) +
                     " declared classes (" + words.classes(listed(c.values, ",")) +
                     "); every label must be one of them, compared as text" + origin);
          fail(kFn, path, "",
               "a value in the categorical " + column_text(j, c) + " is not one of its " +
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
      const ParseStatus status = parse_field(token, value);
      if (status != ParseStatus::kOk) {
        // A label is refused as a named one outside the classes is: naming no
        // record, line or value (SPEC section 9).
        if (c.kind == Kind::kLabel)
          fail(kFn, path, "",
               "a label in " + column_text(j, c) + " is not a finite number" +
                   (status == ParseStatus::kNotNumber ? "; named classes must be declared (" + words.classes("a,b,c") +
                                                            "), every label then one of them"
                                                      : "; every label must be one (labels are never imputed)") +
                   origin);
        const char* what = c.kind == Kind::kWeight ? "weight" : "value";
        std::string reason = number_problem(status, token, what, "in " + column_text(j, c));
        // Text that does not start as a number might be a category; '12abc' is a typo.
        const bool numeric_start = !token.empty() && std::strchr("0123456789+-.", token.front()) != nullptr;
        if (status == ParseStatus::kNotNumber && c.kind != Kind::kWeight && !numeric_start)
          reason += " (a categorical column: declare its categories, " + words.declare_categories() + ")";
        fail(kFn, path, line_at(line_no), reason);
      }
      if (c.kind == Kind::kWeight) {
        if (!(value >= 0.0 && value <= 1.0))
          fail(kFn, path, line_at(line_no),
               "weight " + std::string(token) + " in " + column_text(j, c) +
                   " is outside [0, 1] (a weight above 1 would let one record move a release by more than the "
                   "clip bound)");
        weights.push_back(value);
      } else if (c.kind == Kind::kLabel) {
        labels.push_back(value);
      } else {
        features.push(value);
      }
    }
    ++rows;
  };
  if (!header) record(first, first_no);
  while (reader.next(line)) {
    if (line.empty()) continue;  // fully empty lines (e.g. trailing ones) are skipped
    record(line, reader.line_number());
  }
  if (rows == 0) fail(kFn, path, "", header ? "no records after the header line" : "empty file (no records)");
  Vec label_vec = allocate_labels(static_cast<Index>(labels.size()));
  label_vec = Eigen::Map<const Vec>(labels.data(), static_cast<Eigen::Index>(labels.size()));
  Dataset data(features.take(rows, static_cast<Index>(cols)), std::move(label_vec));
  if (t.weighted()) data.set_weights(Eigen::Map<const Vec>(weights.data(), static_cast<Eigen::Index>(weights.size())));
  if (one_hot_features) {  // the features in the order the records hold them
    one_hot_features->clear();
    for (std::size_t j = 0; j < columns; ++j) {
      if (t[j].kind == Kind::kCategorical) one_hot_features->insert(one_hot_features->end(), t[j].values.size(), true);
      if (t[j].kind == Kind::kNumber) one_hot_features->push_back(false);
    }
  }
  return data;
}

FormatInfo csv_format_row() {
  FormatInfo r;
  r.id = FileFormat::kCsv;
  r.name = "csv";
  r.extensions = {".csv"};
  r.load = load_csv;
  r.table = r.csv_options = true;
  return r;
}

}  // namespace dpsosp
