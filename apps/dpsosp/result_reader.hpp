// Reading a point back: the `--point` of `certify` and `predict`, the `--x0`
// of `run`. A point file is a result JSON written by `dpsosp run` or a model
// file written by dpsosp.save (docs/report.md: its "x", and "model", "shape"
// and "constants.rho" when present) or one CSV line of numbers. Kept apart from
// the subcommands so that the fuzzer (fuzz/fuzz_result.cpp) links it alone.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/scaling.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::cli {

struct PointFile {
  Vec x;                      ///< every entry finite
  std::optional<double> rho;  ///< constants.rho of a result JSON (finite, > 0), if it has one
  bool from_json = false;
  std::string model;                  ///< "model" of a JSON file (empty when absent)
  std::optional<ModelOptions> shape;  ///< its "shape" (classes, hidden, rank, fit_intercept), if it has one
  std::optional<Index> features;      ///< its "shape.features", if it has one
  /// its "scaling" (the map onto the unit scale that x was fitted on), if it has one
  std::optional<Scaling> scaling;
  /// its "class_names" (a classifier's labels, as the user declared them: dpsosp.save of an
  /// estimator), each as text; empty when absent
  std::vector<std::string> class_names;
  /// its table rule (a run's --label, --categorical, --impute; dpsosp.save's
  /// categorical and impute), where it keeps one
  CsvColumn label;
  std::vector<CsvCategorical> categorical;
  std::vector<CsvImpute> impute;
  bool impute_zero = false;
};

/// Parses the text of a point file. `what` prefixes every message (e.g.
/// "--point result.json"). Throws dpsosp::Error with one line naming the
/// problem: invalid JSON, no "x" array, a non-numeric or non-finite entry, an
/// invalid constants.rho, a CSV field that is not a number, extra lines.
/// The dimension is checked by the caller, which knows the model.
PointFile parse_point_text(const std::string& text, const std::string& what);

/// Reads the file at `path` (at most 1 GiB) and parses it.
PointFile read_point_file(const std::string& path, const std::string& what);

}  // namespace dpsosp::cli
