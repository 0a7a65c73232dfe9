// dpsosp._core's accountants: the tree and Poisson figures, and the PLD
// (include/dpsosp/pld.hpp) as an object that composes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>

#include "bindings.hpp"
#include "dpsosp/dpsosp.hpp"

namespace py = pybind11;
using namespace dpsosp;

namespace {

privacy::Neighbouring neighbouring_of(const std::string& adjacency) {
  if (adjacency == "add-remove") return privacy::Neighbouring::kAddRemove;
  if (adjacency == "replace-one") return privacy::Neighbouring::kReplaceOne;
  throw Error("adjacency must be 'add-remove' or 'replace-one', got '" + adjacency + "'");
}

privacy::PldOptions options_of(double discretization, bool pessimistic) {
  privacy::PldOptions o;
  o.discretization = discretization;
  o.pessimistic = pessimistic;
  return o;
}

}  // namespace

void bind_privacy(py::module_& m) {
  m.def(
      "privacy_figures",
      [](const std::map<std::string, std::string>& values) {
        return dpsosp::python::to_python(privacy_figures(values, FrontEnd::kPython));
      },
      py::arg("values"), "The figures of `dpsosp privacy` (privacy_figures.hpp) for options as text by key.");
  m.def(
      "privacy_tree",
      [](double z, const std::vector<std::uint64_t>& steps, double delta) {
        const privacy::TreeAccount a = privacy::account_tree(z, steps, delta);
        py::dict d;
        d["epsilon_gdp"] = a.epsilon_gdp;
        d["epsilon_rdp"] = a.epsilon_rdp;
        d["epsilon_pld"] = privacy::tree_pld_epsilon(z, a.depth, delta);
        d["mu"] = a.mu;
        d["rho"] = a.rho;
        d["depth"] = a.depth;
        return d;
      },
      py::arg("noise_multiplier"), py::arg("steps"), py::arg("delta"),
      "Privacy of tree-aggregated Gaussian releases with the given phase lengths (replace-one): exact GDP, RDP "
      "and PLD figures.");
  m.def("privacy_poisson", &privacy::dpsgd_poisson_epsilon, py::arg("sampling_rate"), py::arg("noise_multiplier"),
        py::arg("steps"), py::arg("delta"), "epsilon of Poisson-subsampled DP-SGD (RDP, add/remove-one).");
  m.def(
      "privacy_poisson_pld",
      [](double q, double z, std::uint64_t steps, double delta, const std::string& adjacency, double h,
         bool pessimistic) {
        return privacy::dpsgd_pld_epsilon(q, z, steps, delta, neighbouring_of(adjacency), options_of(h, pessimistic));
      },
      py::arg("sampling_rate"), py::arg("noise_multiplier"), py::arg("steps"), py::arg("delta"),
      py::arg("adjacency") = "add-remove", py::arg("discretization") = 1e-4, py::arg("pessimistic") = true,
      "epsilon of Poisson-subsampled DP-SGD by PLD (pessimistic: a guarantee; pessimistic=False: a lower bound). "
      "noise_multiplier = sigma / sensitivity: sigma / C for add-remove, sigma / 2C for replace-one.");
  m.def(
      "privacy_poisson_pld_delta",
      [](double q, double z, std::uint64_t steps, double epsilon, const std::string& adjacency, double h) {
        return privacy::dpsgd_pld_delta(q, z, steps, epsilon, neighbouring_of(adjacency), options_of(h, true));
      },
      py::arg("sampling_rate"), py::arg("noise_multiplier"), py::arg("steps"), py::arg("epsilon"),
      py::arg("adjacency") = "add-remove", py::arg("discretization") = 1e-4,
      "delta of Poisson-subsampled DP-SGD at epsilon by PLD (pessimistic).");
  m.def(
      "calibrate_poisson",
      [](double q, std::uint64_t steps, double epsilon, double delta, const std::string& accountant,
         const std::string& adjacency) {
        const privacy::Neighbouring n = neighbouring_of(adjacency);
        if (accountant == "pld") return privacy::calibrate_dpsgd_noise_pld(q, steps, epsilon, delta, n);
        if (accountant != "rdp")
          throw Error("calibrate_poisson: accountant must be 'pld' or 'rdp', got '" + accountant + "'");
        if (n != privacy::Neighbouring::kAddRemove)
          throw Error("calibrate_poisson: the RDP accountant is for add-remove adjacency; use accountant='pld'");
        return privacy::calibrate_dpsgd_noise(q, steps, epsilon, delta);
      },
      py::arg("sampling_rate"), py::arg("steps"), py::arg("epsilon"), py::arg("delta"), py::arg("accountant") = "pld",
      py::arg("adjacency") = "add-remove",
      "The noise multiplier for which `steps` Poisson-subsampled Gaussian steps are (epsilon, delta)-DP.");
  m.def("gdp_epsilon", &privacy::gdp_epsilon, py::arg("mu"), py::arg("delta"), "Exact mu-GDP to (eps, delta).");

  py::class_<privacy::PrivacyLossDistribution>(
      m, "PrivacyLossDistribution",
      "A discretized privacy-loss distribution (docs/privacy-accounting.md): compose mechanisms, then read "
      "epsilon(delta) or delta(epsilon). Build one with pld_gaussian or pld_poisson_gaussian.")
      .def("compose", &privacy::PrivacyLossDistribution::compose, py::arg("other"),
           "The PLD of this mechanism followed by `other` (same discretization and rounding).")
      .def("self_compose", &privacy::PrivacyLossDistribution::self_compose, py::arg("times"),
           "The PLD of `times` runs of this mechanism.")
      .def("epsilon", &privacy::PrivacyLossDistribution::epsilon, py::arg("delta"))
      .def("delta", &privacy::PrivacyLossDistribution::delta, py::arg("epsilon"))
      .def_property_readonly("bins", &privacy::PrivacyLossDistribution::bins)
      .def_property_readonly("symmetric", &privacy::PrivacyLossDistribution::symmetric);
  // The budget (budget.hpp); dpsosp.Budget (python/dpsosp/_budget.py) wraps it.
  py::class_<Budget>(m, "Budget")
      .def(py::init<double, double>(), py::arg("epsilon"), py::arg("delta"))
      .def_property_readonly("epsilon", &Budget::epsilon)
      .def_property_readonly("delta", &Budget::delta)
      .def("spent", &Budget::spent)
      .def("remaining", &Budget::remaining)
      .def("charges", [](const Budget& b) { return b.ledger().size(); })
      .def("to_json", [](const Budget& b) { return b.to_json().dump(1); })
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& where) {
            nlohmann::json j;
            try {
              j = nlohmann::json::parse(text);
            } catch (const nlohmann::json::exception&) {
              throw Error(where + ": not JSON (a budget file is written by Budget.save or dpsosp budget --new)");
            }
            return Budget::from_json(j, where);
          },
          py::arg("text"), py::arg("where"))
      .def(
          "charge_curve",
          [](Budget& b, const std::string& curve, const std::string& label, bool check) {
            const PrivacyCurve c = PrivacyCurve::from_json(nlohmann::json::parse(curve), "curve");
            if (check) b.check(c, label);
            b.charge(c, label);
          },
          py::arg("curve"), py::arg("label"), py::arg("check") = true);
  m.def(
      "pld_gaussian",
      [](double sigma, double sensitivity, double h, bool pessimistic) {
        return privacy::gaussian_pld(sigma, sensitivity, options_of(h, pessimistic));
      },
      py::arg("sigma"), py::arg("sensitivity") = 1.0, py::arg("discretization") = 1e-4, py::arg("pessimistic") = true,
      "PLD of the Gaussian mechanism: noise sigma on a release of L2 sensitivity `sensitivity`.");
  m.def(
      "pld_poisson_gaussian",
      [](double q, double sigma, double record_bound, const std::string& adjacency, double h, bool pessimistic) {
        return privacy::poisson_gaussian_pld(q, sigma, record_bound, neighbouring_of(adjacency),
                                             options_of(h, pessimistic));
      },
      py::arg("sampling_rate"), py::arg("sigma"), py::arg("record_bound") = 1.0, py::arg("adjacency") = "add-remove",
      py::arg("discretization") = 1e-4, py::arg("pessimistic") = true,
      "PLD of one Poisson-subsampled Gaussian release: each record sampled with probability sampling_rate, "
      "contributing at most record_bound (L2), noise sigma.");
}
