// dpsosp._core's parts (core.cpp: the module and the small functions; run.cpp:
// run), and what they share: the dicts of a report and the records' copy.
#pragma once
#include <pybind11/pybind11.h>

#include "dpsosp/dpsosp.hpp"

namespace py = pybind11;

namespace dpsosp::python {

/// Dense records (and labels, if any) in the library's storage.
Dataset make_dataset(const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y);
/// The release: every entry covered by the run's privacy guarantee (SPEC section 8).
py::dict summary_dict(const Summary& s);
/// A scaled run's "scaling" entry (the CLI's scaling_json).
py::dict scaling_dict(const ScaledSummary& r);
/// Computed from the private data without noise: not covered by the guarantee.
py::dict diagnostics_dict(const Summary& s);
/// The options that shape the model and its feature count (as the CLI's report).
py::dict shape_dict(const Model& model);
/// Defines _core.run (run.cpp).
void bind_run(py::module_& m);

}  // namespace dpsosp::python
