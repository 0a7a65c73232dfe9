// dpsosp._core: the library for Python. Arguments arrive as numpy arrays
// (Eigen::Ref, no copies where the layout allows); dpsosp::Error arrives as
// ValueError (it derives from std::invalid_argument).
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <limits>

#include "dpsosp/dpsosp.hpp"

namespace py = pybind11;
using namespace dpsosp;

namespace {

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

py::dict certificate_dict(const Certificate& c) {
  py::dict d;
  d["grad_norm"] = c.grad_norm;
  d["lambda_min"] = c.lambda_min;
  d["sosp_gap"] = c.sosp_gap;
  d["lambda_residual"] = c.lambda_residual;
  d["lambda_converged"] = c.lambda_converged;
  return d;
}

// NaN and Inf are refused before anything is copied or any noise drawn
// (SPEC section 8), naming the entry as numpy would.
void check_finite_arrays(const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y) {
  const auto fail = [](const std::string& where, double v) {
    const std::string value = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    throw Error("run: " + where + " is " + value + "; NaN and Inf are not allowed");
  };
  if (!X.allFinite()) {
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        if (!std::isfinite(X(i, j))) fail("X[" + std::to_string(i) + ", " + std::to_string(j) + "]", X(i, j));
  }
  if (y && !y->allFinite()) {
    for (Eigen::Index i = 0; i < y->size(); ++i)
      if (!std::isfinite((*y)[i])) fail("y[" + std::to_string(i) + "]", (*y)[i]);
  }
}

std::optional<NoiseKey> noise_key_of(const std::optional<py::bytes>& key, const std::optional<std::string>& file) {
  if (key && file) throw Error("run: give noise_key or noise_key_file, not both");
  if (file) return NoiseKey::from_file(*file);
  if (!key) return std::nullopt;
  const std::string raw = *key;
  if (raw.size() != 16) {
    throw Error("run: noise_key must be 16 bytes (a 128-bit key, e.g. dpsosp.generate_noise_key()), got " +
                std::to_string(raw.size()));
  }
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0; i < 16; ++i) bytes[i] = static_cast<std::uint8_t>(raw[i]);
  return NoiseKey::from_bytes(bytes);
}

// The release: every entry covered by the run's privacy guarantee (SPEC section 8).
py::dict summary_dict(const Summary& s) {
  py::dict d;
  d["x"] = s.x;
  d["algo"] = s.algorithm;
  d["seed"] = s.seed;
  d["noise_key"] = s.noise_key_source;
  const PrivacyRecord& p = s.privacy;
  d["epsilon"] = p.epsilon;
  d["delta"] = p.delta;
  d["mu"] = p.mu;
  d["sigma"] = p.sigma;
  d["sensitivity"] = p.sensitivity;
  d["noise_multiplier"] = p.noise_multiplier;
  d["epsilon_rdp"] = p.epsilon_rdp;
  if (p.mechanism == MechanismKind::kPoissonGaussian) d["epsilon_pld"] = p.epsilon_pld;
  d["zcdp_rho"] = p.zcdp_rho;
  d["depth"] = p.depth;
  if (p.mechanism == MechanismKind::kMatrixFactorization) {
    d["horizon"] = p.horizon;
    d["column_norm"] = p.column_norm;
    d["buffers"] = p.buffers;
  }
  d["mechanism"] = mechanism_name(p.mechanism);
  d["noise"] = p.is_private() ? py::cast(noise_mode_name(p.noise)) : py::none();
  d["grid"] = p.grid;
  d["accounting"] = p.accounting();
  d["adjacency"] = adjacency_name(p.adjacency);
  d["samples_used"] = s.samples_used;
  d["gradient_evaluations"] = s.gradient_evaluations ? py::cast(*s.gradient_evaluations) : py::none();
  d["steps"] = s.steps;
  d["o1_calls"] = s.o1_calls;
  d["perturbations"] = s.perturbations;
  d["phase_lengths"] = s.phase_lengths;
  d["params"] = s.params;
  d["termination"] = termination_name(s.termination);
  d["interrupted"] = s.interrupted();
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

// Computed from the private data without noise: not covered by the guarantee.
py::dict diagnostics_dict(const Summary& s) {
  const Diagnostics& g = s.diagnostics;
  py::dict d;
  d["note"] = "computed from the private data without noise: NOT covered by the privacy guarantee; "
              "publish only where the data need no protection (release_only=True leaves this out)";
  d["clipped"] = py::dict(py::arg("o1") = g.clipped_o1, py::arg("o2") = g.clipped_o2);
  d["nonfinite"] = py::dict(py::arg("o1") = g.nonfinite_o1, py::arg("o2") = g.nonfinite_o2);
  d["gradient_evaluations"] = g.gradient_evaluations;
  d["seconds"] = g.seconds;
  return d;
}

}  // namespace

