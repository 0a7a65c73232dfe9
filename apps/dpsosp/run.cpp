// `dpsosp run`: one optimizer run and its JSON report (SIGINT/SIGTERM:
// stop_signal.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdio>
#include <limits>
#include <cstring>
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
struct RunArgs {
  DataSource source;
  CLI::App* app = nullptr;
  std::string algo = "spider-mf-adaptive";
  std::string epsilon = "1", delta = "1e-6", noise = "float";
  std::string seed, noise_key_file, x0, eval, eval_labels, out;
  bool no_certificate = false;
  bool release_only = false;
  std::string G = "auto", M = "auto", rho = "1", B = "1";
  std::string alpha_scale = "1";
  std::string batch_size, period, max_steps = "0", max_phase_length = "0";
  std::string epochs = "0", learning_rate, tail, o2 = "off", accountant = "pld", sampling, bands, adjacency;
  std::string threads = "0";
  bool trajectory = false, quiet = false;
  bool stream = false;  // --stream: read a record file once, front to back (stream_source.cpp)
  std::string order;    // --order seed|file
  ScaleArgs scaling;  // --bounds, --y-bounds, --scale, --scale-share, --normalize (scale_options.cpp)
  std::vector<std::string> overrides;
  bool given(const std::string& option) const { return app->count(option) > 0; }
};

