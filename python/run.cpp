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
#include "dpsosp/report.hpp"

namespace dpsosp::python {
namespace {

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

// A budget's ledger line for a run.
std::string budget_label(const std::string& model, Index n, const RunOptions& o) {
  std::string label = "run(" + model + ") on " + std::to_string(n) + " records";
  if (o.privacy) label += ", target epsilon " + shown(o.privacy->epsilon) + ", delta " + shown(o.privacy->delta);
  return label;
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

// The records as a Dataset: dense rows (copied in the run's sample order when
// it reads them once in that order: the same results, read front to back) or
// a scipy.sparse CSR matrix.
Dataset records_of(const py::object& X, const std::optional<Eigen::Ref<const Vec>>& y, const RunOptions& o) {
  Vec labels;
  if (y) labels = *y;
  if (py::hasattr(X, "indptr")) {
    SparseRowMatrix csr = X.cast<SparseRowMatrix>();
    Dataset data(std::move(csr), std::move(labels));
    if (o.single_pass() && data.rows() <= std::numeric_limits<std::uint32_t>::max())
      data.store_in_sample_order(*o.seed);
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

// Ctrl-C (KeyboardInterrupt) or the callback's exception is raised with the
// report of the steps taken so far attached (the guarantee fixed before the
// run covers the shorter run too); otherwise the report is returned.
py::dict raise_or_return(StepHooks& hooks, py::dict result) {
  if (hooks.error) {
    try {
      hooks.error->value().attr("result") = result;
    } catch (const py::error_already_set&) {
    }
    throw *hooks.error;
  }
  return result;
}

}  // namespace

void bind_run(py::module_& m) {
  m.def(
      "model_table",
      [] {
        py::list rows;
        for (const ModelInfo& info : model_table()) {
          py::dict row;
          row["name"] = info.name;
          row["summary"] = info.summary;
          row["labeled"] = info.labeled;
          row["classifier"] = info.classifier;
          row["binary"] = info.binary;
          row["regression"] = info.regression;
          row["intercept_by_default"] = info.intercept_by_default;
          row["scales_by_default"] = info.scales_by_default;
          row["reads_hidden"] = info.reads_hidden;
          row["reads_rank"] = info.reads_rank;
          row["takes_intercept"] = info.no_intercept.empty();
          rows.append(row);
        }
        return rows;
      },
      "The model table (include/dpsosp/model.hpp): each model's name, summary and what it reads.");
  m.def(
      "run_option_table",
      [] {
        static const char* kKinds[] = {"real",     "count", "choice",    "switch", "flag",
                                       "constant", "text",  "overrides", "bounds"};
        py::list rows;
        for (const OptionSpec& s : run_option_table()) {
          py::dict row;
          row["key"] = s.key;
          row["flag"] = s.flag;
          row["kind"] = kKinds[static_cast<int>(s.kind)];
          row["default"] = s.default_text;
          row["help"] = s.help;
          row["rule"] = option_rule_text(s);
          row["choices"] = s.choices;
          row["algorithms"] = s.knob == 0 ? std::string("all") : algorithms_reading(static_cast<Knob>(s.knob));
          row["model_or_data"] = s.model_or_data;
          rows.append(row);
        }
        return rows;
      },
      "The option table (include/dpsosp/options.hpp): key, flag, kind, default, help, rule, choices, algorithms.");
  m.def(
      "run",
      [](const std::string& model_name, const py::object& X, const std::optional<Eigen::Ref<const Vec>>& y,
         const OptionValues& options, const std::map<std::string, std::string>& overrides, std::optional<Vec> x0,
         Index classes, Index hidden, Index rank, std::optional<bool> fit_intercept,
         const std::optional<py::bytes>& noise_key, const py::object& callback,
         const std::optional<std::string>& data_file, bool stream, Index n_features,
         const std::vector<std::pair<double, double>>& bounds, const std::optional<std::pair<double, double>>& y_bounds,
         Budget* budget, const std::optional<Vec>& sample_weight, const std::vector<bool>& one_hot) {
        // The options by the library's table and rules, in its words with the
        // keywords' names (options.hpp), before any copy.
        const RunRequest request(options, overrides, FrontEnd::kPython, stream);
        RunOptions o = request.options;
        const std::optional<std::string> noise_key_file =
            request.given("noise_key_file") ? std::optional<std::string>(options.at("noise_key_file")) : std::nullopt;
        if (noise_key && !o.is_private_run()) throw Error("noise_key: a non-private run draws no privacy noise");
        o.noise_key = noise_key_of(noise_key, noise_key_file);
        if (!o.seed) o.seed = secure_random_seed();
        // The records: X (and y), or a record file (dpsosp convert), loaded
        // whole or, with stream, read once front to back in its own order.
        if (data_file.has_value() == !X.is_none())
          throw Error(std::string("run: give the records as X (and y) or as data='FILE' (a record file), not ") +
                      (X.is_none() ? "neither" : "both"));
        if (stream && !data_file) throw Error("stream=True reads a record file; give data='FILE'");
        if (budget && stream) throw Error("budget: a streamed run is not charged to a budget; load the records");
        if (data_file && y) throw Error("y: a record file holds its labels; y applies to X");
        if (data_file && sample_weight)
          throw Error("sample_weight: applies to X (one weight per record); a record file holds no weights");
        // The public shape (SPEC section 9, docs/privacy.md): what sizes a
        // private run is declared, never read from the records, in the CLI's
        // rules (check_public_shape) and the keywords' names.
        const bool is_classifier = model_info(model_name).classifier;
        const bool sparse_x = !X.is_none() && py::hasattr(X, "indptr");
        std::optional<RecordFileInfo> header;
        if (data_file) header = read_record_file_info(*data_file);
        if (o.is_private_run()) {
          if (is_classifier && classes == 0)
            throw Error("classes: a private " + model_name +
                        " run is sized by its class count, which must be "
                        "declared (public), not read from the labels: pass classes=K (labels 0 .. K-1)");
          if (sparse_x && n_features == 0)
            throw Error(
                "n_features: a private run on sparse X is sized by its feature count, which must be "
                "declared (public; a sparse matrix's width may come from its largest index): pass "
                "n_features=D");
          if (header && !header->features_declared)
            throw Error(
                "data: the feature count of these sparse records was read from their largest index when "
                "they were converted; a private run needs it declared (public): convert them again with "
                "dpsosp convert --features D");
        }
        if (header && n_features != 0 && header->cols != n_features)
          throw Error("n_features=" + std::to_string(n_features) + ": the record file holds records of " +
                      std::to_string(header->cols) + " features");
        std::optional<RecordFile> file;
        Dataset data;
        if (stream)
          file.emplace(*data_file);
        else
          data = data_file ? load_record_file(*data_file) : records_of(X, y, o);
        // Each record's weight in [0, 1] (Dataset::set_weights: refused otherwise, before any noise).
        if (sample_weight) data.set_weights(*sample_weight);
        const Index n = file ? file->info().rows : data.rows();
        request.check_records(n);
        ModelOptions model_options;
        model_options.classes = classes;
        model_options.hidden = hidden;
        model_options.rank = rank;
        // An intercept by default where the model's row wants one (the CLI's rule).
        model_options.fit_intercept = fit_intercept.value_or(model_info(model_name).intercept_by_default);
        std::unique_ptr<Model> model;
        try {
          model = file ? make_model(model_name, file->info(), model_options)
                       : make_model(model_name, data.cols(), model_options, &data);
        } catch (const OptionError& e) {
          throw Error(option_error_words(e, FrontEnd::kPython));  // the library's words, the keyword's name
        }
        const Vec start = x0 ? *x0 : Vec::Zero(static_cast<Eigen::Index>(model->dim()));
        // The scale (scaling.hpp): declared bounds, or the private estimate
        // (scale='auto', the default for the models that take it on loaded
        // records; record files are prepared data, left as they are).
        std::vector<Interval> box;
        for (const auto& [lo, hi] : bounds) box.push_back({lo, hi});
        std::optional<Interval> y_box;
        if (y_bounds) y_box = Interval{y_bounds->first, y_bounds->second};
        const ScalingOptions so = request.scaling(model_name, model->features(), !data_file, file.has_value(),
                                                  std::move(box), y_box, data_file ? std::vector<bool>{} : one_hot);
        StepHooks hooks{callback};
        o.on_step = [&hooks](const Iteration& it) { return hooks(it); };
        ScaledSummary scaled;
        const std::string label = budget ? budget_label(model_name, n, o) : std::string();
        {
          py::gil_scoped_release release;
          if (file)
            scaled.summary = minimize(*model, *file, start, o);
          else if (budget)
            scaled = minimize_charged(*budget, label, *model, data, start, o, so);
          else
            scaled = minimize_scaled(*model, data, start, o, so);
        }
        Summary& s = scaled.summary;
        if (hooks.interrupted) s.termination = Termination::kInterrupted;
        // The report (report.hpp), as the CLI writes it; x (and x_user) as arrays.
        py::dict result = to_python(run_report(scaled, *model, n, request, so.any()));
        result["x"] = s.x;
        if (so.any() && scaled.x_user) result["scaling"].cast<py::dict>()["x_user"] = *scaled.x_user;
        return raise_or_return(hooks, result);
      },
      py::arg("model"), py::arg("X"), py::arg("y"), py::arg("options"), py::arg("overrides"), py::arg("x0"),
      py::arg("classes"), py::arg("hidden"), py::arg("rank"), py::arg("fit_intercept"), py::arg("noise_key"),
      py::arg("callback"), py::arg("data"), py::arg("stream"), py::arg("n_features"), py::arg("bounds"),
      py::arg("y_bounds"), py::arg("budget") = nullptr, py::arg("sample_weight") = std::nullopt,
      py::arg("one_hot") = std::vector<bool>{},
      "The run behind dpsosp.run (which checks its keywords and converts X and y first).");
  // A model of the caller's (caller_model.hpp): gradients from Python callables, called with the GIL held,
  // one at a time; the library clips, adds noise and accounts as for its own models.
  m.def(
      "run_caller",
      [](const py::object& gradients, Index n, Index dim, const OptionValues& options,
         const std::map<std::string, std::string>& overrides, std::optional<Vec> x0,
         const std::optional<py::bytes>& noise_key, const py::object& callback, const py::object& losses,
         const py::object& hvp, const std::string& name, Budget* budget) {
        const RunRequest request(options, overrides, FrontEnd::kPython, false);
        RunOptions o = request.options;
        o.threads = 1;
        const std::optional<std::string> noise_key_file =
            request.given("noise_key_file") ? std::optional<std::string>(options.at("noise_key_file")) : std::nullopt;
        if (noise_key && !o.is_private_run()) throw Error("noise_key: a non-private run draws no privacy noise");
        o.noise_key = noise_key_of(noise_key, noise_key_file);
        if (!o.seed) o.seed = secure_random_seed();
        request.check_records(n);
        CallerGradients g;
        g.name = name;
        g.dim = dim;
        auto ids_array = [](const std::vector<std::int64_t>& ids) {
          return py::array_t<std::int64_t>(static_cast<py::ssize_t>(ids.size()), ids.data());
        };
        g.gradients = [&](const Vec& x, const std::vector<std::int64_t>& ids, RowMatrix& out) {
          py::gil_scoped_acquire acquire;
          out = gradients(x, ids_array(ids)).cast<RowMatrix>();
        };
        if (!losses.is_none())
          g.losses = [&](const Vec& x, const std::vector<std::int64_t>& ids, Vec& out) {
            py::gil_scoped_acquire acquire;
            out = losses(x, ids_array(ids)).cast<Vec>();
          };
        if (!hvp.is_none())
          g.hvp = [&](const Vec& x, std::int64_t id, const Vec& v, Vec& out) {
            py::gil_scoped_acquire acquire;
            out = hvp(x, id, v).cast<Vec>();
          };
        const std::unique_ptr<Model> model = make_caller_model(std::move(g));
        const Dataset records = caller_records(n);
        const Vec start = x0 ? *x0 : Vec::Zero(static_cast<Eigen::Index>(dim));
        StepHooks hooks{callback};
        o.on_step = [&hooks](const Iteration& it) { return hooks(it); };
        const std::string label = "run(" + name + ") on " + std::to_string(n) + " records";
        ScaledSummary scaled;
        {
          py::gil_scoped_release release;
          scaled = budget ? minimize_charged(*budget, label, *model, records, start, o, ScalingOptions{})
                          : minimize_scaled(*model, records, start, o, ScalingOptions{});
        }
        if (hooks.interrupted) scaled.summary.termination = Termination::kInterrupted;
        py::dict result = to_python(run_report(scaled, *model, n, request, false));
        result["x"] = scaled.summary.x;
        return raise_or_return(hooks, result);
      },
      py::arg("gradients"), py::arg("n"), py::arg("dim"), py::arg("options"), py::arg("overrides"), py::arg("x0"),
      py::arg("noise_key"), py::arg("callback"), py::arg("losses"), py::arg("hvp"), py::arg("name"),
      py::arg("budget") = nullptr, "The run behind dpsosp.run_gradients (a model of the caller's).");
}

}  // namespace dpsosp::python
