// Internal: each algorithm's parameters, mechanism and accounting.
#pragma once
#include "dpsosp/optimizer.hpp"

namespace dpsosp::detail {

/// Runs options.algorithm from summary.x (x0) and fills the summary. The
/// privacy noise (and Poisson sampling) is keyed by `key`, the public streams
/// by summary.seed.
void run_algorithm(const Model& model, const Dataset& data, const RunOptions& options, const NoiseKey& key,
                   Summary& summary);

}  // namespace dpsosp::detail
