// Reading a point back (result JSON or one CSV line); see result_reader.hpp.
#include "result_reader.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "dpsosp/error.hpp"
#include "dpsosp/text.hpp"

namespace dpsosp::cli {
namespace {

constexpr std::size_t kMaxPointFileBytes = std::size_t{1} << 30;

// The value of a JSON entry for a message: short, on one line.
std::string show(const nlohmann::json& j) {
  std::string s = j.is_null() ? "null" : j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 40) + "...";
  return s;
}

// A label, category or fill as text: a string as it is, a number as JSON writes it.
std::string rule_text(const nlohmann::json& v, const std::string& what, const std::string& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  throw Error(what + ": \"" + key + "\" has " + show(v) + ", expected text or a number");
}

// The table rule (table_rule_keys in cli.hpp; dpsosp.save's keys alike).
void read_table_rule(const nlohmann::json& j, const std::string& what, PointFile& point) {
  if (const auto label = j.find("label"); label != j.end() && !label->is_null())
    point.label = rule_text(*label, what, "label");
  if (const auto cats = j.find("categorical"); cats != j.end() && !cats->is_null()) {
    if (!cats->is_object())
      throw Error(what + ": \"categorical\" is " + show(*cats) + ", expected {column: [categories]}");
    for (const auto& [column, list] : cats->items()) {
      if (!list.is_array() || list.empty())
        throw Error(what + ": \"categorical." + column + "\" is " + show(list) + ", expected a list of categories");
      CsvCategorical c{column, {}};
      for (const auto& v : list) c.categories.push_back(rule_text(v, what, "categorical." + column));
      point.categorical.push_back(std::move(c));
    }
  }
  if (const auto imp = j.find("impute"); imp != j.end() && !imp->is_null()) {
    if (imp->is_string() && imp->get<std::string>() == "zero") {
      point.impute_zero = true;
    } else if (imp->is_object()) {
      for (const auto& [column, v] : imp->items())
        point.impute.push_back({column, rule_text(v, what, "impute." + column)});
    } else {
      throw Error(what + ": \"impute\" is " + show(*imp) + ", expected \"zero\" or {column: value}");
    }
  }
}

PointFile parse_json(const std::string& text, const std::string& what) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 1, column 11: ...".
    std::string reason = e.what();
    const auto bracket = reason.find("] ");
    if (reason.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos) reason = reason.substr(bracket + 2);
    throw Error(what + ": not valid JSON (" + reason + ")");
  }
  if (!j.is_object()) throw Error(what + ": expected a JSON object with an \"x\" array (a result of dpsosp run)");
  const auto x = j.find("x");
  if (x == j.end()) throw Error(what + ": no \"x\" in the result (expected the array of the point's coordinates)");
  if (!x->is_array()) throw Error(what + ": \"x\" is " + show(*x) + ", expected an array of numbers");
  PointFile point;
  point.from_json = true;
  point.x.resize(static_cast<Eigen::Index>(x->size()));
  Eigen::Index i = 0;
  for (const auto& e : *x) {
    if (e.is_null())
      throw Error(what + ": \"x\" entry " + std::to_string(i + 1) + " is null (the run wrote a non-finite value)");
    if (!e.is_number())
      throw Error(what + ": \"x\" entry " + std::to_string(i + 1) + " is " + show(e) + ", expected a number");
    const double v = e.get<double>();
    if (!std::isfinite(v)) throw Error(what + ": \"x\" entry " + std::to_string(i + 1) + " is not finite");
    point.x[i++] = v;
  }
  const auto constants = j.find("constants");
  if (constants != j.end() && constants->is_object()) {
    const auto rho = constants->find("rho");
    if (rho != constants->end()) {
      if (!rho->is_number() || !std::isfinite(rho->get<double>()) || !(rho->get<double>() > 0))
        throw Error(what + ": \"constants.rho\" is " + show(*rho) + ", expected a finite number > 0");
      point.rho = rho->get<double>();
    }
  }
  const auto model = j.find("model");
  if (model != j.end()) {
    if (!model->is_string()) throw Error(what + ": \"model\" is " + show(*model) + ", expected a model name");
    point.model = model->get<std::string>();
  }
  const auto shape = j.find("shape");
  if (shape != j.end()) {
    if (!shape->is_object()) throw Error(what + ": \"shape\" is " + show(*shape) + ", expected an object");
    ModelOptions o;
    const auto count = [&](const char* key, Index& out, Index min) {
      const auto v = shape->find(key);
      if (v == shape->end()) return;
      if (!v->is_number_unsigned() || v->get<std::uint64_t>() < min || v->get<std::uint64_t>() > (1u << 30))
        throw Error(what + ": \"shape." + key + "\" is " + show(*v) + ", expected an integer in [" +
                    std::to_string(min) + ", " + std::to_string(1u << 30) + "]");
      out = v->get<Index>();
    };
    count("classes", o.classes, 0);
    count("hidden", o.hidden, 1);
    count("rank", o.rank, 1);
    const auto features = shape->find("features");
    if (features != shape->end()) {
      if (!features->is_number_unsigned() || features->get<std::uint64_t>() < 1 ||
          features->get<std::uint64_t>() > 2147483647u)
        throw Error(what + ": \"shape.features\" is " + show(*features) + ", expected an integer in [1, 2147483647]");
      point.features = features->get<Index>();
    }
    const auto bias = shape->find("fit_intercept");
    if (bias != shape->end()) {
      if (!bias->is_boolean())
        throw Error(what + ": \"shape.fit_intercept\" is " + show(*bias) + ", expected true or false");
      o.fit_intercept = bias->get<bool>();
    }
    point.shape = o;
  }
  const auto scaling = j.find("scaling");
  if (scaling != j.end() && !scaling->is_null()) {
    if (!scaling->is_object()) throw Error(what + ": \"scaling\" is " + show(*scaling) + ", expected an object");
    Scaling sc;
    const auto numbers = [&](const char* key, std::vector<double>& out) {
      const auto v = scaling->find(key);
      if (v == scaling->end() || v->is_null()) return;
      if (!v->is_array()) throw Error(what + ": \"scaling." + key + "\" is " + show(*v) + ", expected an array");
      for (const auto& e : *v) {
        if (!e.is_number() || !std::isfinite(e.get<double>()))
          throw Error(what + ": \"scaling." + key + "\" has " + show(e) + ", expected finite numbers");
        out.push_back(e.get<double>());
      }
    };
    numbers("lower", sc.lower);
    numbers("upper", sc.upper);
    if (sc.lower.size() != sc.upper.size())
      throw Error(what + ": \"scaling.lower\" and \"scaling.upper\" differ in length");
    for (std::size_t k = 0; k < sc.lower.size(); ++k)
      if (!(sc.lower[k] < sc.upper[k]))
        throw Error(what + ": \"scaling\": feature " + std::to_string(k) + ": lower >= upper");
    const auto target = scaling->find("target");
    if (target != scaling->end() && !target->is_null()) {
      std::vector<double> t;
      const auto lo = target->find("lower"), hi = target->find("upper");
      if (!target->is_object() || lo == target->end() || hi == target->end() || !lo->is_number() || !hi->is_number() ||
          !(lo->get<double>() < hi->get<double>()))
        throw Error(what + ": \"scaling.target\" is " + show(*target) +
                    ", expected {\"lower\": a, \"upper\": b}, a < b");
      sc.has_target = true;
      sc.y_lower = lo->get<double>();
      sc.y_upper = hi->get<double>();
    }
    const auto normalize = scaling->find("normalize");
    if (normalize != scaling->end()) {
      if (!normalize->is_boolean())
        throw Error(what + ": \"scaling.normalize\" is " + show(*normalize) + ", expected true or false");
      sc.normalize = normalize->get<bool>();
    }
    point.scaling = sc;
  }
  const auto names = j.find("class_names");
  if (names != j.end() && !names->is_null()) {
    if (!names->is_array() || names->size() < 2)
      throw Error(what + ": \"class_names\" is " + show(*names) + ", expected an array of 2 labels or more");
    for (const auto& name : *names) {
      if (name.is_string())
        point.class_names.push_back(name.get<std::string>());
      else if (name.is_number() || name.is_boolean())
        point.class_names.push_back(name.dump());
      else
        throw Error(what + ": \"class_names\" has " + show(name) + ", expected labels (text or numbers)");
    }
  }
  read_table_rule(j, what, point);
  return point;
}

