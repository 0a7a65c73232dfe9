// The subcommands certify, privacy and keygen (run is in run.cpp, demo in
// demo.cpp, audit in audit.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  cmd->add_option("--point", args->point, "A result JSON from `dpsosp run` (its \"x\"), or a file with one CSV line")->required();
  cmd->add_option("--rho", args->rho, "Hessian-Lipschitz constant > 0 for the gap (default: the result's, else 1)");
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->callback([args, cmd] {
    const bool rho_given = cmd->count("--rho") > 0;
    double rho = rho_given ? parse_real(args->rho, "--rho", Range::kPositive) : 0.0;
    if (args->point.empty()) throw Error("--point: empty file name");
    // Read the point before the data: a bad point file fails at once.
    const PointFile point = read_point_file(args->point, "--point " + args->point);
    LoadedProblem p = load_problem(args->source);
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
    nlohmann::json j = certificate_json(c);
    j["rho"] = rho;
    j["source"] = source;
    std::cout << j.dump(2) << "\n";
  });
}

void setup_privacy(CLI::App& app) {
  struct Args {
    std::string z, steps, delta, q;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("privacy", "Privacy figures of the tree mechanism or of Poisson DP-SGD");
  cmd->add_option("--noise-multiplier", args->z, "z = sigma / sensitivity, > 0")->required();
  cmd->add_option("--steps", args->steps, "Tree form: phase lengths L1,L2,... (each >= 1); Poisson form: number of steps T")->required();
  cmd->add_option("--delta", args->delta, "delta in (0,1)")->required();
  cmd->add_option("--sampling-rate", args->q, "Poisson DP-SGD sampling rate q in (0,1] (selects the Poisson form)");
  cmd->callback([args, cmd] {
    const double z = parse_real(args->z, "--noise-multiplier", Range::kPositive);
    const double delta = parse_real(args->delta, "--delta", Range::kOpenUnit);
    std::vector<std::uint64_t> steps;
    const std::string& text = args->steps;
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
    nlohmann::json j;
    if (cmd->count("--sampling-rate") > 0) {
      const double q = parse_real(args->q, "--sampling-rate", Range::kHalfOpenUnit);
      if (steps.size() != 1) throw Error("--steps: the Poisson form takes one step count T, got " + std::to_string(steps.size()));
      j["epsilon_rdp"] = number(privacy::dpsgd_poisson_epsilon(q, z, steps[0], delta));
      j["form"] = "poisson-subsampled-gaussian";
      j["adjacency"] = "add/remove-one";
    } else {
      const privacy::TreeAccount a = privacy::account_tree(z, steps, delta);
      j["epsilon_gdp"] = number(a.epsilon_gdp);
      j["epsilon_rdp"] = number(a.epsilon_rdp);
      j["mu"] = number(a.mu);
      j["rho"] = number(a.rho);
      j["depth"] = a.depth;
      j["form"] = "tree";
      j["adjacency"] = "replace-one";
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
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    if (::close(fd) != 0 || !written) {
      ::unlink(args->out.c_str());
      throw Error("--out " + args->out + ": writing the key failed: " + std::strerror(err));
    }
  });
}

}  // namespace dpsosp::cli
