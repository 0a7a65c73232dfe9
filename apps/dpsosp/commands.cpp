// The subcommands run, certify, privacy and demo.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.hpp"

namespace dpsosp::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

struct RunArgs {
  DataSource source;
  std::string algo = "spider-tree-adaptive";
  std::string epsilon = "1";
  double delta = 1e-6;
  std::string seed;
  std::string x0;
  std::string eval;
  std::string eval_labels;
  std::string out;
  ProblemConstants constants;
  double alpha_scale = 1.0;
  Index batch_size = 0, period = 0, max_steps = 0, max_phase_length = 1024;
  double epochs = 0, learning_rate = 0;
  int threads = 0;
  bool trajectory = false;
  std::vector<std::string> overrides;
};

std::uint64_t parse_seed(const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || text[0] == '-') throw Error("--seed: expected a non-negative integer, got '" + text + "'");
  return v;
}

Vec parse_x0(const std::string& spec, const LoadedProblem& p) {
  const Index d = p.model->dim();
  if (spec.empty() || spec == "zeros") return Vec::Zero(d);
  if (spec == "saddle" || spec == "optimum") {
    if (!p.synthetic) throw Error("--x0 " + spec + ": only for --synthetic problems with a known population");
    const Vec& v = spec == "saddle" ? p.synthetic->saddle : p.synthetic->x_star;
    if (static_cast<Index>(v.size()) != d) throw Error("--x0 " + spec + ": not known for this problem and model");
    return v;
  }
  std::ifstream f(spec);
  if (!f) throw Error("--x0: cannot open '" + spec + "'");
  std::string line;
  std::getline(f, line);
  std::vector<double> values;
  std::stringstream ss(line);
  std::string token;
  while (std::getline(ss, token, ',')) values.push_back(parse_number(token.substr(0, token.find_last_not_of(" \r\t") + 1), "--x0 " + spec));
  if (values.size() != d) {
    throw Error("--x0 " + spec + ": expected " + std::to_string(d) + " values for model " + p.model->name() + ", got " +
                std::to_string(values.size()));
  }
  Vec x(d);
  for (Index i = 0; i < d; ++i) {
    if (!std::isfinite(values[i])) throw Error("--x0 " + spec + ": value " + std::to_string(i + 1) + " is not finite");
    x[i] = values[i];
  }
  return x;
}

void apply_override(const std::string& kv, ParameterOverrides& o) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos) throw Error("--set: expected name=value, got '" + kv + "'");
  const std::string k = kv.substr(0, eq);
  const double v = parse_number(kv.substr(eq + 1), "--set " + k);
  if (!(v > 0) || !std::isfinite(v)) throw Error("--set " + k + ": must be positive and finite, got " + kv.substr(eq + 1));
  if (k == "alpha") o.alpha = v;
  else if (k == "kappa") o.kappa = v;
  else if (k == "sigma") o.sigma = v;
  else if (k == "eta") o.eta = v;
  else if (k == "zeta") o.zeta = v;
  else if (k == "threshold") o.threshold = v;
  else if (k == "b") o.b = static_cast<Index>(std::ceil(v));
  else if (k == "T") o.T = static_cast<Index>(std::ceil(v));
  else if (k == "Gamma") o.Gamma = static_cast<Index>(std::ceil(v));
  else throw Error("--set: unknown parameter '" + k + "' (alpha, kappa, sigma, eta, zeta, threshold, b, T, Gamma)");
}

Certificate certify_point(const LoadedProblem& p, const std::optional<Dataset>& eval, const Model& eval_model,
                          const Vec& x, double rho) {
  if (eval) return certify_empirical(eval_model, *eval, x, rho);
  return certify_population(*p.synthetic->population, x, rho);
}

void add_constants(CLI::App& app, ProblemConstants& c) {
  app.add_option("--G", c.G, "Lipschitz constant: per-example gradient clip for O1")->capture_default_str();
  app.add_option("--M", c.M, "smoothness: O2 clip is M*||x_t - x_{t-1}||, step 1/M")->capture_default_str();
  app.add_option("--rho", c.rho, "Hessian-Lipschitz constant")->capture_default_str();
  app.add_option("--B", c.B, "bound on F(x0) - inf F")->capture_default_str();
}

