// dpsosp._core.audit: the empirical privacy audit (audit.hpp) for dpsosp.audit and dpsosp.torch.audit, its result
// as `dpsosp audit` writes it (report.hpp).
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "dpsosp/report.hpp"

namespace dpsosp::python {

void bind_audit(py::module_& m) {
  // The empirical privacy audit (audit.hpp), its report as `dpsosp audit` writes it. caller: None (the audit's
  // own canary model; the runs in parallel, the GIL released) or factory(records) -> gradients(x, ids), the
  // caller's model of the linear canary (dpsosp.torch.audit): the runs serial, the GIL held throughout.
  m.def(
      "audit",
      [](const std::string& algo, double epsilon, double delta, Index runs, Index batch, Index steps, Index dim,
         double epochs, const std::optional<std::string>& sampling, std::optional<Index> bands,
         const std::string& canary, double canary_norm, double G, double confidence, double test_level, Index canaries,
         std::uint64_t seed, int threads, const std::string& tamper, const std::string& noise,
         const py::object& caller) {
        audit::AuditOptions o;
        o.algorithm = parse_algorithm(algo);
        if (!is_private_algorithm(o.algorithm))
          throw Error("audit: algo " + algo + " is not a private algorithm, nothing to audit");
        o.privacy.epsilon = epsilon;
        o.privacy.delta = delta;
        o.runs = runs;
        o.batch = batch;
        o.steps = steps;
        o.dim = dim;
        o.epochs = epochs;
        if (sampling) {
          if (*sampling != "order" && *sampling != "poisson")
            throw Error("audit: sampling must be order or poisson, got '" + *sampling + "'");
          o.sampling = *sampling == "order" ? Sampling::kOrder : Sampling::kPoisson;
        }
        o.bands = bands;
        o.canary = audit::parse_canary(canary);
        o.canary_norm = canary_norm;
        o.G = G;
        o.confidence = confidence;
        o.test_level = test_level;
        o.canaries = canaries;
        o.seed = seed;
        o.threads = threads;
        o.tampering = audit::parse_tampering(tamper);
        if (noise != "float" && noise != "secure")
          throw Error("audit: noise must be float or secure, got '" + noise + "'");
        if (noise == "secure") o.privacy.noise = NoiseMode::kSecure;
        if (caller.is_none()) {
          o.Validate();
          audit::AuditResult r;
          {
            py::gil_scoped_release release;
            r = audit::run_audit(o);
          }
          return to_python(audit_report(o, r));
        }
        if (!PyCallable_Check(caller.ptr())) throw Error("audit: caller must be callable");
        // Every callback runs on this thread, which holds the GIL for the whole audit.
        o.caller = [&caller](const RowMatrix& records) {
          const Index d = static_cast<Index>(records.cols());  // dim, or the Poisson paths' canaries
          py::object gradients = caller(py::array_t<double>({records.rows(), records.cols()}, records.data()));
          if (!PyCallable_Check(gradients.ptr()))
            throw Error("audit: caller(records) must return a callable gradients(x, ids)");
          CallerGradients g;
          g.name = "caller";
          g.dim = d;
          g.gradients = [gradients, d](const Vec& x, const std::vector<std::int64_t>& ids, RowMatrix& out) {
            out = gradients(x, py::array_t<std::int64_t>(static_cast<py::ssize_t>(ids.size()), ids.data()))
                      .cast<RowMatrix>();
            if (out.rows() != static_cast<Eigen::Index>(ids.size()) || out.cols() != static_cast<Eigen::Index>(d))
              throw Error("audit: gradients returned " + std::to_string(out.rows()) + " x " +
                          std::to_string(out.cols()) + " for " + std::to_string(ids.size()) + " records of " +
                          std::to_string(d) + " parameters");
          };
          return g;
        };
        o.Validate();
        return to_python(audit_report(o, audit::run_audit(o)));
      },
      py::arg("algo"), py::arg("epsilon"), py::arg("delta"), py::arg("runs"), py::arg("batch"), py::arg("steps"),
      py::arg("dim"), py::arg("epochs"), py::arg("sampling"), py::arg("bands"), py::arg("canary"),
      py::arg("canary_norm"), py::arg("G"), py::arg("confidence"), py::arg("test_level"), py::arg("canaries"),
      py::arg("seed"), py::arg("threads"), py::arg("tamper"), py::arg("noise"), py::arg("caller"),
      "The audit behind dpsosp.audit and dpsosp.torch.audit.");
}

}  // namespace dpsosp::python
