// `dpsosp run`'s scale options (--bounds, --y-bounds, --scale, --scale-share,
// --normalize) and the report's "scaling" block: the library's ScalingOptions
// (include/dpsosp/scaling.hpp) in the CLI's words.
#pragma once
#include <string>

#include "cli.hpp"

namespace dpsosp::cli {

struct ScaleArgs {
  CLI::App* app = nullptr;
  std::string bounds, y_bounds, scale = "auto", scale_share = "0.25";
  bool normalize = false;
};
void add_scale_options(CLI::App& app, ScaleArgs& args);
/// The options for the loaded problem; throws Error in the CLI's words.
ScalingOptions scaling_options(const ScaleArgs& a, const DataSource& source, const LoadedProblem& p);
/// The report's "scaling": the map, the estimate's share and noise, x_user.
nlohmann::json scaling_json(const ScaledSummary& r);

}  // namespace dpsosp::cli
