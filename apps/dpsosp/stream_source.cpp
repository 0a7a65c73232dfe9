// run --stream: a record file opened for a streamed run, and its model.
#include <algorithm>
#include <chrono>

#include "cli.hpp"

namespace dpsosp::cli {

LoadedProblem open_streamed_problem(const DataSource& s) {
  if (s.given("--synthetic")) throw Error("--stream: streams a --data record file, not --synthetic records");
  if (s.data_path.empty()) throw Error("--stream: give the record file with --data FILE (dpsosp convert writes one)");
  if (s.model.empty()) throw Error("--model is required with --data");
  if (!s.weights_column.empty())
    throw Error("--weights-column: applies to CSV files, not to the record file that --stream reads");
  if (s.given("--header") || s.given("--labels"))
    throw Error(std::string(s.given("--header") ? "--header" : "--labels") +
                ": applies to CSV and IDX files, not to "
                "the record file that --stream reads");
  if (!s.format.empty() && parse_file_format(s.format) != FileFormat::kRecords)
    throw Error("--stream: streams record files (--format records), not " + s.format);
  const auto names = model_names();
  if (std::find(names.begin(), names.end(), s.model) == names.end())
    throw Error("--model: unknown model '" + s.model + "'");
  LoadedProblem p;
  const auto start = std::chrono::steady_clock::now();
  const std::string source = "--data " + s.data_path;
  try {
    p.records.emplace(s.data_path);
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
  const RecordFileInfo& info = p.records->info();
  const Index declared = declared_features(s);
  if (declared != 0 && declared != info.cols)
    throw Error("--features " + std::to_string(declared) + ": the record file " + s.data_path + " holds records of " +
                std::to_string(info.cols) + " features; convert it again with --features " + std::to_string(declared));
  try {
    p.model = make_model(s.model, info, model_options_of(s, s.model));
  } catch (const Error& e) {
    throw Error(source + ": " + e.what());
  }
  p.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

}  // namespace dpsosp::cli
