// `dpsosp run`: one optimizer run and its JSON report (SIGINT/SIGTERM:
// stop_signal.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <set>

#include "cli.hpp"
#include "processes.hpp"
#include "progress.hpp"
#include "result_reader.hpp"
#include "scale_options.hpp"
#include "stop_signal.hpp"

namespace dpsosp::cli {
namespace {

// ---- Options ----------------------------------------------------------------
// The run's options come from the library's table (options.hpp): each is added
// to the command with its flag, default and help, and read back by key.
struct RunArgs {
  DataSource source;
  CLI::App* app = nullptr;
  std::map<std::string, std::string> text;  // by key: what --FLAG VALUE gave
  std::map<std::string, bool> flags;        // by key: the flags'
  std::vector<std::string> overrides;       // --set name=value
  std::string x0, eval, eval_labels, out, budget;
  bool no_certificate = false, quiet = false;
  bool stream = false;  // --stream: read a record file once, front to back (stream_source.cpp)
  ScaleArgs scaling;    // --bounds, --y-bounds (scale_options.cpp)
  bool given(const std::string& option) const { return app->count(option) > 0; }
  OptionValues values() const {
    OptionValues v;
    for (const auto& [key, value] : text)
      if (given(run_option(key).flag)) v[key] = value;
    for (const auto& [key, on] : flags)
      if (on) v[key] = "true";
    return v;
  }
};

Vec parse_x0(const std::string& spec, const LoadedProblem& p) {
  const Index d = p.model->dim();
  if (spec.empty()) throw Error("--x0: empty (expected a CSV or result file, or zeros, saddle, optimum)");
  if (spec == "zeros") return Vec::Zero(static_cast<Eigen::Index>(d));
  if (spec == "saddle" || spec == "optimum") {
    if (!p.population)
      throw Error("--x0 " + spec +
                  ": only for a --synthetic problem with a known population (phase-retrieval, pca) "
                  "and its own model");
    const Vec& v = spec == "saddle" ? p.synthetic->saddle : p.synthetic->x_star;
    if (static_cast<Index>(v.size()) != d) throw Error("--x0 " + spec + ": not known for this problem and model");
    return v;
  }
  const PointFile point = read_point_file(spec, "--x0 " + spec);
  if (static_cast<Index>(point.x.size()) != d)
    throw Error("--x0 " + spec + ": expected " + std::to_string(d) + " values for model " + p.model->name() + ", got " +
                std::to_string(point.x.size()));
  return point.x;
}

// The checks that need the records' count and the model, and the start point.
void check_sizes_and_start(const RunArgs& a, const RunRequest& r, const LoadedProblem& p, Vec& x0) {
  r.check_records(p.rows());  // the rules that need n, in the library's words
  x0 = a.given("--x0") ? parse_x0(a.x0, p) : Vec::Zero(static_cast<Eigen::Index>(p.model->dim()));
}

int do_run(const RunArgs& a) {
  const auto started = std::chrono::steady_clock::now();
  // Everything that needs no data is checked first, so a typo fails at once,
  // by the library's rules and in its words (options.hpp).
  const RunRequest request(a.values(), parse_overrides(a.overrides), FrontEnd::kCli, a.stream);
  RunOptions o = request.options;
  const AlgorithmInfo& info = algorithm_info(o.algorithm);
  o.process_group = Processes::group();
  const bool is_private_run = o.is_private_run();
  // In an MPI job rank 0 alone reads the key and writes the report (the
  // library hands its key to the others); only its files need to exist.
  if (Processes::reports())
    o.noise_key = read_noise_key_option(a.text.at("noise_key_file"), request.given("noise_key_file"));
  const bool release_only = request.release_only;
  if (release_only && a.given("--eval"))
    throw Error("--eval: its metrics and certificate are diagnostics, which --release-only leaves out");
  if (a.given("--eval-labels") && !a.given("--eval")) throw Error("--eval-labels: applies with --eval");
  if (a.given("--eval-labels") && a.eval_labels.empty()) throw Error("--eval-labels: empty file name");
  check_public_shape(a.source, is_private_run);  // --classes, --features: declared, not read from the records
  if (a.given("--out") && Processes::reports()) check_writable(a.out);
  // --budget FILE: read now, charged by the library (budget.hpp), written back after the run.
  std::optional<Budget> budget;
  std::optional<BudgetLock> budget_lock;
  if (a.given("--budget")) {
    if (!is_private_run) throw Error("--budget: charges private runs; this run is not private");
    if (a.stream) throw Error("--budget: a streamed run (--stream) is not charged to a budget; load the records");
    if (o.process_group) throw Error("--budget: a run of several processes is not charged to a budget");
    if (a.budget.empty()) throw Error("--budget: empty file name");
    read_budget_file(a.budget);     // a budget, before its lock file is made beside it
    budget_lock.emplace(a.budget);  // held until the run's charge is written
    budget = read_budget_file(a.budget);
    check_writable(a.budget, "--budget");
    check_not_input(a.out, a.budget, "--budget");
  }
  check_not_input(a.out, a.source.data_path, "--data");
  check_not_input(a.out, a.eval, "--eval");
  check_not_input(a.out, a.x0, "--x0");

  // The seed is fixed before the records are loaded: every algorithm but
  // dpsgd with --epochs (Poisson sampling) draws its records without
  // replacement in the seed's sample order, and load_problem generates
  // --synthetic records in that order, so the run reads them front to back.
  // The results are the same bits either way (docs/performance.md).
  if (!o.seed) o.seed = secure_random_seed();
  Processes::share_seed(*o.seed);  // an MPI job: rank 0's
  const bool seed_order = o.single_pass() && o.sample_order_or_default() == SampleOrder::kSeed;
  LoadedProblem p;
  Vec x0;
  std::optional<Dataset> eval;
  // Every rank loads (or opens) the same records; a failure on one fails all.
  Processes::agree([&] {
    p = a.stream ? open_streamed_problem(a.source) : load_problem(a.source, seed_order ? o.seed : std::nullopt);
    check_sizes_and_start(a, request, p, x0);
    if (a.given("--eval") && Processes::reports()) eval = load_eval_data(a.source, a.eval, a.eval_labels, *p.model);
  });
  const Index n = p.rows();
  if (is_private_run && Processes::reports()) {  // public: delta and n
    const std::string note = delta_note(o.privacy->delta, n);
    if (!note.empty()) std::fprintf(stderr, "dpsosp: warning: %s\n", note.c_str());
  }
  const ScalingOptions so = scaling_options(a.scaling, request, a.source, p);

  o.stop_flag = &stop_flag();
  // The run's length when it is known before it: max_steps, or Poisson's planned steps.
  std::optional<Index> total;
  if (o.max_steps > 0) total = o.max_steps;
  if (o.poisson() && !(info.knobs & kKnobSampling))  // dpsgd's planned steps (spider-mf-adaptive's: its bands')
    total = std::min(
        total.value_or(~Index{0}),
        static_cast<Index>(std::ceil(*o.epochs * static_cast<double>(n) / static_cast<double>(o.sgd_batch_size(n)))));
  // Records over all passes (spider-mf-adaptive's epochs are whole passes).
  const Index passes = !o.poisson() && o.epochs && *o.epochs > 1 ? static_cast<Index>(*o.epochs) : 1;
  // In an MPI job rank 0 alone shows progress and writes the report.
  auto progress = std::make_unique<Progress>(a.quiet || !Processes::reports(), n * passes, total, !o.poisson());
  o.on_step = [&progress](const Iteration& it) {
    progress->step(it);
    return true;
  };
  StopOnSignal stop_on_signal(Processes::reports());  // until the report is written
  ScaledSummary scaled;
  if (p.records) {
    scaled.summary = minimize(*p.model, *p.records, x0, o);
  } else if (budget) {
    const std::string label =
        "dpsosp run --model " + a.source.model +
        (a.source.data_path.empty() ? " --synthetic " + a.source.synthetic : " --data " + a.source.data_path) + " (" +
        std::to_string(n) + " records, target epsilon " + a.text.at("epsilon") + ")";
    try {
      scaled = minimize_charged(*budget, label, *p.model, p.data, x0, o, so);
    } catch (...) {
      if (budget->ledger().size() > 0 && budget->ledger().back().label == label + " (failed)")
        write_text(a.budget, budget->to_json().dump(1) + "\n", "--budget");  // what the failed run spent
      throw;
    }
    write_text(a.budget, budget->to_json().dump(1) + "\n", "--budget");  // before the report: the spending is kept
  } else {
    scaled = minimize_scaled(*p.model, p.data, x0, o, so);
  }
  // The loader's notes on the table (its header line: public) lead the run's warnings.
  scaled.summary.warnings.insert(scaled.summary.warnings.begin(), p.notes.warnings.begin(), p.notes.warnings.end());
  const Summary& s = scaled.summary;
  // The held-out targets in the user's units, unclipped: R^2 is measured on them.
  const Vec eval_y = eval && eval->has_labels() ? eval->labels() : Vec();
  if (eval && so.any()) eval = scaled.scaling.apply(*eval);
  progress.reset();  // ends the line
  const bool interrupted = s.interrupted() || stop_requested_by_signal();
  if (!Processes::reports()) return interrupted ? 128 + stop_signal_number() : 0;
  for (const std::string& w : s.warnings) std::fprintf(stderr, "dpsosp: warning: %s\n", w.c_str());

  // The release (covered by the guarantee) and, apart, the diagnostics
  // computed from the private data (SPEC section 8).
  // The report (report.hpp): the release, covered by the guarantee, and apart
  // from it the diagnostics computed from the private data (SPEC section 8).
  nlohmann::json j = run_report(scaled, *p.model, n, request, so.any());
  nlohmann::json diagnostics = j.contains("diagnostics") ? j["diagnostics"] : nlohmann::json::object();
  j.erase("diagnostics");
  // The declared class names (--classes a,b,c: public, as the labels were
  // read): dpsosp predict --point reads and answers in them.
  if (const std::vector<std::string> names = a.source.class_names(); !names.empty()) j["class_names"] = names;
  // The table's declared rule (--label, --categorical, --impute): dpsosp
  // predict reads a CSV laid out as this one by it.
  j.update(table_rule_keys(a.source, model_info(p.model->name()).labeled));
  j["interrupted"] = interrupted;       // a signal too
  if (p.records) j["streamed"] = true;  // once, front to back, in the file's order
  diagnostics["load_seconds"] = p.load_seconds;
  std::string eval_figure;  // for the summary line
  if (eval) {               // before the certificate, which may take long on large models
    diagnostics["eval"] =
        eval_diagnostics(*p.model, s.x, *eval, eval_y, so.target ? &scaled.scaling : nullptr, eval_figure);
  }
  // Heavy clipping, for the data owner (a diagnostic: not with --release-only).
  const std::string clipping = release_only ? "" : clipping_note(s, scaled.scaling.public_constants);
  if (!clipping.empty()) std::fprintf(stderr, "dpsosp: note: %s\n", clipping.c_str());
  // The certificate on --eval data is a diagnostic; on a synthetic problem's
  // known population it is computed from x and public parameters alone, so it
  // is part of the release.
  nlohmann::json& certificate_home = eval ? diagnostics : j;
  if (a.no_certificate) {
    certificate_home["certificate_skipped"] = "--no-certificate";
  } else if (eval && interrupted) {
    certificate_home["certificate_skipped"] =
        "interrupted (the certificate on --eval data is not computed after a signal)";
  } else if (eval || p.population) {
    // The run's results are never lost to the certificate: a failure is reported in the JSON.
    try {
      Progress lanczos(a.quiet, 0, std::nullopt, false);
      EigenOptions eigen;
      eigen.on_cycle = [&lanczos](const EigenProgress& e) {
        lanczos.certificate(e);
        return !stop_requested_by_signal();  // a signal ends the certificate too (the report is still written)
      };
      const Certificate c = eval ? certify_empirical(*p.model, *eval, s.x, o.constants.rho, eigen)
                                 : certify_population(*p.population, s.x, o.constants.rho, eigen);
      lanczos.finish();
      certificate_home["certificate"] = certificate_report(c);
      certificate_home["certificate_source"] = eval ? "evaluation data" : "known population";
      if (!c.lambda_converged)
        std::fprintf(stderr, "dpsosp: warning: lambda_min did not converge (residual %.3g); the certificate says so\n",
                     c.lambda_residual);
    } catch (const Error& e) {
      certificate_home["certificate"] = nullptr;
      certificate_home["certificate_error"] = e.what();
      std::fprintf(stderr, "dpsosp: warning: certificate failed: %s (the report is written)\n", e.what());
    }
  }
  if (!release_only) j["diagnostics"] = std::move(diagnostics);
  write_text(a.out, j.dump(2) + "\n");
  if (interrupted) {
    const int signo = stop_signal_number();
    std::fprintf(stderr, "dpsosp: interrupted after %zu steps; the report so far was written\n",
                 static_cast<size_t>(s.steps));
    return 128 + signo;
  }
  if (!a.quiet) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::fprintf(stderr, "dpsosp: %s\n", run_summary_line(s, eval_figure, seconds, a.out).c_str());
    if (budget)
      std::fprintf(stderr, "dpsosp: budget %s: epsilon %.4g of %.4g spent at delta %.4g by %zu runs\n",
                   a.budget.c_str(), budget->spent(), budget->epsilon(), budget->delta(), budget->ledger().size());
  }
  return 0;
}

}  // namespace

