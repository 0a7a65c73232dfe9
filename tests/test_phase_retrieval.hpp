// Tests: the phase-retrieval problem of the optimizer tests (d = 8, a known
// population, a strict saddle at the start) with its model and the
// population SOSP gap at rho = 6.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "dpsosp/dpsosp.hpp"

namespace dpsosp::testing {

struct PhaseRetrieval {
  explicit PhaseRetrieval(Index n, std::uint64_t seed = 1)
      : problem(make_synthetic("phase-retrieval:n=" + std::to_string(n) + ",d=8,seed=" + std::to_string(seed))),
        model(make_model(problem.model, problem.data.cols())) {}
  SyntheticProblem problem;
  std::unique_ptr<Model> model;
  double gap(const Vec& x) const { return certify_population(*problem.population, x, 6.0).sosp_gap; }
};

}  // namespace dpsosp::testing
