// dpsosp._core.run: one optimizer run for Python (the package's run() checks
// the keywords and converts the arrays first). The options go through the
// library's rules, in its words with the fields named as run() names them;
// Ctrl-C and the callback are served between steps.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "bindings.hpp"

namespace dpsosp::python {
namespace {

// "RunOptions: privacy.epsilon = 1: ..." -> "epsilon = 1: ...": the library's
// words with the field named as the keyword (the CLI names it --epsilon).
[[noreturn]] void refuse_in_python_words(const Error& e) {
  static const std::pair<const char*, const char*> kFields[] = {
      {"privacy.noise", "noise"}, {"privacy.epsilon", "epsilon"}, {"privacy.delta", "delta"},
      {"privacy.adjacency", "adjacency"}, {"privacy", "epsilon"}};
  std::string m = e.what();
  const std::string prefix = "RunOptions: ";
  if (m.compare(0, prefix.size(), prefix) != 0) throw e;
  m = m.substr(prefix.size());
  for (const auto& [field, keyword] : kFields) {
    if (m.compare(0, std::strlen(field), field) == 0) {
      m = keyword + m.substr(std::strlen(field));
      break;
    }
  }
  throw Error(m);
}

std::string shown(double v) { return py::repr(py::float_(v)).cast<std::string>(); }

// NaN and Inf are refused before anything is copied or any noise drawn
// (SPEC section 8), naming the entry as numpy would.
void check_finite_arrays(const Eigen::Ref<const RowMatrix>& X, const std::optional<Eigen::Ref<const Vec>>& y) {
  const auto fail = [](const std::string& where, double v) {
    const std::string value = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    throw Error("run: " + where + " is " + value + "; NaN and Inf are not allowed");
  };
  bool finite = true;
  for (Eigen::Index i = 0; finite && i < X.rows(); ++i)
    finite = all_finite(X.row(i).data(), static_cast<Index>(X.cols()));
  if (!finite) {
    for (Eigen::Index i = 0; i < X.rows(); ++i)
      for (Eigen::Index j = 0; j < X.cols(); ++j)
        if (!std::isfinite(X(i, j))) fail("X[" + std::to_string(i) + ", " + std::to_string(j) + "]", X(i, j));
  }
  if (y && !all_finite(y->data(), static_cast<Index>(y->size()))) {
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

void set_overrides(const std::map<std::string, double>& given, ParameterOverrides& o) {
  for (const auto& [k, v] : given) {
    const std::string field = "overrides." + k;
    const auto count = [&] {
      if (!(v >= 1 && v <= 9007199254740992.0 && std::floor(v) == v))
        throw Error(field + ": expected " + count_rule_text(1, std::uint64_t{1} << 53) + ", got " + shown(v));
      return static_cast<Index>(v);
    };
    if (k == "b") o.b = count();
    else if (k == "T") o.T = count();
    else if (k == "Gamma") o.Gamma = count();
    else {
      check_value(field, v, ValueRule::kPositive, shown(v));
      if (k == "alpha") o.alpha = v;
      else if (k == "kappa") o.kappa = v;
      else if (k == "sigma") o.sigma = v;
      else if (k == "noise_multiplier") o.noise_multiplier = v;
      else if (k == "eta") o.eta = v;
      else if (k == "zeta") o.zeta = v;
      else if (k == "threshold") o.threshold = v;
      else throw Error("overrides: unknown parameter '" + k + "' (" + override_names(~0u) + ")");
    }
  }
}

// The records as a Dataset: dense rows (copied in the run's sample order when
// it reads them once in that order: the same results, read front to back) or
// a scipy.sparse CSR matrix.
Dataset records_of(const py::object& X, const std::optional<Eigen::Ref<const Vec>>& y, const RunOptions& o) {
  Vec labels;
  if (y) labels = *y;
  if (py::hasattr(X, "indptr")) {
    SparseRowMatrix csr = X.cast<SparseRowMatrix>();
    Dataset data(std::move(csr), std::move(labels));
    if (o.single_pass() && data.rows() <= std::numeric_limits<std::uint32_t>::max()) data.store_in_sample_order(*o.seed);
    return data;
  }
  const auto array = X.cast<py::array_t<double, py::array::c_style | py::array::forcecast>>();
  if (array.ndim() != 2) throw Error("run: X must be a 2-d array (n records x p features)");
  const Eigen::Map<const RowMatrix> dense(array.data(), array.shape(0), array.shape(1));
  check_finite_arrays(dense, y);
  if (y && static_cast<Eigen::Index>(y->size()) != dense.rows())
    throw Error("run: " + std::to_string(y->size()) + " labels for " + std::to_string(dense.rows()) + " records");
  if (o.single_pass() && dense.rows() <= std::numeric_limits<std::uint32_t>::max())
    return copy_in_sample_order(dense, labels, *o.seed);
  return make_dataset(dense, y);
}

// Between steps (the GIL released around the run): Ctrl-C, seen as Python's
// signal handlers raising, and the user's callback. Either one's exception
// stops the run; it is raised after it with the partial report attached.
struct StepHooks {
  py::object callback;
  std::optional<py::error_already_set> error;
  bool interrupted = false;
  Index records_used = 0;
  std::chrono::steady_clock::time_point last_check = std::chrono::steady_clock::now();

  bool operator()(const Iteration& it) {
    records_used += it.batch;
    const auto now = std::chrono::steady_clock::now();
    if (callback.is_none() && now - last_check < std::chrono::milliseconds(50)) return true;
    last_check = now;
    py::gil_scoped_acquire acquire;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!callback.is_none() && it.step > 0) {
        py::dict info;
        info["x"] = *it.x;
        info["o1"] = it.o1;
        info["batch"] = it.batch;
        info["records_used"] = records_used;
        info["release_norm"] = it.release_norm;
        info["perturbed"] = it.perturbed;
        const py::object go_on = callback(it.step, info);
        if (!go_on.is_none() && !go_on.cast<bool>()) return false;
      }
    } catch (py::error_already_set& e) {
      // Ctrl-C arrives as KeyboardInterrupt, in the check or inside the callback.
      interrupted = interrupted || e.matches(PyExc_KeyboardInterrupt);
      error.emplace(std::move(e));
      return false;
    }
    return true;
  }
};

}  // namespace

void bind_run(py::module_& m) {
  m.def(
      "run",
      [](const std::string& model_name, const py::object& X, const std::optional<Eigen::Ref<const Vec>>& y,
         const std::string& algo, std::optional<double> epsilon, double delta, const py::object& G,
         const py::object& M, double rho, double B, std::optional<std::uint64_t> seed, std::optional<double> alpha_scale,
         std::optional<Index> batch_size, std::optional<Index> period, std::optional<double> epochs,
         std::optional<double> learning_rate, std::optional<Vec> x0, Index max_steps,
         std::optional<Index> max_phase_length, int threads, Index classes, Index hidden, Index rank,
         std::optional<bool> fit_intercept,
         const std::map<std::string, double>& overrides, const std::optional<py::bytes>& noise_key,
         const std::optional<std::string>& noise_key_file, bool release_only, const std::string& noise,
         std::optional<double> tail, std::optional<bool> o2, const std::optional<std::string>& accountant,
         const std::optional<std::string>& sampling, std::optional<Index> bands,
         const std::optional<std::string>& adjacency, const py::object& callback, const std::optional<std::string>& data_file, bool stream, Index n_features,
         const std::vector<std::pair<double, double>>& bounds, const std::optional<std::pair<double, double>>& y_bounds,
         const std::string& scale, double scale_share, bool normalize) {
        RunOptions o;
        o.algorithm = parse_algorithm(algo);
        // The same rules, in the same words, as the CLI's (before any copy).
        if (epsilon) check_value("epsilon", *epsilon, ValueRule::kPositiveOrInf, shown(*epsilon));
        check_value("delta", delta, ValueRule::kOpenUnit, shown(delta));
        for (const auto& [name, v] : {std::pair{"rho", rho}, std::pair{"B", B}})
          check_value(name, v, ValueRule::kPositive, shown(v));
        if (alpha_scale) check_value("alpha_scale", *alpha_scale, ValueRule::kPositive, shown(*alpha_scale));
        if (epochs) {
          check_value("epochs", *epochs, ValueRule::kNonNegative, shown(*epochs));
          if (*epochs > 1e9) throw Error("epochs: expected at most 1e9 epochs, got " + shown(*epochs));
        }
        if (learning_rate) check_value("learning_rate", *learning_rate, ValueRule::kPositive, shown(*learning_rate));
        if (noise != "float" && noise != "secure")
          throw Error("noise: expected float or secure, got '" + noise + "'");
        // epsilon: 1 by default for a private algorithm (as the CLI's --epsilon);
        // a non-private one takes none, and refuses a finite one (Validate).
        if (epsilon || is_private_algorithm(o.algorithm)) o.privacy = PrivacyTarget{epsilon.value_or(1.0), delta};
        if (noise == "secure") {
          if (!o.privacy) throw Error("noise secure: " + algo + " is non-private and adds no noise");
          o.privacy->noise = NoiseMode::kSecure;
        }
        // G and M: a number, or "auto" (a private estimate, clip_estimate.hpp), the
        // default (None) of a private run; a non-private run takes 1 when not given.
        const AlgorithmInfo& info = algorithm_info(o.algorithm);
        const auto constant = [&](const py::object& v, const char* name, bool& estimate) {
          const bool automatic = v.is_none() || (py::isinstance<py::str>(v) && v.cast<std::string>() == "auto");
          if (!automatic) {
            if (py::isinstance<py::str>(v))
              throw Error(std::string(name) + ": expected " + value_rule_text(ValueRule::kPositive) + ", got '" +
                          v.cast<std::string>() + "'");
            const double value = v.cast<double>();
            check_value(name, value, ValueRule::kPositive, shown(value));
            return value;
          }
          if (info.is_private && !(o.privacy && !o.privacy->is_private())) {
            estimate = true;
          } else if (!v.is_none()) {
            throw Error(std::string(name) + " auto: the constants are estimated privately for private runs only; "
                        "give a value for " + info.name);
          }
          return 1.0;
        };
        o.constants = {constant(G, "G", o.estimate.G), constant(M, "M", o.estimate.M), rho, B};
        if (accountant) {
          if (*accountant != "pld" && *accountant != "rdp")
            throw Error("accountant: expected pld or rdp, got '" + *accountant + "'");
          o.accountant = *accountant == "pld" ? Accountant::kPld : Accountant::kRdp;
        }
        if (sampling) {
          if (*sampling != "poisson" && *sampling != "order")
            throw Error("sampling: expected poisson or order, got '" + *sampling + "'");
          o.sampling = *sampling == "poisson" ? Sampling::kPoisson : Sampling::kOrder;
        }
        o.bands = bands;
        if (adjacency) {
          if (*adjacency != "replace-one" && *adjacency != "zero-out")
            throw Error("adjacency: expected 'replace-one' or 'zero-out', got '" + *adjacency + "'");
          if (!o.privacy) throw Error("adjacency: applies to private runs");
          o.privacy->adjacency = *adjacency == "zero-out" ? Adjacency::kZeroOut : Adjacency::kReplaceOne;
        }
        if (tail) check_value("tail", *tail, ValueRule::kNonNegative, shown(*tail));
        o.tail = tail;
        o.o2 = o2;
        o.alpha_scale = alpha_scale;
        o.batch_size = batch_size;
        o.period = period;
        o.epochs = epochs;
        o.learning_rate = learning_rate;
        o.max_steps = max_steps;
        o.max_phase_length = max_phase_length;
        o.threads = threads;
        set_overrides(overrides, o.overrides);
        choose_default_sampling(o, stream);  // the library's default, as the CLI's
        try {
          o.Validate();
        } catch (const Error& e) {
          refuse_in_python_words(e);
        }
        if ((noise_key || noise_key_file) && !o.is_private_run())
          throw Error(std::string(noise_key ? "noise_key" : "noise_key_file") +
                      ": a non-private run draws no privacy noise");
        o.noise_key = noise_key_of(noise_key, noise_key_file);
        if (!seed) seed = secure_random_seed();
        o.seed = seed;
        // The records: X (and y), or a record file (dpsosp convert), loaded
        // whole or, with stream, read once front to back in its own order.
        if (data_file.has_value() == !X.is_none())
          throw Error(std::string("run: give the records as X (and y) or as data='FILE' (a record file), not ") +
                      (X.is_none() ? "neither" : "both"));
        if (stream && !data_file) throw Error("stream=True reads a record file; give data='FILE'");
        if (data_file && y) throw Error("y: a record file holds its labels; y applies to X");
        // The public shape (SPEC section 9, docs/privacy.md): what sizes a
        // private run is declared, never read from the records, in the CLI's
        // rules (check_public_shape) and the keywords' names.
        const bool is_classifier = model_name == "softmax" || model_name == "mlp";
        const bool sparse_x = !X.is_none() && py::hasattr(X, "indptr");
        std::optional<RecordFileInfo> header;
        if (data_file) header = read_record_file_info(*data_file);
        if (o.is_private_run()) {
          if (is_classifier && classes == 0)
            throw Error("classes: a private " + model_name + " run is sized by its class count, which must be "
                        "declared (public), not read from the labels: pass classes=K (labels 0 .. K-1)");
          if (sparse_x && n_features == 0)
            throw Error("n_features: a private run on sparse X is sized by its feature count, which must be "
                        "declared (public; a sparse matrix's width may come from its largest index): pass "
                        "n_features=D");
          if (header && !header->features_declared)
            throw Error("data: the feature count of these sparse records was read from their largest index when "
                        "they were converted; a private run needs it declared (public): convert them again with "
                        "dpsosp convert --features D");
        }
        if (header && n_features != 0 && header->cols != n_features)
          throw Error("n_features=" + std::to_string(n_features) + ": the record file holds records of " +
                      std::to_string(header->cols) + " features");
        std::optional<RecordFile> file;
        Dataset data;
        if (stream) file.emplace(*data_file);
        else data = data_file ? load_record_file(*data_file) : records_of(X, y, o);
        const Index n = file ? file->info().rows : data.rows();
        try {
          o.Validate(n);
        } catch (const Error& e) {
          refuse_in_python_words(e);
        }
        ModelOptions model_options;
        model_options.classes = classes;
        model_options.hidden = hidden;
        model_options.rank = rank;
        // An intercept by default where the model takes one and wants it (the CLI's rule).
        model_options.fit_intercept = fit_intercept.value_or(
            model_name == "logistic" || model_name == "sigmoid" || model_name == "softmax" || model_name == "linear" ||
            model_name == "cauchy");
        std::unique_ptr<Model> model;
        try {
          model = file ? make_model(model_name, file->info(), model_options)
                       : make_model(model_name, data.cols(), model_options, &data);
        } catch (const Error& e) {
          const std::string field = "make_model: fit_intercept: ";  // the library's words, the keyword's name
          const std::string m = e.what();
          if (m.compare(0, field.size(), field) == 0) throw Error("fit_intercept: " + m.substr(field.size()));
          throw;
        }
        const Vec start = x0 ? *x0 : Vec::Zero(static_cast<Eigen::Index>(model->dim()));
        // The scale (scaling.hpp): declared bounds, or the private estimate
        // (scale='auto', the default for the models that take it on loaded records).
        if (scale != "auto" && scale != "private" && scale != "none")
          throw Error("scale: expected 'auto', 'private' or 'none', got '" + scale + "'");
        ScalingOptions so;
        so.target = scales_target(model_name);
        for (const auto& [lo, hi] : bounds) so.bounds.push_back({lo, hi});
        if (y_bounds) so.y_bounds = Interval{y_bounds->first, y_bounds->second};
        so.share = scale_share;
        so.normalize = normalize;
        if (scale == "private" && (file || !scales_by_default(model_name)))
          throw Error("scale='private': applies to loaded records of the logistic, sigmoid, softmax, mlp, linear and "
                      "cauchy models");
        // Record files (data=FILE) are prepared data: scale='auto' leaves them as they are.
        so.estimate_features = scale == "private" || (scale == "auto" && !data_file && scales_by_default(model_name));
        so.automatic = scale == "auto";
        so.estimate_target = so.estimate_features && so.target;
        if (file && so.any())
          throw Error("stream=True: the records are read once, as they are; bounds, y_bounds and normalize apply to "
                      "loaded records");
        so.Validate(model->features());
        StepHooks hooks{callback};
        o.on_step = [&hooks](const Iteration& it) { return hooks(it); };
        ScaledSummary scaled;
        {
          py::gil_scoped_release release;
          if (file) scaled.summary = minimize(*model, *file, start, o);
          else scaled = minimize_scaled(*model, data, start, o, so);
        }
        Summary& s = scaled.summary;
        if (hooks.interrupted) s.termination = Termination::kInterrupted;
        py::dict result = summary_dict(s);
        result["model"] = model->name();
        result["n"] = n;
        result["d"] = model->dim();
        result["shape"] = shape_dict(*model);
        if (so.any()) result["scaling"] = scaling_dict(scaled);
        result["target"] = py::dict(py::arg("epsilon") = o.privacy ? o.privacy->epsilon
                                                                   : std::numeric_limits<double>::infinity(),
                                    py::arg("delta") = o.privacy ? o.privacy->delta : delta);
        if (!release_only) result["diagnostics"] = diagnostics_dict(s);
        if (hooks.error) {
          // Ctrl-C (KeyboardInterrupt) or the callback's exception, with the
          // report of the steps taken so far (the guarantee fixed before the
          // run covers the shorter run too).
          try {
            hooks.error->value().attr("result") = result;
          } catch (const py::error_already_set&) {
          }
          throw *hooks.error;
        }
        return result;
      },
      py::arg("model"), py::arg("X"), py::arg("y"), py::arg("algo"), py::arg("epsilon"), py::arg("delta"),
      py::arg("G"), py::arg("M"), py::arg("rho"), py::arg("B"), py::arg("seed"), py::arg("alpha_scale"),
      py::arg("batch_size"), py::arg("period"), py::arg("epochs"), py::arg("learning_rate"), py::arg("x0"),
      py::arg("max_steps"), py::arg("max_phase_length"), py::arg("threads"), py::arg("classes"), py::arg("hidden"),
      py::arg("rank"), py::arg("fit_intercept"),
      py::arg("overrides"), py::arg("noise_key"), py::arg("noise_key_file"), py::arg("release_only"),
      py::arg("noise"), py::arg("tail"), py::arg("o2"), py::arg("accountant"), py::arg("sampling"), py::arg("bands"),
      py::arg("adjacency"), py::arg("callback"),
      py::arg("data"), py::arg("stream"), py::arg("n_features"), py::arg("bounds"), py::arg("y_bounds"), py::arg("scale"),
      py::arg("scale_share"), py::arg("normalize"),
      "The run behind dpsosp.run (which checks its keywords and converts X and y first).");
}

}  // namespace dpsosp::python
