// `dpsosp run`'s bounds (--bounds, --y-bounds; --scale, --scale-share and
// --normalize are the option table's) and the report's "scaling" block: the library's ScalingOptions
// (include/dpsosp/scaling.hpp) in the CLI's words.
#pragma once
#include <string>

#include "cli.hpp"

namespace dpsosp::cli {

struct ScaleArgs {
  CLI::App* app = nullptr;
  std::string bounds, y_bounds;
};
void add_scale_options(CLI::App& app, ScaleArgs& args);
/// The options for the loaded problem (RunRequest::scaling); throws Error in the CLI's words.
ScalingOptions scaling_options(const ScaleArgs& a, const RunRequest& r, const DataSource& source,
                               const LoadedProblem& p);

}  // namespace dpsosp::cli