Vec parse_x0(const std::string& spec, const LoadedProblem& p) {
  const Index d = p.model->dim();
  if (spec.empty()) throw Error("--x0: empty (expected a CSV or result file, or zeros, saddle, optimum)");
  if (spec == "zeros") return Vec::Zero(static_cast<Eigen::Index>(d));
  if (spec == "saddle" || spec == "optimum") {
    if (!p.population)
      throw Error("--x0 " + spec + ": only for a --synthetic problem with a known population (phase-retrieval, pca) "
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

// The checks that need the records' count and the model (the library's
// Validate(n)), and the start point.
void check_sizes_and_start(const RunArgs& a, const RunOptions& o, const LoadedProblem& p, Vec& x0) {
  try {
    o.Validate(p.rows());  // the rules that need n, in the library's words
  } catch (const Error& e) {
    if (!a.given("--delta") && std::strstr(e.what(), "privacy.delta") != nullptr)
      throw Error(std::string("--delta (the default, ") + a.delta + ") is not below 1/n for the " +
                  std::to_string(p.rows()) + " records: give a smaller --delta, well below 1/n");
    refuse_in_cli_words(e);
  }
  x0 = a.given("--x0") ? parse_x0(a.x0, p) : Vec::Zero(static_cast<Eigen::Index>(p.model->dim()));
}

int do_run(const RunArgs& a) {
  const auto started = std::chrono::steady_clock::now();
  // Everything that needs no data is checked first, so a typo fails at once.
  RunOptions o;
  o.algorithm = parse_algorithm(a.algo);
  const AlgorithmInfo& info = algorithm_info(o.algorithm);
  // The target: --epsilon (default 1) for a private algorithm; a non-private
  // one takes none unless given (and then the library refuses a finite one).
  const double epsilon = parse_real(a.epsilon, "--epsilon", Range::kPositiveOrInf);
  const double delta = parse_real(a.delta, "--delta", Range::kOpenUnit);
  if (a.noise != "float" && a.noise != "secure")
    throw Error("--noise: expected float or secure, got " + quote_token(a.noise));
  if (info.is_private || a.given("--epsilon")) o.privacy = PrivacyTarget{epsilon, delta};
  if (a.noise == "secure") {
    if (!o.privacy) throw Error("--noise secure: " + info.name + " is non-private and adds no noise");
    o.privacy->noise = NoiseMode::kSecure;
  }
  // G and M: a value, or auto (a private estimate, clip_estimate.hpp), the
  // default of a private run; a non-private run takes 1 when not given.
  const auto constant = [&](const std::string& text, const char* option, bool& estimate) {
    if (text != "auto") return parse_real(text, option, Range::kPositive);
    if (info.is_private && !(o.privacy && !o.privacy->is_private())) {
      estimate = true;
    } else if (a.given(option)) {
      throw Error(std::string(option) + " auto: the constants are estimated privately for private runs only; give a "
                  "value for " + info.name);
    }
    return 1.0;
  };
  o.constants.G = constant(a.G, "--G", o.estimate.G);
  o.constants.M = constant(a.M, "--M", o.estimate.M);
  o.constants.rho = parse_real(a.rho, "--rho", Range::kPositive);
  o.constants.B = parse_real(a.B, "--B", Range::kPositive);
  if (a.given("--alpha-scale")) o.alpha_scale = parse_real(a.alpha_scale, "--alpha-scale", Range::kPositive);
  if (a.given("--batch-size")) o.batch_size = parse_index_value(a.batch_size, "--batch-size");
  if (a.given("--period")) o.period = parse_index_value(a.period, "--period");
  o.max_steps = static_cast<Index>(parse_count(a.max_steps, "--max-steps", 0, std::numeric_limits<std::uint64_t>::max()));
  if (a.given("--max-phase-length")) {
    const auto L = static_cast<Index>(
        parse_count(a.max_phase_length, "--max-phase-length", 0, std::numeric_limits<std::uint64_t>::max()));
    if (L > 0) o.max_phase_length = L;  // 0: automatic
    else if (!(info.knobs & kKnobMaxPhaseLength))
      throw Error("--max-phase-length: applies to " + algorithms_reading(kKnobMaxPhaseLength) + ", not " + info.name);
  }
  if (a.given("--epochs")) {
    o.epochs = parse_real(a.epochs, "--epochs", Range::kNonNegative);
    if (*o.epochs > 1e9) throw Error("--epochs: expected at most 1e9 epochs, got " + quote_token(a.epochs));
  }
  if (a.given("--accountant")) {
    if (a.accountant != "pld" && a.accountant != "rdp")
      throw Error("--accountant: expected pld or rdp, got " + quote_token(a.accountant));
    o.accountant = a.accountant == "pld" ? Accountant::kPld : Accountant::kRdp;
  }
  if (a.given("--sampling")) o.sampling = parse_sampling(a.sampling);
  if (a.given("--adjacency")) set_adjacency(a.adjacency, o);
  if (a.given("--bands")) o.bands = parse_index_value(a.bands, "--bands");
  if (a.given("--learning-rate")) o.learning_rate = parse_real(a.learning_rate, "--learning-rate", Range::kPositive);
  if (a.given("--tail")) o.tail = parse_real(a.tail, "--tail", Range::kNonNegative);
  if (a.given("--o2")) {
    if (a.o2 != "on" && a.o2 != "off") throw Error("--o2: expected on or off, got " + quote_token(a.o2));
    if (!(info.knobs & kKnobO2))
      throw Error("--o2: applies to " + algorithms_reading(kKnobO2) + ", not " + info.name);
    o.o2 = a.o2 == "on";
  }
  o.threads = static_cast<int>(parse_count(a.threads, "--threads", 0, kMaxThreads));
  o.record_trajectory = a.trajectory;
  parse_overrides(a.overrides, o.overrides);
  if (a.given("--seed")) o.seed = parse_count(a.seed, "--seed", 0, std::numeric_limits<std::uint64_t>::max());
  if (a.given("--order")) {
    if (a.order != "seed" && a.order != "file") throw Error("--order: expected seed or file, got " + quote_token(a.order));
    if (a.stream && a.order != "file")
      throw Error("--order " + a.order + ": a streamed run reads the records in the file's order (--order file)");
    o.sample_order = a.order == "file" ? SampleOrder::kFile : SampleOrder::kSeed;
  }
  o.process_group = Processes::group();
  choose_default_sampling(o, a.stream);  // the library's default, as Python's
  if (a.stream && o.poisson())
    throw Error(std::string("--stream: a streamed run reads the file in order; ") +
                (info.knobs & kKnobSampling ? "--sampling poisson (the default with --epochs above 1) draws records by "
                                              "index; give --sampling order"
                                            : "--epochs (Poisson dpsgd) draws records by index"));
  // What applies to which algorithm is the library's rule, in its words.
  try {
    o.Validate();
  } catch (const Error& e) {
    refuse_in_cli_words(e);
  }
  const bool is_private_run = o.is_private_run();
  if (a.given("--noise-key-file") && !is_private_run)
    throw Error("--noise-key-file: a non-private run draws no privacy noise");
  // In an MPI job rank 0 alone reads the key and writes the report (the
  // library hands its key to the others); only its files need to exist.
  if (Processes::reports()) o.noise_key = read_noise_key_option(a.noise_key_file, a.given("--noise-key-file"));
  if (a.release_only && a.given("--eval"))
    throw Error("--eval: its metrics and certificate are diagnostics, which --release-only leaves out");
  if (a.given("--eval-labels") && !a.given("--eval")) throw Error("--eval-labels: applies with --eval");
  if (a.given("--eval-labels") && a.eval_labels.empty()) throw Error("--eval-labels: empty file name");
  check_public_shape(a.source, is_private_run);  // --classes, --features: declared, not read from the records
  if (a.given("--out") && Processes::reports()) check_writable(a.out);
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
    check_sizes_and_start(a, o, p, x0);
    if (a.given("--eval") && Processes::reports()) eval = load_eval_data(a.source, a.eval, a.eval_labels, *p.model);
  });
  const Index n = p.rows();
  if (is_private_run && Processes::reports()) {  // public: delta and n
    const std::string note = delta_note(o.privacy->delta, n);
    if (!note.empty()) std::fprintf(stderr, "dpsosp: warning: %s\n", note.c_str());
  }
  const ScalingOptions so = scaling_options(a.scaling, a.source, p);

  o.stop_flag = &stop_flag();
  // The run's length when it is known before it: max_steps, or Poisson's planned steps.
  std::optional<Index> total;
  if (o.max_steps > 0) total = o.max_steps;
  if (o.poisson() && !(info.knobs & kKnobSampling))  // dpsgd's planned steps (spider-mf-adaptive's: its bands')
    total = std::min(total.value_or(~Index{0}),
                     static_cast<Index>(std::ceil(*o.epochs * static_cast<double>(n) /
                                                  static_cast<double>(o.sgd_batch_size(n)))));
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
  if (p.records) scaled.summary = minimize(*p.model, *p.records, x0, o);
  else scaled = minimize_scaled(*p.model, p.data, x0, o, so);
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
  nlohmann::json j = release_json(s);
  nlohmann::json diagnostics = diagnostics_json(s);
  j["interrupted"] = interrupted;
  j["model"] = p.model->name();
  j["n"] = n;
  // How the records were read: public, fixed before the run.
  if (!s.sample_order.empty()) j["sample_order"] = s.sample_order;  // "seed" or "file"
  if (p.records) j["streamed"] = true;                              // once, front to back, in the file's order
  j["processes"] = s.processes;                                     // that shared each batch (mpirun -n P)
  j["d"] = p.model->dim();
  j["shape"] = shape_json(*p.model);
  diagnostics["load_seconds"] = p.load_seconds;
  j["target"] = {{"epsilon", number(o.privacy ? o.privacy->epsilon : std::numeric_limits<double>::infinity())},
                 {"delta", o.privacy ? o.privacy->delta : delta}};
  if (so.any()) j["scaling"] = scaling_json(scaled);
  j["constants"] = {{"G", s.constants.G}, {"M", s.constants.M}, {"rho", s.constants.rho}, {"B", s.constants.B}};
  std::string eval_figure;  // for the summary line
  if (eval) {  // before the certificate, which may take long on large models
    diagnostics["eval"] = eval_diagnostics(*p.model, s.x, *eval, eval_y, so.target ? &scaled.scaling : nullptr,
                                           eval_figure);
  }
  // Heavy clipping, for the data owner (a diagnostic: not with --release-only).
  const std::string clipping = a.release_only ? "" : clipping_note(s);
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
      certificate_home["certificate"] = certificate_json(c);
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
  if (!a.release_only) j["diagnostics"] = std::move(diagnostics);
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
  run->add_option("--algo", args->algo, "Algorithm: " + [] {
    std::string list;
    for (const auto& n : algorithm_names()) list += (list.empty() ? "" : ", ") + n;
    return list;
  }())->capture_default_str();
  run->add_option("--epsilon", args->epsilon, "Privacy budget epsilon (> 0; inf = non-private)")->capture_default_str();
  run->add_option("--delta", args->delta, "Privacy parameter delta in (0,1)")->capture_default_str();
  run->add_option("--noise", args->noise,
                  "float: Gaussian noise in floating point (exact GDP); secure: every release on a grid plus exact "
                  "discrete Gaussian noise (closes the floating-point attacks; about 7% more noise, zCDP accounting)")
      ->capture_default_str();
  run->add_option("--seed", args->seed,
                  "Seed of the public randomness: sample order and saddle perturbations (default: drawn from "
                  "/dev/urandom; reported)");
  run->add_option("--noise-key-file", args->noise_key_file,
                  "Secret key of the privacy noise (32 hex digits, from dpsosp keygen), for a reproducible run; keep "
                  "it as secret as the data (default: a fresh key from the OS, kept nowhere)");
  run->add_option("--x0", args->x0, "Start point: a file (one CSV line, or a result JSON), or zeros (default), saddle, optimum (synthetic)");
  run->add_option("--G", args->G,
                  "Lipschitz constant: per-example gradient clip for O1 (> 0), or auto: the private median of the "
                  "per-example gradient norms at x0 on the first min(20000, max(min(500, n/10), n/50)) records (private "
                  "runs; non-private: 1)")
      ->capture_default_str();
  run->add_option("--M", args->M,
                  "smoothness: O2 clip is M*||x_t - x_{t-1}||, step 1/M (> 0), or auto: the private median of "
                  "per-example gradient-difference ratios at x0 (private runs; non-private: 1)")
      ->capture_default_str();
  run->add_option("--rho", args->rho, "Hessian-Lipschitz constant (> 0)")->capture_default_str();
  run->add_option("--B", args->B, "bound on F(x0) - inf F (> 0)")->capture_default_str();
  run->add_option("--alpha-scale", args->alpha_scale, "SPIDER algorithms: multiplies the theory's alpha")->capture_default_str();
  run->add_option("--batch-size", args->batch_size, "Fixed batch (>= 1) of spider-gauss-fixed, spider-tree-periodic, dpsgd, sgd, spider (default: the algorithm's)");
  run->add_option("--period", args->period, "spider-tree-periodic: O1 every q >= 1 steps (default: from the theory)");
  run->add_option("--epochs", args->epochs,
                  "dpsgd: > 0 selects multi-epoch Poisson sampling (PLD accounting); 0 = single pass. "
                  "spider-mf-adaptive: passes (0 or 1: one), drawn as --sampling says; unset: the default run's, "
                  "3 up to 100000 records, then floor(300000 / n), at least 1 (docs/parameters.md)")
      ->capture_default_str();
  run->add_option("--sampling", args->sampling,
                  "spider-mf-adaptive: poisson (the default with --epochs above 1: cyclic Poisson sampling with the "
                  "banded square-root factorization, amplified, zero-out, --accountant) or order (whole passes over "
                  "the sample order, replace-one; streams)");
  run->add_option("--adjacency", args->adjacency, "Poisson-sampled runs: replace-one (PLD) or zero-out (as "
                  "Opacus; the default with --sampling poisson or --epochs above 1); single passes: replace-one");
  run->add_option("--bands", args->bands,
                  "spider-mf-adaptive with --sampling poisson: the bands (groups the steps cycle through; default "
                  "automatic, docs/parameters.md)");
  run->add_option("--accountant", args->accountant,
                  "Poisson-sampled runs (dpsgd with --epochs, spider-mf-adaptive with --sampling poisson): pld "
                  "(privacy-loss distribution: less noise for the same target) or rdp; calibrates the noise and "
                  "states the guarantee")
      ->capture_default_str();
  run->add_option("--learning-rate", args->learning_rate, "sgd/dpsgd step size > 0 (default 1/M)");
  run->add_option("--tail", args->tail,
                  "spider-mf-adaptive: the result is the mean of the iterates over the last TAIL of the records, in "
                  "[0, 1) (0 = the last iterate; default 0.25)");
  run->add_option("--o2", args->o2,
                  "spider-mf-adaptive: on for phases of O1 and consistent O2 steps (docs/parameters.md), off for O1 "
                  "steps only")
      ->capture_default_str();
  run->add_option("--max-steps", args->max_steps, "Stop after this many steps (0 = until the data run out)")->capture_default_str();
  run->add_option("--max-phase-length", args->max_phase_length, "SPIDER algorithms: L_max, the longest tree phase (0 = automatic, docs/parameters.md)")->capture_default_str();
  run->add_option("--set", args->overrides, "Override a parameter: name=value (alpha, kappa, sigma, eta, zeta, threshold, b, T, Gamma)");
  run->add_option("--threads", args->threads, "Threads, 0 (all cores) to 1024; never changes results")->capture_default_str();
  run->add_flag("--trajectory", args->trajectory, "Include every iterate in the report");
  run->add_flag("--stream", args->stream,
                "Read the --data record file (dpsosp convert) once, front to back, a few batches in memory at a "
                "time: the single-pass order is the file's (public, fixed before the run); every record is "
                "checked as it is read, and a bad one ends the run with no report");
  run->add_option("--order", args->order,
                  "Single-pass order: seed (default: a random order fixed by --seed) or file (the records' own "
                  "order, public; the order of --stream)");
  run->add_flag("--quiet", args->quiet, "No progress on stderr (warnings and errors still)");
  run->add_option("--eval", args->eval, "Evaluation data for the certificate (same format rules as --data)");
  run->add_flag("--no-certificate", args->no_certificate, "Skip the certificate (it can take minutes for large models)");
  run->add_option("--eval-labels", args->eval_labels, "IDX labels of --eval (default: the file beside it)");
  run->add_option("--out", args->out, "Write the JSON report here (default: stdout); checked before the run starts");
  run->add_flag("--release-only", args->release_only,
                "Leave out the diagnostics (clipped counts, timings, eval metrics): the report holds only what the "
                "privacy guarantee covers");
  run->callback([args] {
    const int rc = do_run(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace dpsosp::cli