int do_run(const RunArgs& a) {
  RunOptions o;
  o.algorithm = parse_algorithm(a.algo);
  o.privacy.epsilon = parse_number(a.epsilon, "--epsilon");
  o.privacy.delta = a.delta;
  if (!(o.privacy.epsilon > 0)) throw Error("--epsilon: must be > 0 (or inf for a non-private run), got " + a.epsilon);
  if (o.privacy.is_private() && !(a.delta > 0 && a.delta < 1))
    throw Error("--delta: must lie in (0, 1), got " + std::to_string(a.delta));
  if (!o.privacy.is_private() && is_private_algorithm(o.algorithm) && o.algorithm != Algorithm::kSpiderTreeAdaptive)
    throw Error("--epsilon inf: " + a.algo + " is a private algorithm; use --algo spider or sgd for non-private runs");
  if (!is_private_algorithm(o.algorithm)) o.privacy.epsilon = std::numeric_limits<double>::infinity();
  o.constants = a.constants;
  o.alpha_scale = a.alpha_scale;
  o.batch_size = a.batch_size;
  o.period = a.period;
  o.epochs = a.epochs;
  o.learning_rate = a.learning_rate;
  o.max_steps = a.max_steps;
  o.max_phase_length = a.max_phase_length;
  o.threads = a.threads;
  o.record_trajectory = a.trajectory;
  for (const auto& kv : a.overrides) apply_override(kv, o.overrides);
  if (!a.seed.empty()) o.seed = parse_seed(a.seed);
  o.Validate();
  check_writable(a.out);

  LoadedProblem p = load_problem(a.source);
  const Vec x0 = parse_x0(a.x0, p);
  std::optional<Dataset> eval;
  if (!a.eval.empty()) {
    DataSource es = a.source;
    es.synthetic.clear();
    es.data_path = a.eval;
    es.labels_path = a.eval_labels;
    es.model = p.model->name();
    eval = load_problem(es).data;
    p.model->validate(*eval);
  }
  const bool can_certify = eval.has_value() || (p.synthetic && p.synthetic->population);

  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  o.stop_flag = &g_stop;
  o.on_step = [&](Index step, const Vec&) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last).count() >= 1.0) {
      last = now;
      std::fprintf(stderr, "dpsosp: step %zu, %.1f s\n", static_cast<size_t>(step),
                   std::chrono::duration<double>(now - start).count());
    }
    return true;
  };
  g_stop.store(false);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const Summary s = minimize(*p.model, p.data, x0, o);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);

  nlohmann::json j = summary_json(s);
  j["model"] = p.model->name();
  j["n"] = p.data.rows();
  j["d"] = p.model->dim();
  j["load_seconds"] = p.load_seconds;
  j["target"] = {{"epsilon", number(o.privacy.epsilon)}, {"delta", o.privacy.delta}};
  j["constants"] = {{"G", o.constants.G}, {"M", o.constants.M}, {"rho", o.constants.rho}, {"B", o.constants.B}};
  if (can_certify) {
    j["certificate"] = certificate_json(certify_point(p, eval, *p.model, s.x, o.constants.rho));
    j["certificate_source"] = eval ? "evaluation data" : "known population";
  }
  if (eval) {
    IndexList all(eval->rows());
    for (Index i = 0; i < eval->rows(); ++i) all[i] = i;
    j["eval"] = {{"n", eval->rows()}, {"loss", number(p.model->mean_loss(s.x, *eval, all))},
                 {"accuracy", number(p.model->accuracy(s.x, *eval))}};
  }
  write_text(a.out, j.dump(2) + "\n");
  if (s.interrupted) {
    std::fprintf(stderr, "dpsosp: interrupted after %zu steps; the report so far was written\n",
                 static_cast<size_t>(s.steps));
    return 130;
  }
  return 0;
}

}  // namespace

