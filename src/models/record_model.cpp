// dpsosp: the model for records that are not in memory (a streamed record
// file): make_model from the file's header (model.hpp).
#include <algorithm>
#include <cmath>

#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "models/model_internal.hpp"

namespace dpsosp {

std::unique_ptr<Model> make_model(const std::string& name, const RecordFileInfo& records, const ModelOptions& options) {
  ModelOptions o = options;
  if (model_info(name).classifier && o.classes == 0) {
    if (!records.labeled)
      throw Error(name + " cannot infer the number of classes: the records have no labels; declare them (classes)");
    const double top = records.label_max;
    if (!(records.label_min >= 0.0 && std::floor(top) == top && top < 1e9))
      throw Error(name + ": the labels reach " + detail::format_number(top) + " (from " +
                  detail::format_number(records.label_min) +
                  "), expected non-negative integers (class indices); declare the classes");
    o.classes = std::max<Index>(2, static_cast<Index>(top) + 1);
  }
  return make_model(name, records.cols, o);
}

}  // namespace dpsosp
