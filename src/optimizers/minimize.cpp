// The one entry point: builds each algorithm's configuration and mechanism,
// runs it, and states the privacy guarantee fixed before the run.
#include "dpsosp/optimizer.hpp"

#include <omp.h>

#include <chrono>
#include <cmath>
#include <sstream>

#include "optimizers/baselines.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/privacy.hpp"
#include "optimizers/spider_core.hpp"

namespace dpsosp {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

struct AlgorithmName {
  Algorithm algorithm;
  const char* name;
};
constexpr AlgorithmName kAlgorithms[] = {
    {Algorithm::kSpiderTreeAdaptive, "spider-tree-adaptive"},
    {Algorithm::kSpiderGaussFixed, "spider-gauss-fixed"},
    {Algorithm::kSpiderTreePeriodic, "spider-tree-periodic"},
    {Algorithm::kDpsgd, "dpsgd"},
    {Algorithm::kSpider, "spider"},
    {Algorithm::kSgd, "sgd"},
};
}  // namespace

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& a : kAlgorithms) names.emplace_back(a.name);
  return names;
}

Algorithm parse_algorithm(const std::string& name) {
  for (const auto& a : kAlgorithms)
    if (name == a.name) return a.algorithm;
  std::string list;
  for (const auto& a : kAlgorithms) list += std::string(list.empty() ? "" : ", ") + a.name;
  throw Error("unknown algorithm '" + name + "', expected one of: " + list);
}

std::string algorithm_name(Algorithm a) {
  for (const auto& entry : kAlgorithms)
    if (entry.algorithm == a) return entry.name;
  return "unknown";
}

bool is_private_algorithm(Algorithm a) { return a != Algorithm::kSpider && a != Algorithm::kSgd; }

void RunOptions::Validate() const {
  constants.Validate();
  if (is_private_algorithm(algorithm)) privacy.Validate();
  if (!(alpha_scale > 0.0) || !std::isfinite(alpha_scale)) {
    std::ostringstream os;
    os << "RunOptions: alpha_scale must be positive and finite, got " << alpha_scale;
    throw Error(os.str());
  }
  if (threads < 0) throw Error("RunOptions: threads must be >= 0 (0 = all cores), got " + std::to_string(threads));
  if (!(epochs >= 0.0) || !std::isfinite(epochs)) throw Error("RunOptions: epochs must be >= 0");
  if (!(learning_rate >= 0.0) || !std::isfinite(learning_rate))
    throw Error("RunOptions: learning_rate must be >= 0 (0 = 1/M)");
  const bool needs_finite_eps = algorithm == Algorithm::kSpiderGaussFixed ||
                                algorithm == Algorithm::kSpiderTreePeriodic || algorithm == Algorithm::kDpsgd;
  if (needs_finite_eps && !privacy.is_private())
    throw Error("RunOptions: " + algorithm_name(algorithm) +
                " needs a finite epsilon; for a non-private run use --algo spider or sgd");
  if (epochs > 0 && algorithm != Algorithm::kDpsgd)
    throw Error("RunOptions: epochs > 0 (multi-epoch Poisson sampling) applies only to dpsgd, not " +
                algorithm_name(algorithm));
}

Summary minimize(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options) {
  options.Validate();
  model.validate(data);
  if (static_cast<Index>(x0.size()) != model.dim()) {
    throw Error("minimize: x0 has " + std::to_string(x0.size()) + " entries, the model " + model.name() +
                " has dimension " + std::to_string(model.dim()));
  }
  if (!x0.allFinite()) throw Error("minimize: x0 has a non-finite entry");
  if (data.rows() == 0) throw Error("minimize: the dataset has no records");
  // Not numbers are refused before any noise is drawn (SPEC section 8); every
  // finite record, however extreme, runs to the end.
  check_finite(data, "minimize");

  const int previous_threads = omp_get_max_threads();
  if (options.threads > 0) omp_set_num_threads(options.threads);
  struct RestoreThreads {
    int n;
    ~RestoreThreads() { omp_set_num_threads(n); }
  } restore{previous_threads};

  Summary summary;
  summary.algorithm = algorithm_name(options.algorithm);
  summary.seed = options.seed ? *options.seed : secure_random_seed();
  summary.noise_key_source = options.noise_key ? "supplied" : "generated";
  // The key lives in this frame (and the generators) for the run, and nowhere else.
  const NoiseKey key = options.noise_key ? *options.noise_key : NoiseKey::generate();
  summary.x = x0;
  const auto start = std::chrono::steady_clock::now();
  detail::run_algorithm(model, data, options, key, summary);
  summary.diagnostics.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.interrupted = summary.termination == "interrupted";
  return summary;
}

}  // namespace dpsosp
