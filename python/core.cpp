// dpsosp._core: the library for Python, a thin private module under the
// package (python/dpsosp/), which checks keywords and converts arrays first.
// Arguments arrive as numpy arrays (Eigen::Ref, no copies where the layout
// allows); dpsosp::Error arrives as ValueError (it derives from
// std::invalid_argument). run() is in run.cpp.
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>

#include "bindings.hpp"
#include "dpsosp/report.hpp"

using namespace dpsosp;

namespace dpsosp::python {

Dataset make_dataset(const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y) {
  RowMatrix records = allocate_records(static_cast<Index>(X.rows()), static_cast<Index>(X.cols()));
  records = X;  // into the huge-page-advised storage (same size: no reallocation)
  Vec labels;
  if (y) {
    labels = allocate_labels(static_cast<Index>(y->size()));
    labels = *y;  // likewise
  }
  return Dataset(std::move(records), std::move(labels));
}

py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());  // doubles in 17 digits: the same values back
}

}  // namespace dpsosp::python

namespace {

using dpsosp::python::make_dataset;
using dpsosp::python::to_python;

ModelOptions model_options(Index classes, Index hidden, Index rank, bool fit_intercept) {
  ModelOptions mo;
  mo.classes = classes;
  mo.hidden = hidden;
  mo.rank = rank;
  mo.fit_intercept = fit_intercept;
  return mo;
}

// The model a point was fitted with, for records of `features` columns.
std::unique_ptr<Model> model_for(const std::string& name, Index features, Index classes, Index hidden, Index rank,
                                 bool fit_intercept) {
  return make_model(name, features, model_options(classes, hidden, rank, fit_intercept));
}

}  // namespace

void bind_privacy(py::module_& m);  // python/privacy.cpp

