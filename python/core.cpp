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

// The run's scaling (docs/report.md "scaling"): public, declared or estimated inside the guarantee.
py::dict scaling_dict(const ScaledSummary& r) {
  const Scaling& s = r.scaling;
  py::dict d;
  d["features"] = s.feature_source;
  d["normalize"] = s.normalize;
  d["public_constants"] = s.public_constants;
  if (s.maps_features()) {
    d["lower"] = s.lower;
    d["upper"] = s.upper;
  }
  if (s.has_target) {
    d["target"] =
        py::dict(py::arg("lower") = s.y_lower, py::arg("upper") = s.y_upper, py::arg("source") = s.target_source);
  } else {
    d["target"] = py::none();
  }
  if (!s.composition.empty()) {
    d["estimate"] =
        py::dict(py::arg("share") = s.share, py::arg("composition") = s.composition, py::arg("mu") = s.mu,
                 py::arg("rho") = s.rho, py::arg("epsilon") = s.epsilon, py::arg("delta") = s.delta,
                 py::arg("count_noise") = s.count_noise, py::arg("target_count_noise") = s.target_count_noise,
                 py::arg("columns") = s.columns, py::arg("histograms") = s.histograms,
                 py::arg("public_range") = std::vector<double>{-1048576.0, 1048576.0});
  }
  if (r.x_user) d["x_user"] = *r.x_user;
  return d;
}

py::dict summary_dict(const Summary& s) {
  py::dict d;
  d["x"] = s.x;
  d["algo"] = s.algorithm;
  d["seed"] = s.seed;
  d["sample_order"] = s.sample_order.empty() ? py::none() : py::cast(s.sample_order);
  d["noise_key"] = s.noise_key_source;
  const PrivacyRecord& p = s.privacy;
  d["private"] = p.is_private();
  if (p.is_private()) {
    d["guarantee"] = guarantee_text(p);
    d["caveats"] = privacy_caveats(p);
  }
  d["epsilon"] = p.epsilon;
  d["delta"] = p.delta;
  d["mu"] = p.mu;
  d["sigma"] = p.sigma;
  d["sensitivity"] = p.sensitivity;
  d["noise_multiplier"] = p.noise_multiplier;
  d["epsilon_rdp"] = p.epsilon_rdp;
  if (p.mechanism == MechanismKind::kPoissonGaussian || p.mechanism == MechanismKind::kBandedPoisson)
    d["epsilon_pld"] = p.epsilon_pld;
  d["zcdp_rho"] = p.zcdp_rho;
  d["depth"] = p.depth;
  if (p.mechanism == MechanismKind::kMatrixFactorization) {
    d["horizon"] = p.horizon;
    d["column_norm"] = p.column_norm;
    d["buffers"] = p.buffers;
  }
  if (p.mechanism == MechanismKind::kBandedPoisson) {
    d["horizon"] = p.horizon;
    d["column_norm"] = p.column_norm;
    d["bands"] = p.bands;
    d["sampling_rate"] = p.sampling_rate;
    d["cycles"] = p.cycles;
  }
  d["mechanism"] = mechanism_name(p.mechanism);
  d["noise"] = p.is_private() ? py::cast(noise_mode_name(p.noise)) : py::none();
  d["grid"] = p.grid;
  d["accounting"] = p.accounting();
  d["adjacency"] = adjacency_name(p.adjacency);
  if (p.is_private()) {  // both relations, so that runs compare like with like
    d["epsilon_replace_one"] = std::isfinite(p.epsilon_replace_one) ? py::cast(p.epsilon_replace_one) : py::none();
    d["epsilon_zero_out"] = std::isfinite(p.epsilon_zero_out) ? py::cast(p.epsilon_zero_out) : py::none();
  }
  d["samples_used"] = s.samples_used;
  d["gradient_evaluations"] = s.gradient_evaluations ? py::cast(*s.gradient_evaluations) : py::none();
  d["steps"] = s.steps;
  d["o1_calls"] = s.o1_calls;
  d["perturbations"] = s.perturbations;
  d["phase_lengths"] = s.phase_lengths;
  d["params"] = s.params;
  d["termination"] = termination_name(s.termination);
  d["interrupted"] = s.interrupted();
  d["warnings"] = s.warnings;
  d["constants"] = py::dict(py::arg("G") = s.constants.G, py::arg("M") = s.constants.M,
                            py::arg("rho") = s.constants.rho, py::arg("B") = s.constants.B);
  if (s.estimate) {
    py::dict e;
    e["records"] = s.estimate->records;
    e["rounds"] = s.estimate->rounds;
    e["count_noise"] = s.estimate->count_noise;
    if (s.estimate->G) e["G"] = *s.estimate->G;
    if (s.estimate->M) e["M"] = *s.estimate->M;
    d["estimate"] = e;
  }
  return d;
}

py::dict diagnostics_dict(const Summary& s) {
  const Diagnostics& g = s.diagnostics;
  py::dict d;
  d["note"] =
      "computed from the private data without noise: NOT covered by the privacy guarantee; "
      "publish only where the data need no protection (release_only=True leaves this out)";
  const Index checked = g.checked_o1 + g.checked_o2;
  d["clipped"] = py::dict(
      py::arg("o1") = g.clipped_o1, py::arg("o2") = g.clipped_o2,
      py::arg("fraction") =
          checked > 0
              ? py::object(py::float_(static_cast<double>(g.clipped_o1 + g.clipped_o2) / static_cast<double>(checked)))
              : py::object(py::none()));
  d["nonfinite"] = py::dict(py::arg("o1") = g.nonfinite_o1, py::arg("o2") = g.nonfinite_o2);
  d["gradient_evaluations"] = g.gradient_evaluations;
  d["seconds"] = g.seconds;
  return d;
}

py::dict shape_dict(const Model& model) {
  const ModelOptions o = model.options();
  py::dict d;
  d["features"] = model.features();
  d["classes"] = o.classes;
  d["hidden"] = o.hidden;
  d["rank"] = o.rank;
  d["fit_intercept"] = o.fit_intercept;
  return d;
}

}  // namespace dpsosp::python

namespace {

using dpsosp::python::make_dataset;

py::dict certificate_dict(const Certificate& c) {
  py::dict d;
  d["grad_norm"] = c.grad_norm;
  d["lambda_min"] = c.lambda_min;
  d["sosp_gap"] = c.sosp_gap;
  d["lambda_residual"] = c.lambda_residual;
  d["lambda_converged"] = c.lambda_converged;
  return d;
}

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

  dpsosp::python::bind_run(m);

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
        return certificate_dict(c);
      },
      py::arg("model"), py::arg("X"), py::arg("y") = py::none(), py::arg("x"), py::arg("rho") = 1.0,
      py::arg("classes") = 0, py::arg("hidden") = 32, py::arg("rank") = 1, py::arg("fit_intercept") = false,
      "Gradient norm, smallest Hessian eigenvalue and SOSP gap of x on the records X, y.");

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
        return certificate_dict(dpsosp::certify_population(*p.population, x, rho));
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
