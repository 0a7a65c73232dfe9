// Tests: the phase-retrieval problem of the optimizer tests (d = 8, a known
// population, a strict saddle at the start) with its model and the
// population SOSP gap at rho = 6.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"

namespace dpsosp::testing {

struct PhaseRetrieval {
  explicit PhaseRetrieval(Index n, std::uint64_t seed = 1)
      : problem(make_synthetic("phase-retrieval:n=" + std::to_string(n) + ",d=8,seed=" + std::to_string(seed))),
        model(make_model(problem.model, problem.data.cols())) {}
  SyntheticProblem problem;
  std::unique_ptr<Model> model;
  double gap(const Vec& x) const { return certify_population(*problem.population, x, 6.0).sosp_gap; }
};

// spider-mf-adaptive at (eps, 1e-6) with this problem's constants (G 6, M 20, rho 6, B 1) and the tests' key.
inline RunOptions mf_options(double eps, std::uint64_t seed) {
  RunOptions o;
  o.algorithm = parse_algorithm("spider-mf-adaptive");
  o.privacy = {eps, 1e-6};
  o.constants = {6.0, 20.0, 6.0, 1.0};
  o.seed = seed;
  o.noise_key = test_noise_key();
  return o;
}

}  // namespace dpsosp::testing