PointFile parse_csv_line(const std::string& text, const std::string& what) {
  std::string_view rest(text);
  std::string_view line;
  std::size_t line_no = 0, point_line = 0;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view current = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line_no;
    if (!current.empty() && current.back() == '\r') current.remove_suffix(1);
    if (trim_blanks(current).empty()) continue;
    if (point_line != 0)
      throw Error(what + ": line " + std::to_string(line_no) +
                  ": a point file holds one CSV line (or a result JSON), "
                  "found a second non-empty line");
    point_line = line_no;
    line = current;
  }
  if (point_line == 0) throw Error(what + ": empty file (expected one CSV line of numbers or a result JSON)");
  std::vector<double> values;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = line.find(',', pos);
    const std::string_view field =
        trim_blanks(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    const std::size_t column = values.size() + 1;
    if (field.empty()) throw Error(what + ": empty field in column " + std::to_string(column));
    double v = 0;
    switch (parse_strict_double(field, v)) {
      case NumberStatus::kOk: break;
      case NumberStatus::kNonFinite:
        throw Error(what + ": value " + quote_token(field) + " in column " + std::to_string(column) +
                    " is not finite (NaN/Inf not allowed)");
      case NumberStatus::kOutOfRange:
        throw Error(what + ": value " + quote_token(field) + " in column " + std::to_string(column) +
                    " is out of the range of a double");
      case NumberStatus::kNotNumber:
        throw Error(what + ": non-numeric value " + quote_token(field) + " in column " + std::to_string(column));
    }
    values.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  PointFile point;
  point.x = Eigen::Map<const Vec>(values.data(), static_cast<Eigen::Index>(values.size()));
  return point;
}

}  // namespace

PointFile parse_point_text(const std::string& text, const std::string& what) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) return parse_json(text, what);
  return parse_csv_line(text, what);
}

PointFile read_point_file(const std::string& path, const std::string& what) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "rb"));
  if (!f) throw Error(what + ": cannot open '" + path + "': " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, f.get());
    text.append(buffer, got);
    if (text.size() > kMaxPointFileBytes) throw Error(what + ": file larger than 1 GiB, not a point file");
    if (got < sizeof buffer) {
      if (std::ferror(f.get())) throw Error(what + ": read error: " + std::strerror(errno));
      break;
    }
  }
  return parse_point_text(text, what);
}

}  // namespace dpsosp::cli