void setup_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Run an optimizer on a dataset and write a JSON report");
  args->app = run;
  add_data_options(*run, args->source);
  args->source.intercept_by_default = true;
  add_scale_options(*run, args->scaling);
  // The library's options (options.hpp), in its order, with its help and defaults.
  for (const OptionSpec& spec : run_option_table()) {
    if (spec.model_or_data) continue;  // the data's and the model's: add_data_options, add_scale_options
    if (spec.kind == OptionKind::kFlag) {
      run->add_flag(spec.flag, args->flags[spec.key], spec.help);
    } else if (spec.kind == OptionKind::kOverrides) {
      run->add_option(spec.flag, args->overrides, spec.help + " (name=value, repeated)");
    } else {
      std::string& value = args->text[spec.key];
      value = spec.default_text;
      const bool listed = spec.kind == OptionKind::kChoice || spec.kind == OptionKind::kSwitch;
      auto* option = run->add_option(spec.flag, value, spec.help + (listed ? ": " + option_rule_text(spec) : ""));
      if (!spec.default_text.empty()) option->default_str(spec.default_text);
    }
  }
  run->add_flag("--stream", args->stream, run_option("stream").help);
  run->add_option(
      "--x0", args->x0,
      "Start point: a file (one CSV line, or a result JSON), or zeros (default), saddle, optimum (synthetic)");
  run->add_flag("--quiet", args->quiet, "No progress on stderr (warnings and errors still)");
  run->add_option("--eval", args->eval, "Evaluation data for the certificate (same format rules as --data)");
  run->add_flag("--no-certificate", args->no_certificate,
                "Skip the certificate (it can take minutes for large models)");
  run->add_option("--eval-labels", args->eval_labels, "IDX labels of --eval (default: the file beside it)");
  run->add_option("--budget", args->budget,
                  "A budget file (dpsosp budget FILE --new) this run is charged to: refused before it reads a record "
                  "where it would overrun the budget; the file is updated after the run (docs/budget.md)");
  run->add_option("--out", args->out, "Write the JSON report here (default: stdout); checked before the run starts");
  run->callback([args] {
    const int rc = do_run(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dpsosp::cli
