// `dpsosp demo`: the first thing a new user sees. A private run of the
// default algorithm (spider-mf-adaptive) on phase retrieval with a known
// population, started at a strict saddle, with the certificate before and
// after, and the paper's spider-tree-adaptive on the same data for comparison.
#include <cmath>
#include <cstdio>
#include <limits>

#include "cli.hpp"

namespace dpsosp::cli {

void setup_demo(CLI::App& app) {
  struct Args {
    std::string seed = "1";
    std::string noise_key_file;
    std::string out;
    std::string threads = "0";
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("demo", "A private run on a built-in problem, no files needed");
  cmd->add_option("--seed", args->seed, "Seed of the data and of the run's public randomness (order, perturbations)")
      ->capture_default_str();
  cmd->add_option("--noise-key-file", args->noise_key_file,
                  "Secret noise key (from dpsosp keygen) for a reproducible demo (default: a fresh key from the OS)");
  cmd->add_option("--out", args->out, "Also write the full JSON report here");
  cmd->add_option("--threads", args->threads, "Threads, 0 (all cores) to 1024")->capture_default_str();
  cmd->callback([args, cmd] {
    const std::uint64_t seed = parse_count(args->seed, "--seed", 0, std::numeric_limits<std::uint64_t>::max());
    const int threads = static_cast<int>(parse_count(args->threads, "--threads", 0, kMaxThreads));
    const bool write_out = cmd->count("--out") > 0;
    if (write_out) check_writable(args->out);
    const std::optional<NoiseKey> key = read_noise_key_option(args->noise_key_file, cmd->count("--noise-key-file") > 0);
    const std::string spec = "phase-retrieval:n=400000,d=8,seed=" + std::to_string(seed);
    // Generated in the run's sample order (the same records, read front to back).
    const SyntheticProblem problem = make_synthetic(spec, seed);
    const auto model = make_model(problem.model, problem.data.cols());
    RunOptions o;
    o.privacy = {2.0, 1e-6};
    o.constants = {6.0, 20.0, 6.0, 1.0};  // G, M, rho, B
    o.seed = seed;
    o.noise_key = key;
    o.threads = threads;
    o.Validate();
    const Vec& x0 = problem.saddle;
    const Certificate before = certify_population(*problem.population, x0, o.constants.rho);
    std::printf("dpsosp demo: phase retrieval, f = ((a.x)^2 - y)^2/4, a ~ N(0, I_8), ||x*|| = 1\n");
    std::printf("  data      %zu synthetic records (%s)\n", static_cast<size_t>(problem.data.rows()), spec.c_str());
    std::printf("  start     a strict saddle: ||grad F|| = %.3g, lambda_min = %.3f, SOSP gap = %.3f\n",
                before.grad_norm, before.lambda_min, before.sosp_gap);
    const Summary s = minimize(*model, problem.data, x0, o);
    const Certificate after = certify_population(*problem.population, s.x, o.constants.rho);
    std::printf(
        "  run       %s (the default algorithm; one pass over the sample order, as the paper), %zu steps, %zu O1 "
        "calls, %zu saddle perturbations, %zu of %zu records, "
        "%.2f s; the result is the mean of the iterates over the last quarter of the records\n",
        s.algorithm.c_str(), static_cast<size_t>(s.steps), static_cast<size_t>(s.o1_calls),
        static_cast<size_t>(s.perturbations), static_cast<size_t>(s.samples_used),
        static_cast<size_t>(problem.data.rows()), s.diagnostics.seconds);
    std::printf(
        "  privacy   (%.4g, %.0e)-DP, replace-one (zero-out: eps %.4g), fixed before the run: mu = %.4f GDP, "
        "one matrix factorization of the noise over %zu steps (column norm %.3f), noise sigma = %.4g\n",
        s.privacy.epsilon, s.privacy.delta, s.privacy.epsilon_zero_out, s.privacy.mu,
        static_cast<size_t>(s.privacy.horizon), s.privacy.column_norm, s.privacy.sigma);
    std::printf("  keys      seed %llu (public: sample order, perturbations); noise key %s\n",
                static_cast<unsigned long long>(s.seed),
                key ? "from --noise-key-file (secret)" : "fresh from the OS, kept nowhere (results vary run to run)");
    std::printf("  result    ||grad F|| = %.4f, lambda_min = %.3f, SOSP gap = %.4f (true population, rho = 6)\n",
                after.grad_norm, after.lambda_min, after.sosp_gap);
    std::printf("  distance  min(||x - x*||, ||x + x*||) = %.4f\n",
                std::min((s.x - problem.x_star).norm(), (s.x + problem.x_star).norm()));
    RunOptions paper = o;
    paper.algorithm = parse_algorithm("spider-tree-adaptive");
    const Summary t = minimize(*model, problem.data, x0, paper);
    const Certificate tree = certify_population(*problem.population, t.x, o.constants.rho);
    std::printf(
        "  compare   the paper's spider-tree-adaptive on the same data and target (tree noise, last "
        "iterate): SOSP gap = %.4f\n",
        tree.sosp_gap);
    if (write_out) {
      nlohmann::json j = release_report(s);
      j["certificate"] = certificate_report(after);  // of the known population: computed from x alone
      j["certificate_before"] = certificate_report(before);
      j["diagnostics"] = diagnostics_report(s, FrontEnd::kCli);
      write_text(args->out, j.dump(2) + "\n");
    }
  });
}

}  // namespace dpsosp::cli