void setup_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  auto* run = app.add_subcommand("run", "Run an optimizer on a dataset and write a JSON report");
  add_data_options(*run, args->source);
  run->add_option("--algo", args->algo, "Algorithm: spider-tree-adaptive, spider-gauss-fixed, spider-tree-periodic, dpsgd, spider, sgd")
      ->capture_default_str();
  run->add_option("--epsilon", args->epsilon, "Privacy budget epsilon (> 0; inf = non-private)")->capture_default_str();
  run->add_option("--delta", args->delta, "Privacy parameter delta in (0,1)")->capture_default_str();
  run->add_option("--seed", args->seed, "Seed of every random stream (default: drawn from /dev/urandom and reported)");
  run->add_option("--x0", args->x0, "Start point: a CSV file with one line, or zeros (default), saddle, optimum (synthetic)");
  add_constants(*run, args->constants);
  run->add_option("--alpha-scale", args->alpha_scale, "Multiplies the theory's alpha")->capture_default_str();
  run->add_option("--batch-size", args->batch_size, "Fixed batch of the fixed-batch algorithms (0 = default)");
  run->add_option("--period", args->period, "spider-tree-periodic: O1 every q steps (0 = default)");
  run->add_option("--epochs", args->epochs, "dpsgd: > 0 selects multi-epoch Poisson sampling (RDP accounting)");
  run->add_option("--learning-rate", args->learning_rate, "sgd/dpsgd step size (0 = 1/M)");
  run->add_option("--max-steps", args->max_steps, "Stop after this many steps (0 = until the data run out)");
  run->add_option("--max-phase-length", args->max_phase_length, "L_max: longest tree phase")->capture_default_str();
  run->add_option("--set", args->overrides, "Override a parameter: name=value (alpha, kappa, sigma, eta, zeta, threshold, b, T, Gamma)");
  run->add_option("--threads", args->threads, "Threads (0 = all cores); never changes results")->capture_default_str();
  run->add_flag("--trajectory", args->trajectory, "Include every iterate in the report");
  run->add_option("--eval", args->eval, "Evaluation data for the certificate (same format as --data)");
  run->add_option("--eval-labels", args->eval_labels, "IDX labels of --eval (default: the file beside it)");
  run->add_option("--out", args->out, "Write the JSON report here (default: stdout)");
  run->callback([args] {
    const int rc = do_run(*args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

void setup_certify(CLI::App& app) {
  struct Args {
    DataSource source;
    std::string point;
    double rho = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("certify", "Gradient norm, smallest Hessian eigenvalue and SOSP gap of a point");
  add_data_options(*cmd, args->source);
  cmd->add_option("--point", args->point, "A result JSON from `dpsosp run` (its \"x\"), or a CSV line")->required();
  cmd->add_option("--rho", args->rho, "Hessian-Lipschitz constant for the gap (default: the result's, else 1)");
  cmd->callback([args] {
    LoadedProblem p = load_problem(args->source);
    std::ifstream f(args->point);
    if (!f) throw Error("--point: cannot open '" + args->point + "'");
    std::stringstream buffer;
    buffer << f.rdbuf();
    const std::string text = buffer.str();
    Vec x;
    double rho = args->rho;
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && text[first] == '{') {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(text);
      } catch (const nlohmann::json::exception& e) {
        throw Error("--point " + args->point + ": not valid JSON (" + e.what() + ")");
      }
      if (!j.contains("x") || !j["x"].is_array()) throw Error("--point " + args->point + ": no \"x\" array in the result");
      std::vector<double> v;
      for (const auto& e : j["x"]) {
        if (!e.is_number()) throw Error("--point " + args->point + ": \"x\" has a non-numeric entry");
        v.push_back(e.get<double>());
      }
      x = Eigen::Map<Vec>(v.data(), static_cast<Eigen::Index>(v.size()));
      if (rho <= 0 && j.contains("constants") && j["constants"].contains("rho") && j["constants"]["rho"].is_number())
        rho = j["constants"]["rho"].get<double>();
    } else {
      x = parse_x0(args->point, p);
    }
    if (rho <= 0) rho = 1.0;
    if (static_cast<Index>(x.size()) != p.model->dim())
      throw Error("--point " + args->point + ": x has " + std::to_string(x.size()) + " entries, model " +
                  p.model->name() + " has dimension " + std::to_string(p.model->dim()));
    Certificate c;
    std::string source;
    if (p.synthetic && p.synthetic->population) {
      c = certify_population(*p.synthetic->population, x, rho);
      source = "known population";
    } else {
      c = certify_empirical(*p.model, p.data, x, rho);
      source = "data";
    }
    nlohmann::json j = certificate_json(c);
    j["rho"] = rho;
    j["source"] = source;
    std::cout << j.dump(2) << "\n";
  });
}

void setup_privacy(CLI::App& app) {
  struct Args {
    double z = 0;
    std::string steps;
    double delta = 0;
    double q = 0;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("privacy", "Privacy figures of the tree mechanism or of Poisson DP-SGD");
  cmd->add_option("--noise-multiplier", args->z, "z = sigma / sensitivity")->required();
  cmd->add_option("--steps", args->steps, "Tree form: phase lengths L1,L2,...; Poisson form: number of steps T")->required();
  cmd->add_option("--delta", args->delta, "delta in (0,1)")->required();
  auto* q_option = cmd->add_option("--sampling-rate", args->q, "Poisson DP-SGD sampling rate q in (0,1] (selects the Poisson form)");
  cmd->callback([args, q_option] {
    if (!(args->z > 0) || !std::isfinite(args->z)) throw Error("--noise-multiplier: must be positive, got " + std::to_string(args->z));
    if (!(args->delta > 0 && args->delta < 1)) throw Error("--delta: must lie in (0, 1), got " + std::to_string(args->delta));
    std::vector<std::uint64_t> steps;
    std::stringstream ss(args->steps);
    std::string token;
    while (std::getline(ss, token, ',')) {
      std::size_t used = 0;
      unsigned long long v = 0;
      try {
        v = std::stoull(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != token.size() || v == 0 || token[0] == '-')
        throw Error("--steps: expected positive integers separated by commas, got '" + token + "'");
      steps.push_back(v);
    }
    if (steps.empty()) throw Error("--steps: no step counts given");
    nlohmann::json j;
    if (q_option->count() > 0) {
      if (!(args->q > 0 && args->q <= 1)) throw Error("--sampling-rate: must lie in (0, 1], got " + std::to_string(args->q));
      if (steps.size() != 1) throw Error("--steps: the Poisson form takes one step count T");
      j["epsilon_rdp"] = privacy::dpsgd_poisson_epsilon(args->q, args->z, steps[0], args->delta);
      j["form"] = "poisson-subsampled-gaussian";
      j["adjacency"] = "add/remove-one";
    } else {
      const privacy::TreeAccount a = privacy::account_tree(args->z, steps, args->delta);
      j["epsilon_gdp"] = a.epsilon_gdp;
      j["epsilon_rdp"] = a.epsilon_rdp;
      j["mu"] = a.mu;
      j["rho"] = a.rho;
      j["depth"] = a.depth;
      j["form"] = "tree";
      j["adjacency"] = "replace-one";
    }
    std::cout << j.dump(2) << "\n";
  });
}

}  // namespace dpsosp::cli
