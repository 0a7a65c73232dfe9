// `dpsosp run`'s scale options (scale_options.hpp).
#include "scale_options.hpp"

#include <cctype>
#include <cstdio>
#include <vector>

namespace dpsosp::cli {
namespace {

// --bounds / --y-bounds: "LO:HI" (every feature), "LO:HI,LO:HI,..." (one per
// feature) or a file: a CSV line "LO,HI" per feature, or JSON {"lower": [...],
// "upper": [...]} or [[LO, HI], ...].
std::vector<Interval> parse_bounds(const std::string& text, const std::string& option) {
  std::vector<Interval> out;
  const auto number = [&](std::string field) {
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) field.pop_back();
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.front()))) field.erase(0, 1);
    return parse_real(field, option, Range::kFinite);
  };
  std::FILE* f = text.find(':') == std::string::npos ? std::fopen(text.c_str(), "rb") : nullptr;
  if (f == nullptr) {
    std::size_t pos = 0;
    for (;;) {
      const std::size_t comma = text.find(',', pos);
      const std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const std::size_t colon = item.find(':');
      if (colon == std::string::npos)
        throw Error(option +
                    (option == "--y-bounds" ? ": expected LO:HI (the target's interval) or a file"
                                            : ": expected LO:HI, LO:HI,LO:HI,... (one per feature) or a file") +
                    ", got " + quote_token(text));
      out.push_back({number(item.substr(0, colon)), number(item.substr(colon + 1))});
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return out;
  }
  std::string body;
  char buffer[4096];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) body.append(buffer, got);
  std::fclose(f);
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (body[first] == '{' || body[first] == '[')) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(body);
    } catch (const nlohmann::json::exception&) {
      throw Error(option + " " + text + ": not valid JSON");
    }
    const auto value = [&](const nlohmann::json& v) {
      if (!v.is_number()) throw Error(option + " " + text + ": expected numbers, got " + v.dump());
      return v.get<double>();
    };
    if (j.is_object() && j.contains("lower") && j.contains("upper") && j["lower"].is_array() && j["upper"].is_array() &&
        j["lower"].size() == j["upper"].size()) {
      for (std::size_t k = 0; k < j["lower"].size(); ++k) out.push_back({value(j["lower"][k]), value(j["upper"][k])});
    } else if (j.is_array()) {
      for (const auto& e : j) {
        if (!e.is_array() || e.size() != 2) throw Error(option + " " + text + ": expected [[LO, HI], ...]");
        out.push_back({value(e[0]), value(e[1])});
      }
    } else {
      throw Error(option + " " + text + ": expected {\"lower\": [...], \"upper\": [...]} or [[LO, HI], ...]");
    }
    return out;
  }
  std::size_t pos = 0, line = 0;
  while (pos < body.size()) {
    const std::size_t nl = body.find('\n', pos);
    std::string row = body.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? body.size() : nl + 1;
    ++line;
    if (row.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::size_t comma = row.find(',');
    if (comma == std::string::npos)
      throw Error(option + " " + text + ": line " + std::to_string(line) + ": expected LO,HI");
    out.push_back({number(row.substr(0, comma)), number(row.substr(comma + 1))});
  }
  return out;
}

}  // namespace

void add_scale_options(CLI::App& app, ScaleArgs& a) {
  a.app = &app;
  app.add_option("--bounds", a.bounds, run_option("bounds").help);
  app.add_option("--y-bounds", a.y_bounds, run_option("y_bounds").help);
}

ScalingOptions scaling_options(const ScaleArgs& a, const RunRequest& r, const DataSource& source,
                               const LoadedProblem& p) {
  // The scale (scaling.hpp): declared, or estimated privately by default for
  // the models that take it on a table (--data, not IDX images, record files
  // or --synthetic).
  std::vector<Interval> bounds;
  std::optional<Interval> y_bounds;
  if (a.app->count("--bounds") > 0) bounds = parse_bounds(a.bounds, "--bounds");
  if (a.app->count("--y-bounds") > 0) {
    const std::vector<Interval> y = parse_bounds(a.y_bounds, "--y-bounds");
    if (y.size() != 1) throw Error("--y-bounds: expected one interval LO:HI, got " + std::to_string(y.size()));
    y_bounds = y[0];
  }
  bool table = !source.data_path.empty() && !p.records;
  if (table) {  // the format table's rule: a user's table takes the private scale by default
    try {
      if (!source.format.empty())
        table = format_info(parse_file_format(source.format)).table;
      else if (source.data_path != "-")
        table = format_info(guess_file_format(source.data_path)).table;
    } catch (const Error&) {
      // loading names the problem
    }
  }
  return r.scaling(p.model->name(), p.model->features(), table, p.records.has_value(), std::move(bounds), y_bounds,
                   p.one_hot);
}

}  // namespace dpsosp::cli
