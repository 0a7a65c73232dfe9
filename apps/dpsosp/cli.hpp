// The dpsosp command-line tool: a thin layer over the library.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "dpsosp/dpsosp.hpp"

namespace dpsosp::cli {

/// Where the records come from: a file or a synthetic spec.
struct DataSource {
  std::string model;
  std::string data_path;
  std::string format;     // empty = guess from the file name
  std::string labels_path;  // IDX labels file
  bool header = false;
  std::string synthetic;
  ModelOptions model_options;
};

/// Adds the data-source options to a subcommand.
void add_data_options(CLI::App& app, DataSource& source);

/// A loaded problem: data, model, and (for synthetic specs) the problem.
struct LoadedProblem {
  Dataset data;
  std::unique_ptr<Model> model;
  std::optional<SyntheticProblem> synthetic;
  double load_seconds = 0;
};
LoadedProblem load_problem(const DataSource& source);

/// Parses a double that may be "inf"/"infinity"; throws Error naming the option.
double parse_number(const std::string& text, const std::string& option);

/// JSON helpers: +-inf and NaN become null (JSON has no infinity).
nlohmann::json number(double v);
nlohmann::json summary_json(const Summary& s);
nlohmann::json certificate_json(const Certificate& c);

/// Writes text to path atomically enough for our needs; throws Error if it cannot.
void write_text(const std::string& path, const std::string& text);
/// Throws Error if path cannot be written (checked before a run starts).
void check_writable(const std::string& path);

void setup_run(CLI::App& app);
void setup_certify(CLI::App& app);
void setup_privacy(CLI::App& app);
void setup_demo(CLI::App& app);

}  // namespace dpsosp::cli
