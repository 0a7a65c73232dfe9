// The subcommands certify, privacy and keygen (run is in run.cpp, demo in
// demo.cpp, audit in audit.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>

#include "cli.hpp"
#include "progress.hpp"
#include "result_reader.hpp"

namespace dpsosp::cli {

void setup_certify(CLI::App& app) {
  struct Args {
    DataSource source;
    std::string point;
    std::string rho;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("certify", "Gradient norm, smallest Hessian eigenvalue and SOSP gap of a point");
  add_data_options(*cmd, args->source);
  cmd->add_option("--point", args->point, "A result JSON from `dpsosp run` (its \"x\"), or a file with one CSV line")
      ->required();
  cmd->add_option("--rho", args->rho, "Hessian-Lipschitz constant > 0 for the gap (default: the result's, else 1)");
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->callback([args, cmd] {
    const bool rho_given = cmd->count("--rho") > 0;
    double rho = rho_given ? parse_real(args->rho, "--rho", Range::kPositive) : 0.0;
    if (args->point.empty()) throw Error("--point: empty file name");
    // Read the point before the data: a bad point file fails at once.
    const PointFile point = read_point_file(args->point, "--point " + args->point);
    default_features_from_point(args->source, point.features);
    // The point's own model: its intercept (run's default) unless one is asked for here.
    if (point.shape && !args->source.given("--fit-intercept") && !args->source.given("--no-fit-intercept"))
      args->source.fit_intercept = point.shape->fit_intercept;
    LoadedProblem p = load_problem(args->source);
    // A point fitted on the unit scale is certified on the records as it saw them.
    if (point.scaling && !p.population) p.data = point.scaling->apply(p.data);
    if (static_cast<Index>(point.x.size()) != p.model->dim())
      throw Error("--point " + args->point + ": x has " + std::to_string(point.x.size()) + " entries, model " +
                  p.model->name() + " has dimension " + std::to_string(p.model->dim()));
    if (!rho_given) rho = point.rho ? *point.rho : 1.0;
    Certificate c;
    std::string source;
    Progress progress(args->quiet, 0, std::nullopt, false);
    EigenOptions eigen;
    eigen.on_cycle = [&progress](const EigenProgress& e) {
      progress.certificate(e);
      return true;
    };
    if (p.population) {
      c = certify_population(*p.population, point.x, rho, eigen);
      source = "known population";
    } else {
      c = certify_empirical(*p.model, p.data, point.x, rho, eigen);
      source = "data";
    }
    progress.finish();
    if (!c.lambda_converged)
      std::fprintf(stderr, "dpsosp: warning: lambda_min did not converge (residual %.3g); the certificate says so\n",
                   c.lambda_residual);
    nlohmann::json j = certificate_report(c);
    j["rho"] = rho;
    j["source"] = source;
    std::cout << j.dump(2) << "\n";
  });
}

namespace {

// --steps: positive integers separated by commas.
std::vector<std::uint64_t> parse_steps(const std::string& text) {
  std::vector<std::uint64_t> steps;
  if (text.empty()) throw Error("--steps: no step counts given");
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = text.find(',', pos);
    const std::string token = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::uint64_t v = 0;
    if (!parse_strict_uint(token, v) || v == 0)
      throw Error("--steps: expected positive integers separated by commas, got " + quote_token(token) +
                  (token.empty() ? " (an empty entry)" : ""));
    steps.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return steps;
}

}  // namespace

void setup_privacy(CLI::App& app) {
  struct Args {
    std::string z, steps, delta, q, accountant, adjacency, epsilon, prior_mu, discretization = "1e-4";
    std::string mechanism = "tree", period = "0";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("privacy",
                                 "Privacy figures of the tree or matrix-factorization mechanism, or of Poisson DP-SGD");
  cmd->add_option("--noise-multiplier", args->z, "z = sigma / sensitivity, > 0")->required();
  cmd->add_option("--steps", args->steps,
                  "Tree form: phase lengths L1,L2,... (each >= 1); Poisson form: number of steps T")
      ->required();
  cmd->add_option("--delta", args->delta, "delta in (0,1)")->required();
  cmd->add_option("--sampling-rate", args->q, "Poisson DP-SGD sampling rate q in (0,1] (selects the Poisson form)");
  cmd->add_option("--mechanism", args->mechanism,
                  "Single-pass form: tree (phase lengths in --steps) or mf (the square-root matrix factorization "
                  "over --steps T releases, as spider-mf-adaptive uses it; docs/matrix-factorization.md)")
      ->capture_default_str();
  cmd->add_option("--period", args->period,
                  "mf form: every record in the releases i, i + P, i + 2P, ... (spider-mf-adaptive --epochs E: "
                  "P = steps_per_epoch); 0 = one release per record")
      ->capture_default_str();
  cmd->add_option("--accountant", args->accountant,
                  "pld, rdp or gdp (tree form only): that accountant's figures, and its eps as \"epsilon\" "
                  "(default: every accountant that applies, without \"epsilon\")");
  cmd->add_option("--adjacency", args->adjacency,
                  "zero-out (= add-remove with n public) or replace-one. Poisson form: z = sigma / C, add-remove by "
                  "default; replace-one by PLD only. Single-pass forms: z = sigma / (2C / b), the replace-one "
                  "bound, replace-one by default; zero-out halves every release's sensitivity (mu / 2)");
  cmd->add_option("--prior-mu", args->prior_mu,
                  "Poisson form, PLD: a Gaussian release of this mu-GDP made first on the same records (a run's "
                  "private scale estimate: its report's scaling.estimate.mu where composition is pld), composed in");
  cmd->add_option("--epsilon", args->epsilon, "Also print delta at this eps >= 0 (delta_pld, delta_gdp)");
  cmd->add_option("--discretization", args->discretization, "PLD value discretization interval, > 0")
      ->capture_default_str();
  cmd->callback([args, cmd] {
    const double z = parse_real(args->z, "--noise-multiplier", Range::kPositive);
    const double delta = parse_real(args->delta, "--delta", Range::kOpenUnit);
    const std::vector<std::uint64_t> steps = parse_steps(args->steps);
    const bool poisson = cmd->count("--sampling-rate") > 0;
    const std::string& chosen = args->accountant;
    if (cmd->count("--accountant") > 0 && chosen != "pld" && chosen != "rdp" && chosen != "gdp")
      throw Error("--accountant: expected pld, rdp or gdp, got " + quote_token(chosen));
    if (args->adjacency.empty()) args->adjacency = poisson ? "add-remove" : "replace-one";
    if (args->adjacency != "add-remove" && args->adjacency != "zero-out" && args->adjacency != "replace-one")
      throw Error("--adjacency: expected zero-out, add-remove or replace-one, got " + quote_token(args->adjacency));
    const bool replace = args->adjacency == "replace-one";
    // The single-pass forms' z is relative to the replace-one bound; a record
    // replaced by a null record moves each release by half of it.
    const double single_pass_z = replace ? z : 2 * z;
    if (cmd->count("--prior-mu") > 0 && !poisson)
      throw Error("--prior-mu: applies to the Poisson form (--sampling-rate)");
    if (cmd->count("--period") > 0 && (poisson || args->mechanism != "mf"))
      throw Error("--period: applies to the mf form (--mechanism mf)");
    if (poisson && cmd->count("--mechanism") > 0)
      throw Error("--mechanism: applies to the single-pass form; --sampling-rate selects the Poisson form");
    if (poisson && chosen == "gdp")
      throw Error("--accountant gdp: the Poisson form has no exact GDP accounting; use pld or rdp");
    if (poisson && replace && chosen == "rdp")
      throw Error("--accountant rdp: the RDP figure is for add/remove adjacency; use pld with --adjacency replace-one");
    const bool explicit_choice = cmd->count("--accountant") > 0;
    const auto uses = [&](const char* name) { return explicit_choice ? chosen == name : true; };
    const bool use_pld = uses("pld"), use_rdp = uses("rdp") && !(poisson && replace), use_gdp = uses("gdp") && !poisson;
    std::optional<double> at_epsilon;
    if (cmd->count("--epsilon") > 0) at_epsilon = parse_real(args->epsilon, "--epsilon", Range::kNonNegative);
    privacy::PldOptions pld;
    pld.discretization = parse_real(args->discretization, "--discretization", Range::kPositive);
    nlohmann::json j;
    double epsilon = 0;
    if (poisson) {
      const double q = parse_real(args->q, "--sampling-rate", Range::kHalfOpenUnit);
      if (steps.size() != 1)
        throw Error("--steps: the Poisson form takes one step count T, got " + std::to_string(steps.size()));
      const auto relation = replace ? privacy::Neighbouring::kReplaceOne : privacy::Neighbouring::kAddRemove;
      const double prior =
          cmd->count("--prior-mu") > 0 ? parse_real(args->prior_mu, "--prior-mu", Range::kPositive) : 0.0;
      if (prior > 0 && explicit_choice && chosen == "rdp")
        throw Error("--prior-mu: composed by PLD only; use --accountant pld");
      if (prior > 0) j["prior_mu"] = number(prior);
      if (use_rdp && prior == 0)
        j["epsilon_rdp"] = number(epsilon = privacy::dpsgd_poisson_epsilon(q, z, steps[0], delta));
      if (use_pld) {
        try {
          j["epsilon_pld"] = number(epsilon = privacy::dpsgd_pld_epsilon(q, z, steps[0], delta, relation, pld, prior));
          j["epsilon_pld_optimistic"] =
              number(privacy::dpsgd_pld_epsilon_optimistic(q, z, steps[0], delta, relation, pld, prior));
          if (at_epsilon) j["delta_pld"] = privacy::dpsgd_pld_delta(q, z, steps[0], *at_epsilon, relation, pld, prior);
        } catch (const Error& e) {
          // Asked for, the PLD's failure (too many bins) is the answer; by
          // default the other accountants' figures still stand.
          if (explicit_choice || !use_rdp || prior > 0) throw;
          j["epsilon_pld"] = nullptr;
          j["pld_error"] = e.what();
        }
      }
      j["form"] = "poisson-subsampled-gaussian";
      j["adjacency"] = replace ? "replace-one" : args->adjacency == "zero-out" ? "zero-out" : "add/remove-one";
    } else if (args->mechanism == "mf") {
      if (steps.size() != 1)
        throw Error("--steps: the mf form takes one horizon T, got " + std::to_string(steps.size()));
      if (explicit_choice && chosen != "gdp")
        throw Error("--accountant " + chosen + ": the mf form is accounted exactly by GDP; use gdp or leave it out");
      const auto period = static_cast<Index>(parse_count(args->period, "--period", 0, steps[0]));
      const BltFactorization f = BltFactorization::square_root(steps[0]);
      const double column =
          period > 0 && period < steps[0] ? f.cyclic_participation_norm(steps[0], period) : f.max_column_norm(steps[0]);
      const double mu = column / single_pass_z;
      j["epsilon_gdp"] = number(epsilon = privacy::gdp_epsilon(mu, delta));
      j["mu"] = number(mu);
      j["rho"] = number(mu * mu / 2);
      j["epsilon_rdp"] = number(privacy::zcdp_to_epsilon(mu * mu / 2, delta));
      if (at_epsilon) j["delta_gdp"] = privacy::gdp_delta(mu, *at_epsilon);
      j["column_norm"] = column;
      j["buffers"] = f.buffers();
      j["horizon"] = steps[0];
      if (period > 0) j["period"] = period;
      j["form"] = "matrix-factorization";
      j["adjacency"] = replace ? "replace-one" : "zero-out";
    } else {
      if (args->mechanism != "tree")
        throw Error("--mechanism: expected tree or mf, got " + quote_token(args->mechanism));
      const privacy::TreeAccount a = privacy::account_tree(single_pass_z, steps, delta);
      if (use_gdp) {
        j["epsilon_gdp"] = number(epsilon = a.epsilon_gdp);
        j["mu"] = number(a.mu);
        if (at_epsilon) j["delta_gdp"] = privacy::gdp_delta(a.mu, *at_epsilon);
      }
      if (use_rdp) {
        j["epsilon_rdp"] = number(epsilon = a.epsilon_rdp);
        j["rho"] = number(a.rho);
      }
      if (use_pld) {
        try {
          j["epsilon_pld"] = number(epsilon = privacy::tree_pld_epsilon(single_pass_z, a.depth, delta, pld));
          if (at_epsilon && a.depth > 0)
            j["delta_pld"] =
                privacy::gaussian_pld(single_pass_z, std::sqrt(static_cast<double>(a.depth)), pld).delta(*at_epsilon);
        } catch (const Error& e) {
          if (explicit_choice) throw;  // as in the Poisson form
          j["epsilon_pld"] = nullptr;
          j["pld_error"] = e.what();
        }
      }
      j["depth"] = a.depth;
      j["form"] = "tree";
      j["adjacency"] = replace ? "replace-one" : "zero-out";
    }
    if (use_pld && args->mechanism != "mf") j["discretization"] = pld.discretization;
    if (explicit_choice) {
      j["accountant"] = chosen;
      j["epsilon"] = number(epsilon);
    }
    std::cout << j.dump(2) << "\n";
  });
}

void setup_keygen(CLI::App& app) {
  struct Args {
    std::string out;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "keygen", "Write a new secret noise key (128 bits from the OS) for --noise-key-file, readable by you alone");
  cmd->add_option("--out", args->out, "The key file to create (never overwritten; - for stdout)")->required();
  cmd->callback([args] {
    const std::string text = NoiseKey::generate().to_hex() + "\n";
    if (args->out == "-") {
      std::cout << text << std::flush;
      return;
    }
    if (args->out.empty()) throw Error("--out: empty file name");
    // O_EXCL: an existing key (perhaps the one that reproduces earlier runs) is never replaced.
    const int fd = ::open(args->out.c_str(), O_WRONLY | O_CREAT | O_EXCL, S_IRUSR | S_IWUSR);
    if (fd < 0) {
      const int err = errno;
      throw Error("--out " + args->out + ": cannot create the key file: " + std::strerror(err) +
                  (err == EEXIST ? " (keygen never replaces a key)" : ""));
    }
    // 0600 whatever the umask (open's mode can only be narrowed by it): a
    // key file that others can read is refused by --noise-key-file.
    const bool written = ::fchmod(fd, S_IRUSR | S_IWUSR) == 0 &&
                         ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    if (::close(fd) != 0 || !written) {
      ::unlink(args->out.c_str());
      throw Error("--out " + args->out + ": writing the key failed: " + std::strerror(err));
    }
  });
}

}  // namespace dpsosp::cli