void bind_privacy(py::module_& m);  // python/privacy.cpp

PYBIND11_MODULE(_core, m) {
  m.doc() = "dpsosp: differentially private second-order stationary points";

  m.def(
      "run",
      [](const std::string& model_name, const Eigen::Ref<const RowMatrix>& X,
         const std::optional<Eigen::Ref<const Vec>>& y, const std::string& algo, std::optional<double> epsilon,
         double delta, const py::object& G, const py::object& M, double rho, double B,
         std::optional<std::uint64_t> seed,
         std::optional<double> alpha_scale, std::optional<Index> batch_size, std::optional<Index> period,
         std::optional<double> epochs, std::optional<double> learning_rate, std::optional<Vec> x0, Index max_steps,
         std::optional<Index> max_phase_length, int threads, Index classes, Index hidden, Index rank,
         const std::optional<py::bytes>& noise_key, const std::optional<std::string>& noise_key_file,
         bool release_only, const std::string& noise, std::optional<double> tail, std::optional<bool> o2,
         const std::optional<std::string>& accountant) {
        RunOptions o;
        o.algorithm = parse_algorithm(algo);
        // epsilon: 1 by default for a private algorithm (as the CLI's --epsilon);
        // a non-private one takes none, and refuses a finite one (Validate).
        if (epsilon || is_private_algorithm(o.algorithm)) o.privacy = PrivacyTarget{epsilon.value_or(1.0), delta};
        if (noise != "float" && noise != "secure") throw Error("run: noise must be 'float' or 'secure', got '" + noise + "'");
        if (noise == "secure") {
          if (!o.privacy) throw Error("run: noise = secure: " + algo + " is non-private and adds no noise");
          o.privacy->noise = NoiseMode::kSecure;
        }
        // G and M: a number, or "auto" (the default): a private estimate for a
        // private run (clip_estimate.hpp), 1 for a non-private one.
        const auto constant = [&](const py::object& v, const char* name, bool& estimate) {
          if (!py::isinstance<py::str>(v)) return v.cast<double>();
          if (v.cast<std::string>() != "auto")
            throw Error(std::string("run: ") + name + " must be a number or 'auto', got '" + v.cast<std::string>() + "'");
          if (o.is_private_run()) estimate = true;
          return 1.0;
        };
        o.constants = {constant(G, "G", o.estimate.G), constant(M, "M", o.estimate.M), rho, B};
        o.tail = tail;
        o.o2 = o2;
        o.alpha_scale = alpha_scale;
        o.batch_size = batch_size;
        o.period = period;
        o.epochs = epochs;
        if (accountant) {
          if (*accountant != "pld" && *accountant != "rdp")
            throw Error("run: accountant must be 'pld' or 'rdp', got '" + *accountant + "'");
          o.accountant = *accountant == "pld" ? Accountant::kPld : Accountant::kRdp;
        }
        o.learning_rate = learning_rate;
        o.max_steps = max_steps;
        o.max_phase_length = max_phase_length;
        o.threads = threads;
        // The same rules, and words, as the CLI's (before the records are copied).
        o.Validate();
        check_finite_arrays(X, y);
        o.noise_key = noise_key_of(noise_key, noise_key_file);
        // Every algorithm but dpsgd with epochs (Poisson sampling) reads each
        // record once, in the seed's sample order: the records are copied in
        // that order, so the run reads them front to back (the same results).
        if (!seed) seed = secure_random_seed();
        o.seed = seed;
        Dataset data;
        if (o.single_pass() && X.rows() <= std::numeric_limits<std::uint32_t>::max()) {
          data = y ? copy_in_sample_order(X, *y, *seed) : copy_in_sample_order(X, Vec(), *seed);
        } else {
          data = make_dataset(X, y);
        }
        ModelOptions mo;
        mo.classes = classes;
        mo.hidden = hidden;
        mo.rank = rank;
        const auto model = make_model(model_name, data.cols(), mo, &data);
        const Vec start = x0 ? *x0 : Vec::Zero(static_cast<Eigen::Index>(model->dim()));
        Summary s;
        {
          py::gil_scoped_release release;
          s = minimize(*model, data, start, o);
        }
        py::dict result = summary_dict(s);
        if (!release_only) result["diagnostics"] = diagnostics_dict(s);
        return result;
      },
      py::arg("model"), py::arg("X"), py::arg("y") = py::none(), py::arg("algo") = "spider-mf-adaptive",
      py::arg("epsilon") = py::none(), py::arg("delta") = 1e-6, py::arg("G") = "auto", py::arg("M") = "auto",
      py::arg("rho") = 1.0, py::arg("B") = 1.0, py::arg("seed") = py::none(), py::arg("alpha_scale") = py::none(),
      py::arg("batch_size") = py::none(), py::arg("period") = py::none(), py::arg("epochs") = py::none(),
      py::arg("learning_rate") = py::none(), py::arg("x0") = py::none(), py::arg("max_steps") = 0,
      py::arg("max_phase_length") = py::none(), py::arg("threads") = 0, py::arg("classes") = 0,
      py::arg("hidden") = 32, py::arg("rank") = 1, py::arg("noise_key") = py::none(),
      py::arg("noise_key_file") = py::none(), py::arg("release_only") = false, py::arg("noise") = "float",
      py::arg("tail") = py::none(), py::arg("o2") = py::none(),
      py::arg("accountant") = py::none(),
      "Run an optimizer on the records X (n x p) with labels y; returns the report as a dict. Everything but "
      "its 'diagnostics' is covered by the privacy guarantee. epsilon defaults to 1 for a private algorithm; "
      "options an algorithm does not read are refused (dpsosp.algorithms() lists what each reads). seed keys "
      "the public randomness (sample order, perturbations); the privacy noise is keyed by noise_key (16 secret "
      "bytes) or noise_key_file, by default a fresh key from the OS that is kept nowhere. noise='secure' puts every "
      "release on a grid with exact discrete Gaussian noise (docs/noise.md). accountant ('pld', the default, or 'rdp') "
      "calibrates and accounts dpsgd with epochs > 0.");

  m.def(
      "generate_noise_key", [] {
        const NoiseKey key = NoiseKey::generate();
        return py::bytes(reinterpret_cast<const char*>(key.bytes().data()), key.bytes().size());
      },
      "16 fresh random bytes from the OS, for run(noise_key=...): keep them as secret as the data.");

  m.def(
      "certify",
      [](const std::string& model_name, const Eigen::Ref<const RowMatrix>& X,
         const std::optional<Eigen::Ref<const Vec>>& y, const Vec& x, double rho, Index classes, Index hidden,
         Index rank) {
        const Dataset data = make_dataset(X, y);
        ModelOptions mo;
        mo.classes = classes;
        mo.hidden = hidden;
        mo.rank = rank;
        const auto model = make_model(model_name, data.cols(), mo, &data);
        return certificate_dict(certify_empirical(*model, data, x, rho));
      },
      py::arg("model"), py::arg("X"), py::arg("y") = py::none(), py::arg("x"), py::arg("rho") = 1.0,
      py::arg("classes") = 0, py::arg("hidden") = 32, py::arg("rank") = 1,
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
      py::arg("spec"), "Generate a synthetic problem: 'phase-retrieval:n=...,d=...,seed=...' (also pca, gaussian-mixture).");

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
            {kKnobBatchSize, "batch_size"}, {kKnobPeriod, "period"},           {kKnobEpochs, "epochs"},
            {kKnobLearningRate, "learning_rate"}, {kKnobAlphaScale, "alpha_scale"},
            {kKnobMaxPhaseLength, "max_phase_length"}, {kKnobAccountant, "accountant"}};
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
}
