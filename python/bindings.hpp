// dpsosp._core's parts (core.cpp: the module and the small functions; run.cpp:
// run; audit.cpp: audit), and what they share: the report as Python values and the records' copy.
#pragma once
#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include "dpsosp/dpsosp.hpp"

namespace py = pybind11;

namespace dpsosp::python {

/// Dense records (and labels, if any) in the library's storage.
Dataset make_dataset(const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y);
/// A report's JSON (report.hpp) as Python values: dicts, lists, numbers, None for null.
py::object to_python(const nlohmann::json& j);
/// Defines _core.run (run.cpp).
void bind_run(py::module_& m);
/// Defines _core.audit (audit.cpp).
void bind_audit(py::module_& m);

}  // namespace dpsosp::python
