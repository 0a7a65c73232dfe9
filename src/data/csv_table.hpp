// Internal (csv.cpp): the layout of one CSV table: each column's kind (a
// number, the label, a class name, a category) and rules (imputation), from
// LoadOptions with names resolved through the header line; the field
// splitter (quotes) and the missing-value test (docs/data-formats.md).
#pragma once
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "data/file_input.hpp"
#include "dpsosp/data.hpp"

namespace dpsosp::detail::csv {

using detail::fail;
using detail::is_space;
using detail::parse_double;
using detail::ParseStatus;
using detail::trim;

// The words and rules of one CSV table (docs/data-formats.md).
inline constexpr const char* kFn = "CSV file";

// The table options as a refusal names them: the CLI's (--label) or, with
// LoadOptions::keyword_words, dpsosp.run's keywords (label=).
struct OptionWords {
  bool keywords = false;
  std::string option(const std::string& name) const { return keywords ? name + "=" : "--" + name; }
  std::string classes(const std::string& names) const {
    return keywords ? "classes=[" + names + "]" : "--classes " + names;
  }
  std::string declare_categories() const {
    return keywords ? "categorical={COL: [a, b, c]}" : "--categorical COL=a|b|c";
  }
  std::string impute(const std::string& column, const std::string& value) const {
    return keywords ? "impute={'" + column + "': " + value + "}" : "--impute " + column + "=" + value;
  }
  std::string impute_rules(const std::string& column) const {
    return (keywords ? "impute='zero'" : "--impute zero") + std::string(" or ") + impute(column, "VALUE");
  }
  // The label option naming a column (a header name, quoted where a shell
  // would split it) or an index.
  std::string label(const std::string& ref, bool index) const {
    if (keywords) return index ? "label=" + ref : "label='" + ref + "'";
    const bool plain = std::all_of(ref.begin(), ref.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
    return "--label " + (plain ? ref : "'" + ref + "'");
  }
};
inline constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// A field's text in lower case (the words the loader reads in any case).
inline std::string lowered(std::string_view t) {
  std::string lower;
  for (const char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

// An empty field, NA, N/A or NaN (any case).
inline bool is_missing(std::string_view t) {
  if (t.empty()) return true;
  if (t.size() > 3) return false;
  const std::string lower = lowered(t);
  return lower == "na" || lower == "n/a" || lower == "nan";
}

// Splits a line into its trimmed fields; a field in double quotes is unquoted
// ("" inside it is one quote). Unquoted text goes into `scratch`, reserved to
// the line's size so that the views into it stay valid. Returns why the line
// cannot be split, or nullptr.
inline const char* split_fields(std::string_view line, std::vector<std::string_view>& fields, std::string& scratch) {
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

// A field as a number: a number, or True / False (any case; pandas' to_csv
// writes a bool column so, and dpsosp.encode_table reads a bool as 1 / 0) as
// 1 / 0.
inline ParseStatus parse_field(std::string_view token, double& value) {
  const ParseStatus status = parse_double(token, value);
  if (status != ParseStatus::kNotNumber || token.size() < 4 || token.size() > 5) return status;
  const std::string lower = lowered(token);
  if (lower != "true" && lower != "false") return status;
  value = lower == "true" ? 1.0 : 0.0;
  return ParseStatus::kOk;
}

inline bool is_number(std::string_view token) {
  double value = 0.0;
  return !token.empty() && parse_field(token, value) != ParseStatus::kNotNumber;
}

inline bool is_index(const std::string& ref) {
  return !ref.empty() && ref.size() < 10 &&
         std::all_of(ref.begin(), ref.end(), [](char c) { return c >= '0' && c <= '9'; });
}

inline std::string listed(const std::vector<std::string>& items, const char* sep) {
  std::string text;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i == 8 && items.size() > 10) return text + sep + "... (" + std::to_string(items.size()) + " in all)";
    text += (i == 0 ? "" : sep) + items[i];
  }
  return text;
}

enum class Kind { kNumber, kLabel, kLabelName, kCategorical, kWeight };

struct Column {
  Kind kind = Kind::kNumber;
  std::string name;                 // from the header line; empty without one
  std::vector<std::string> values;  // class names or categories, in order
  std::map<std::string, std::size_t, std::less<>> index_of;
  bool impute = false;
  double impute_number = 0.0;
  std::size_t impute_category = kNone;  // kNone: no category
};

inline std::string column_text(std::size_t j, const Column& c) {
  return c.name.empty() ? "column " + std::to_string(j) + " (0-based)" : "column " + detail::quote(c.name);
}

// The table's layout: each column's kind and rules, from the options (names
// resolved through the header line).
class Table {
 public:
  Table(const std::string& path, const LoadOptions& o, std::size_t columns, const std::vector<std::string>* names)
      : path_(path), columns_(columns), words_{o.keyword_words} {
    if (names != nullptr) {
      for (std::size_t j = 0; j < columns; ++j) columns_[j].name = (*names)[j];
      names_ = names;
    }
    if (o.labeled) {
      label_ =
          o.label_column.empty() ? 0 : resolve(o.label_column, "the label column (" + words_.option("label") + ")");
      Column& label = columns_[label_];
      if (o.class_names.empty()) {
        label.kind = Kind::kLabel;
      } else {
        label.kind = Kind::kLabelName;
        set_values(label, o.class_names, "class");
      }
    }
    if (!o.weights_column.empty()) {
      const std::string what = "the weights column (" + words_.option("weights-column") + ")";
      weights_ = resolve(o.weights_column, what);
      if (o.labeled && weights_ == label_) fail(kFn, path_, "", what + " is the label column");
      columns_[weights_].kind = Kind::kWeight;
    }
    for (const CsvCategorical& c : o.categorical) {
      const std::string what =
          "the categorical column " + detail::quote(c.column) + " (" + words_.option("categorical") + ")";
      const std::size_t j = resolve(c.column, what);
      if (o.labeled && j == label_)
        fail(kFn, path_, "",
             what + " is the label column; a label's names are the classes (" + words_.option("classes") + ")");
      if (j == weights_)
        fail(kFn, path_, "", what + " is the weights column (" + words_.option("weights-column") + ")");
      if (columns_[j].kind == Kind::kCategorical) fail(kFn, path_, "", what + " is declared twice");
      if (c.categories.empty()) fail(kFn, path_, "", what + " has no categories");
      columns_[j].kind = Kind::kCategorical;
      set_values(columns_[j], c.categories, "category");
    }
    for (const CsvImpute& rule : o.impute) {
      const std::string what = words_.impute(rule.column, rule.value);
      const std::size_t j = resolve(rule.column, what);
      Column& c = columns_[j];
      if (c.kind == Kind::kLabel || c.kind == Kind::kLabelName)
        fail(kFn, path_, "", what + ": names the label column; labels are never imputed");
      if (c.kind == Kind::kWeight) fail(kFn, path_, "", what + ": names the weights column; weights are never imputed");
      if (c.impute) fail(kFn, path_, "", what + ": a second rule for " + column_text(j, c));
      c.impute = true;
      if (c.kind == Kind::kCategorical) {
        const auto it = c.index_of.find(rule.value);
        if (it == c.index_of.end())
          fail(kFn, path_, "",
               what + ": " + detail::quote(rule.value) + " is not one of the column's categories (" +
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
  bool weighted() const { return weights_ != kNone; }
  std::size_t features() const { return features_; }
  const Column& operator[](std::size_t j) const { return columns_[j]; }

  // Whether a field of the first line says that it is a header: a word in a
  // numeric column (not a number, not a missing value).
  bool looks_like_header(const std::vector<std::string_view>& fields) const {
    for (std::size_t j = 0; j < fields.size() && j < columns_.size(); ++j) {
      const Kind k = columns_[j].kind;
      if ((k == Kind::kNumber || k == Kind::kLabel || k == Kind::kWeight) && !is_missing(fields[j]) &&
          !is_number(fields[j]))
        return true;
    }
    return false;
  }

 private:
  std::size_t resolve(const std::string& ref, const std::string& what) const {
    const std::size_t n = columns_.size();
    if (is_index(ref)) {
      const std::size_t j = std::stoul(ref);
      if (j >= n)
        fail(kFn, path_, "",
             what + ": column " + ref + " (0-based) does not exist: the file has " + std::to_string(n) +
                 (n == 1 ? " column" : " columns"));
      return j;
    }
    // A name: the header line's (load_csv takes one whenever a column is named).
    std::size_t found = kNone, count = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (columns_[j].name == ref) found = found == kNone ? j : found, ++count;
    if (count == 0)
      fail(kFn, path_, "",
           what + ": the header line has no column " + detail::quote(ref) +
               " (its columns: " + (names_ ? listed(*names_, ", ") : std::string()) + ")");
    if (count > 1)
      fail(kFn, path_, "",
           what + ": the header line names " + std::to_string(count) + " columns " + detail::quote(ref) +
               "; give the column's 0-based index");
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
  OptionWords words_;
  const std::vector<std::string>* names_ = nullptr;
  std::size_t label_ = kNone;
  std::size_t weights_ = kNone;
  std::size_t features_ = 0;
};

// Whether every field of the line is a number.
inline bool all_numeric(const std::vector<std::string_view>& fields) {
  return std::all_of(fields.begin(), fields.end(), [](std::string_view f) { return is_number(f); });
}

inline bool names_a_column(const LoadOptions& o) {
  if (o.labeled && !o.label_column.empty() && !is_index(o.label_column)) return true;
  if (!o.weights_column.empty() && !is_index(o.weights_column)) return true;
  for (const auto& c : o.categorical)
    if (!is_index(c.column)) return true;
  for (const auto& r : o.impute)
    if (!is_index(r.column)) return true;
  return false;
}

}  // namespace dpsosp::detail::csv
