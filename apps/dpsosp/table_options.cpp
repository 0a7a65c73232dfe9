// The CSV table options (--label, --classes a,b,c, --categorical, --impute)
// into the loader's LoadOptions (data.hpp; docs/data-formats.md).
#include <algorithm>

#include "cli.hpp"
#include "dpsosp/text.hpp"

namespace dpsosp::cli {

// "a,b,c" (or "a|b|c" with sep '|') into trimmed items; each must be non-empty
// and appear once.
std::vector<std::string> split_names(const std::string& text, char sep, const std::string& option) {
  std::vector<std::string> items;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t end = text.find(sep, pos);
    std::string item = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    const std::size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
    item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
    if (item.empty()) throw Error(option + ": an empty name in " + quote_token(text));
    if (std::find(items.begin(), items.end(), item) != items.end())
      throw Error(option + ": " + quote_token(item) + " is named twice");
    items.push_back(item);
    if (end == std::string::npos) return items;
    pos = end + 1;
  }
}

// --label, --classes NAMES, --categorical and --impute, into the CSV loader's options.
void csv_table_options(const DataSource& s, bool labeled, LoadOptions& lo) {
  if (s.given("--label")) {
    if (s.label.empty()) throw Error("--label: empty (expected a column name or 0-based index)");
    if (!labeled) throw Error("--label: the pca model takes no labels");
    lo.label_column = s.label;
  } else if (labeled && !s.point_label.empty()) {
    lo.label_column = s.point_label;  // the run's, kept in its report
  }
  // (run and certify take --weights-column; predict does not)
  if (s.app != nullptr && s.app->get_option_no_throw("--weights-column") != nullptr && s.given("--weights-column")) {
    if (s.weights_column.empty()) throw Error("--weights-column: empty (expected a column name or 0-based index)");
    lo.weights_column = s.weights_column;
  }
  lo.class_names = s.class_names();
  if (!s.given("--categorical")) lo.categorical = s.point_categorical;
  if (!s.given("--impute")) {
    lo.impute = s.point_impute;
    lo.impute_zero = s.point_impute_zero;
  }
  for (const std::string& item : s.categorical) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("--categorical: expected COLUMN=a|b|c (the column's public categories), got " + quote_token(item));
    const std::string column = item.substr(0, eq);
    for (const CsvCategorical& c : lo.categorical)
      if (c.column == column) throw Error("--categorical: column " + quote_token(column) + " is declared twice");
    std::vector<std::string> categories = split_names(item.substr(eq + 1), '|', "--categorical " + column);
    // "a=x|y,b=z" reads as one column whose last categories are "y,b=z": two columns meant as one option.
    for (const std::string& category : categories)
      if (category.find('=') != std::string::npos)
        throw Error("--categorical " + column + ": the category " + quote_token(category) +
                    " holds '=': declare each column with its own option (--categorical a=x|y --categorical b=z)");
    lo.categorical.push_back({column, std::move(categories)});
  }
  for (const std::string& item : s.impute) {
    if (item == "zero") {
      if (lo.impute_zero) throw Error("--impute zero: given twice");
      lo.impute_zero = true;
      continue;
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw Error("--impute: expected zero or COLUMN=VALUE, got " + quote_token(item));
    if (item.find('=', eq + 1) != std::string::npos)
      throw Error("--impute " + item.substr(0, eq) + ": the value " + quote_token(item.substr(eq + 1)) +
                  " holds '=': give each column its own option (--impute a=0 --impute b=0)");
    lo.impute.push_back({item.substr(0, eq), item.substr(eq + 1)});
  }
}

nlohmann::json table_rule_keys(const DataSource& s, bool labeled) {
  LoadOptions lo;
  csv_table_options(s, labeled, lo);
  nlohmann::json j = nlohmann::json::object();
  if (s.given("--label")) j["label"] = lo.label_column;
  if (!lo.categorical.empty()) {
    nlohmann::json c = nlohmann::json::object();
    for (const CsvCategorical& col : lo.categorical) c[col.column] = col.categories;
    j["categorical"] = c;
  }
  // "zero" and a column's own rules together have no form in the file: predict
  // is then given --impute again.
  if (lo.impute_zero && lo.impute.empty()) j["impute"] = "zero";
  if (!lo.impute_zero && !lo.impute.empty()) {
    nlohmann::json m = nlohmann::json::object();
    for (const CsvImpute& rule : lo.impute) {
      // A numeric column's fill as a number (as dpsosp.save writes it), a category as text.
      const bool categorical = std::any_of(lo.categorical.begin(), lo.categorical.end(),
                                           [&](const CsvCategorical& c) { return c.column == rule.column; });
      double v = 0;
      if (!categorical && parse_strict_double(rule.value, v) == NumberStatus::kOk)
        m[rule.column] = v;
      else
        m[rule.column] = rule.value;
    }
    j["impute"] = m;
  }
  return j;
}

}  // namespace dpsosp::cli
