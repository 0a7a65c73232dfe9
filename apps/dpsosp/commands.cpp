// The subcommands certify, privacy and keygen (run is in run.cpp, demo in
// demo.cpp, audit in audit.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>

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

void setup_privacy(CLI::App& app) {
  // The question's text by key (privacy_figures.hpp); the figures are the library's.
  auto values = std::make_shared<std::map<std::string, std::string>>();
  auto* cmd = app.add_subcommand("privacy",
                                 "Privacy figures of the tree or matrix-factorization mechanism, or of Poisson DP-SGD");
  const auto option = [cmd, values](const std::string& key, const std::string& help) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return cmd->add_option_function<std::string>(
        flag, [values, key](const std::string& text) { (*values)[key] = text; }, help);
  };
  std::string forms;
  for (const PrivacyFormInfo& f : privacy_form_table())
    if (f.name != "poisson") forms += (forms.empty() ? "" : "; ") + f.name + ": " + f.summary;
  std::string accountants;
  for (const AccountantInfo& a : accountant_table()) {
    std::string applies;
    for (const std::string& f : a.forms) applies += (applies.empty() ? "" : ", ") + f;
    accountants += (accountants.empty() ? "" : "; ") + a.name + " (" + applies + ")";
  }
  option("noise_multiplier", "z = sigma / sensitivity, > 0 (or --target-epsilon)");
  option("target_epsilon",
         "Instead of --noise-multiplier: the z for which the form is (this eps, --delta)-DP, by --accountant or the "
         "form's own (gdp for tree and mf, pld for Poisson), printed as noise_multiplier with the figures at it");
  option("steps", "Tree form: phase lengths L1,L2,... (each >= 1); mf and Poisson forms: the number of steps T")
      ->required();
  option("delta", "delta in (0,1)")->required();
  option("sampling_rate", "Poisson DP-SGD sampling rate q in (0,1] (selects the Poisson form)");
  option("mechanism", "Single-pass form (default tree): " + forms + " (docs/matrix-factorization.md)");
  option("period",
         "mf form: every record in the releases i, i + P, i + 2P, ... (spider-mf-adaptive --epochs E: "
         "P = steps_per_epoch); 0 = one release per record (the default)");
  option("accountant", "One of " + accountants +
                           ": that accountant's figures, and its eps as \"epsilon\" (default: every accountant "
                           "that applies, without \"epsilon\")");
  option("adjacency",
         "zero-out (= add-remove with n public) or replace-one. Poisson form: z = sigma / C, add-remove by "
         "default; replace-one by PLD only. Single-pass forms: z = sigma / (2C / b), the replace-one "
         "bound, replace-one by default; zero-out halves every release's sensitivity (mu / 2)");
  option("prior_mu",
         "Poisson form, PLD: a Gaussian release of this mu-GDP made first on the same records (a run's "
         "private scale estimate: its report's scaling.estimate.mu where composition is pld), composed in");
  option("epsilon", "Also print delta at this eps >= 0 (delta_pld, delta_gdp)");
  option("discretization", "PLD value discretization interval, > 0 (default 1e-4)");
  cmd->callback([values] { std::cout << privacy_figures(*values, FrontEnd::kCli).dump(2) << "\n"; });
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
