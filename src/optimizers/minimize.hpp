// Internal: the part of a run that minimize's two forms (records in memory,
// records streamed) share, once their records are checked.
#pragma once
#include <functional>

#include "dpsosp/optimizer.hpp"

namespace dpsosp::detail {

/// Runs the algorithm on `records` (a planned view or the records
/// themselves): draws or shares the keys, sets the threads, makes the private
/// estimate of G and M that the options ask for (on the first records of the
/// sample order; first_records(m), when given, reads the first m of a
/// streamed file), fills the summary.
Summary run_checked(const Model& model, const Dataset& records, const Vec& x0, const RunOptions& options,
                    const std::function<Dataset(Index)>& first_records = {});

/// Throws Error unless x0 has the model's dimension and finite entries.
void check_start(const Model& model, const Vec& x0);

}  // namespace dpsosp::detail