PYBIND11_MODULE(_core, m) {
  m.doc() = "dpsosp: differentially private second-order stationary points";
  // A refusal of the labels (a ValueError): run(data=...) adds where a CSV
  // table's labels were read from, as the CLI does.
  py::register_exception<LabelError>(m, "LabelError", PyExc_ValueError);

  dpsosp::python::bind_run(m);
  dpsosp::python::bind_audit(m);

  m.def(
      "write_records",
      [](const std::string& path, const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y,
         std::optional<std::uint64_t> shuffle_seed, const std::string& values) {
        for (Eigen::Index i = 0; i < X.rows(); ++i)
          for (Eigen::Index j = 0; j < X.cols(); ++j)
            if (!std::isfinite(X(i, j)))
              throw Error("write_records: X[" + std::to_string(i) + ", " + std::to_string(j) +
                          "] is not finite; NaN and Inf are not allowed");
        if (y) {
          if (static_cast<Eigen::Index>(y->size()) != X.rows())
            throw Error("write_records: " + std::to_string(y->size()) + " labels for " + std::to_string(X.rows()) +
                        " records");
          for (Eigen::Index i = 0; i < y->size(); ++i)
            if (!std::isfinite((*y)(i)))
              throw Error("write_records: y[" + std::to_string(i) + "] is not finite; NaN and Inf are not allowed");
        }
        RecordWriteOptions w;
        w.values = parse_record_value_type(values);
        w.shuffle_seed = shuffle_seed;
        write_record_file(dpsosp::python::make_dataset(X, y), path, w);
      },
      py::arg("path"), py::arg("X"), py::arg("y") = py::none(), py::arg("shuffle_seed") = py::none(),
      py::arg("values") = "float64",
      "Write the records X (and labels y) to a record file, which run(model, data=path, stream=True) reads front "
      "to back (as `dpsosp convert` writes them; shuffle_seed: in that public seed's sample order).");

  m.def(
      "file_format",
      [](const std::string& path) -> py::object {
        try {
          return py::str(format_info(guess_file_format(path)).name);
        } catch (const Error&) {
          return py::none();  // neither its first bytes nor its name tell (the caller says so in its words)
        }
      },
      py::arg("path"),
      "The data format a file says it is (its first bytes, else its name): csv, libsvm, idx, records.");

  m.def(
      "load_table",
      [](const std::string& path, const std::optional<std::string>& label, bool labeled,
         const std::vector<std::string>& class_names,
         const std::vector<std::pair<std::string, std::vector<std::string>>>& categorical, bool impute_zero,
         const std::vector<std::pair<std::string, std::string>>& impute) {
        // The CLI's CSV loader and its table rule (--label, --classes a,b,c,
        // --categorical, --impute; docs/data-formats.md): the same records.
        LoadOptions lo;
        lo.keyword_words = true;  // refusals in the keywords' words (label=, impute='zero', ...)
        lo.labeled = labeled;
        if (label) lo.label_column = *label;
        lo.class_names = class_names;
        for (const auto& [column, categories] : categorical) lo.categorical.push_back({column, categories});
        lo.impute_zero = impute_zero;
        for (const auto& [column, value] : impute) lo.impute.push_back({column, value});
        std::vector<bool> one_hot;
        CsvNotes notes;
        const Dataset data = load_csv(path, lo, &one_hot, &notes);
        return py::make_tuple(RowMatrix(data.dense()), data.has_labels() ? py::cast(Vec(data.labels())) : py::none(),
                              one_hot, notes.warnings, notes.label_origin);
      },
      py::arg("path"), py::arg("label"), py::arg("labeled"), py::arg("class_names"), py::arg("categorical"),
      py::arg("impute_zero"), py::arg("impute"),
      "A CSV table by the CLI's loader: (X, y or None, one-hot flags per feature, warnings on its layout, where its "
      "labels were read from where the label column was not chosen, else '').");

  m.def(
      "generate_noise_key",
      [] {
        const NoiseKey key = NoiseKey::generate();
        return py::bytes(reinterpret_cast<const char*>(key.bytes().data()), key.bytes().size());
      },
      "16 fresh random bytes from the OS, for run(noise_key=...): keep them as secret as the data.");

  m.def(
      "certify",
      [](const std::string& model_name, const Eigen::Ref<const RowMatrix>& X,
         const std::optional<Eigen::Ref<const Vec>>& y, const Vec& x, double rho, Index classes, Index hidden,
         Index rank, bool fit_intercept) {
        const Dataset data = make_dataset(X, y);
        const auto model =
            make_model(model_name, data.cols(), model_options(classes, hidden, rank, fit_intercept), &data);
        Certificate c;
        {
          py::gil_scoped_release release;  // it can take a while on large models: let other threads run
          c = certify_empirical(*model, data, x, rho);
        }
        return to_python(certificate_report(c));
      },
      py::arg("model"), py::arg("X"), py::arg("y") = py::none(), py::arg("x"), py::arg("rho") = 1.0,
      py::arg("classes") = 0, py::arg("hidden") = 32, py::arg("rank") = 1, py::arg("fit_intercept") = false,
      "Gradient norm, smallest Hessian eigenvalue and SOSP gap of x on the records X, y.");

  m.def(
      "certify_operator",
      [](const Vec& gradient, const py::object& hvp, double rho) {
        const HvpFunction op = [&hvp](const Vec& v, Vec& out) { out = hvp(v).cast<Vec>(); };
        return to_python(certificate_report(certify_operator(gradient, op, rho)));
      },
      py::arg("gradient"), py::arg("hvp"), py::arg("rho") = 1.0,
      "The certificate of a point from its objective's gradient and Hessian-vector product hvp(v) -> H v.");

  m.def(
      "synthetic",
      [](const std::string& spec) {
        const SyntheticProblem p = make_synthetic(spec);
        py::dict d;
        d["name"] = p.name;
        d["model"] = p.model;
        d["X"] = p.data.dense();
        d["y"] = p.data.labels();
        d["x_star"] = p.x_star;
        d["saddle"] = p.saddle;
        d["params"] = p.params;
        return d;
      },
      py::arg("spec"),
      "Generate a synthetic problem: 'phase-retrieval:n=...,d=...,seed=...' (also pca, gaussian-mixture).");

  m.def(
      "certify_population",
      [](const std::string& spec, const Vec& x, double rho) {
        const SyntheticProblem p = make_synthetic(spec);
        if (!p.population) throw Error("certify_population: " + p.name + " has no known population");
        return to_python(certificate_report(dpsosp::certify_population(*p.population, x, rho)));
      },
      py::arg("spec"), py::arg("x"), py::arg("rho") = 1.0,
      "Certificate of x for the known population of a synthetic problem.");

  bind_privacy(m);
  m.def("algorithms", &algorithm_names, "Names accepted by run(algo=...).");
  m.def(
      "algorithm_table",
      [] {
        // The algorithm table: each row's name, whether it is private, its
        // mechanism and the options it reads.
        py::list rows;
        const std::pair<Knob, const char*> knobs[] = {
            {kKnobBatchSize, "batch_size"},   {kKnobPeriod, "period"},
            {kKnobEpochs, "epochs"},          {kKnobLearningRate, "learning_rate"},
            {kKnobAlphaScale, "alpha_scale"}, {kKnobMaxPhaseLength, "max_phase_length"},
            {kKnobAccountant, "accountant"}};
        for (const AlgorithmInfo& info : algorithm_table()) {
          py::dict r;
          r["name"] = info.name;
          r["description"] = info.description;
          r["private"] = info.is_private;
          r["mechanism"] = mechanism_name(info.mechanism);
          py::list options;
          for (const auto& [knob, name] : knobs)
            if (info.knobs & knob) options.append(name);
          r["options"] = options;
          r["overrides"] = override_names(info.overrides);
          rows.append(r);
        }
        return rows;
      },
      "The algorithm table: a dict per algorithm (name, description, private, mechanism, options, overrides).");
  m.def("models", &model_names, "Names accepted by run(model=...).");
  m.def("count_rule_text", &count_rule_text, py::arg("min"), py::arg("max"),
        "The words of a count option's rule, as the CLI's ('an integer in [1, 10]').");

  m.def(
      "predict",
      [](const std::string& name, const Eigen::Ref<const RowMatrix>& X, const Vec& x, Index classes, Index hidden,
         Index rank, bool fit_intercept, bool proba) -> py::object {
        const Dataset data = make_dataset(X, std::nullopt);
        const auto model = model_for(name, data.cols(), classes, hidden, rank, fit_intercept);
        if (proba) return py::cast(predict_proba(*model, x, data));
        return py::cast(dpsosp::predict(*model, x, data));
      },
      py::arg("model"), py::arg("X"), py::arg("x"), py::arg("classes"), py::arg("hidden"), py::arg("rank"),
      py::arg("fit_intercept"), py::arg("proba") = false,
      "Predictions (or, with proba, class probabilities) of the point x of a model on the records X.");
  m.def(
      "scale_records",
      [](const Eigen::Ref<const RowMatrix>& X, const std::vector<double>& lower, const std::vector<double>& upper,
         bool normalize) {
        Scaling s;
        s.lower = lower;
        s.upper = upper;
        s.normalize = normalize;
        return s.apply(make_dataset(X, std::nullopt)).dense();
      },
      py::arg("X"), py::arg("lower"), py::arg("upper"), py::arg("normalize"),
      "The records on the unit scale of a run's scaling (clipped into the box, mapped onto [-1, 1]).");
  m.def(
      "model_dim",
      [](const std::string& name, Index features, Index classes, Index hidden, Index rank, bool fit_intercept) {
        return model_for(name, features, classes, hidden, rank, fit_intercept)->dim();
      },
      py::arg("model"), py::arg("features"), py::arg("classes"), py::arg("hidden"), py::arg("rank"),
      py::arg("fit_intercept"), "The dimension of a model's parameter vector x.");
}
