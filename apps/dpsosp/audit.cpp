// `dpsosp audit`: the empirical privacy audit of one algorithm (docs/privacy.md).
#include <iostream>
#include <limits>

#include "cli.hpp"
#include "dpsosp/audit.hpp"
#include "dpsosp/report.hpp"

namespace dpsosp::cli {

void setup_audit(CLI::App& app) {
  struct Args {
    std::string algo = "spider-tree-adaptive", epsilon = "1", delta = "1e-5", runs = "2000", batch = "16", steps = "0",
                dim = "1", phase = "1", canary_norm = "10", confidence = "0.95", seed = "1", threads = "0",
                tamper = "none", canary = "linear", epochs = "0", noise = "float", canaries = "0", test_level = "0.01",
                sampling, bands, out;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "audit", "Empirical privacy audit: a Clopper-Pearson lower bound on epsilon from runs on neighbouring datasets");
  cmd->add_option(
         "--algo", args->algo,
         "Private algorithm: spider-tree-adaptive, spider-gauss-fixed, spider-tree-periodic, dpsgd, spider-mf-adaptive")
      ->capture_default_str();
  cmd->add_option("--epsilon", args->epsilon, "Target epsilon of the audited runs (> 0)")->capture_default_str();
  cmd->add_option("--delta", args->delta, "Target delta in (0,1)")->capture_default_str();
  cmd->add_option("--runs", args->runs, "Runs on each dataset (half choose the test, half measure it)")
      ->capture_default_str();
  cmd->add_option("--batch", args->batch, "Records per batch (the O1 batch)")->capture_default_str();
  cmd->add_option("--canary", args->canary,
                  "Canary and loss: linear (in the first O1 batch), quadratic-o2 (its gradient difference saturates "
                  "the O2 clip), extreme (D: a record whose gradient overflows; D': a clipped canary)")
      ->capture_default_str();
  cmd->add_option("--steps", args->steps,
                  "Optimizer steps, n = batch * steps records (0 = default: 1; quadratic-o2: 2; with --epochs: steps "
                  "per epoch, sampling rate 1/steps, default 10)")
      ->capture_default_str();
  cmd->add_option("--epochs", args->epochs,
                  "dpsgd: > 0 audits Poisson sampling over this many epochs (zero-out neighbours); "
                  "spider-mf-adaptive: passes as --sampling says")
      ->capture_default_str();
  cmd->add_option("--sampling", args->sampling,
                  "spider-mf-adaptive with --epochs: poisson (cyclic Poisson sampling, banded factorization, zero-out "
                  "neighbours; the default beyond one pass) or order (passes over the sample order, replace-one)");
  cmd->add_option("--bands", args->bands, "spider-mf-adaptive with --sampling poisson: the bands (default automatic)");
  cmd->add_option("--dim", args->dim, "Dimension d")->capture_default_str();
  cmd->add_option("--phase-length", args->phase, "spider-tree-periodic: steps per tree phase (1 O1 + q-1 O2)")
      ->capture_default_str();
  cmd->add_option("--canary-norm", args->canary_norm, "Canary gradient norm in units of the clip G (>= 1)")
      ->capture_default_str();
  cmd->add_option("--confidence", args->confidence, "Confidence of the epsilon lower bound, in (0,1)")
      ->capture_default_str();
  cmd->add_option("--test-level", args->test_level,
                  "False-alarm rate of the mu test (GDP paths) or the trade-off test (Poisson paths), in (0,1); "
                  "violation's is at most (1 - confidence) + this")
      ->capture_default_str();
  cmd->add_option("--canaries", args->canaries,
                  "Poisson paths: canaries per run, one per coordinate (0 = default: 64; elsewhere 1)")
      ->capture_default_str();
  cmd->add_option("--noise", args->noise, "float or secure (grid plus discrete Gaussian noise, zCDP accounting)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Base seed; every run gets its own")->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads, 0 (all cores) to 1024; never changes results")
      ->capture_default_str();
  cmd->add_option("--tamper", args->tamper,
                  "Break the mechanism on purpose: none, noise-div-10, clip-off, published-key, "
                  "unclipped-o2 (quadratic-o2, spider-tree-adaptive or spider-mf-adaptive), extreme-fails (extreme), "
                  "sensitivity-half (clip 2G, noise for G), noise-half, rate-half (Poisson: noise and claim for half "
                  "the rate), column-norm-half (spider-mf-adaptive), depth-understated (spider-tree-periodic, "
                  "--phase-length >= 2: node noise for depth 1)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "Write the JSON here (default: stdout)");
  cmd->callback([args, cmd] {
    audit::AuditOptions o;
    o.algorithm = parse_algorithm(args->algo);
    if (!is_private_algorithm(o.algorithm))
      throw Error("--algo " + args->algo + ": not a private algorithm, nothing to audit");
    o.privacy.epsilon = parse_real(args->epsilon, "--epsilon", Range::kPositive);
    o.privacy.delta = parse_real(args->delta, "--delta", Range::kOpenUnit);
    o.runs = parse_count(args->runs, "--runs", 4, 100000000);
    o.batch = parse_count(args->batch, "--batch", 1, 1000000);
    o.canary = audit::parse_canary(args->canary);
    o.steps = parse_count(args->steps, "--steps", 0, 1000000);
    o.epochs = parse_real(args->epochs, "--epochs", Range::kNonNegative);
    if (cmd->count("--sampling")) o.sampling = parse_sampling(args->sampling);
    if (cmd->count("--bands")) o.bands = parse_count(args->bands, "--bands", 1, 1u << 20);
    o.dim = parse_count(args->dim, "--dim", 1, 1000000);
    o.phase_length = parse_count(args->phase, "--phase-length", 1, 1000000);
    o.canary_norm = parse_real(args->canary_norm, "--canary-norm", Range::kPositive);
    if (o.canary_norm < 1) throw Error("--canary-norm: expected a number >= 1, got " + quote_token(args->canary_norm));
    o.confidence = parse_real(args->confidence, "--confidence", Range::kOpenUnit);
    o.seed = parse_count(args->seed, "--seed", 0, std::numeric_limits<std::uint64_t>::max());
    o.threads = static_cast<int>(parse_count(args->threads, "--threads", 0, kMaxThreads));
    o.tampering = audit::parse_tampering(args->tamper);
    o.test_level = parse_real(args->test_level, "--test-level", Range::kOpenUnit);
    o.canaries = parse_count(args->canaries, "--canaries", 0, 4096);
    if (args->noise != "float" && args->noise != "secure")
      throw Error("--noise: expected float or secure, got " + quote_token(args->noise));
    if (args->noise == "secure") o.privacy.noise = NoiseMode::kSecure;
    o.Validate();
    const bool to_file = cmd->count("--out") > 0;
    if (to_file) check_writable(args->out);
    const audit::AuditResult r = audit::run_audit(o);
    const nlohmann::json j = audit_report(o, r);
    write_text(to_file ? args->out : "-", j.dump(2) + "\n");
  });
}

}  // namespace dpsosp::cli
