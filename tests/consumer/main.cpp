// Uses the installed library: accountant figure and a tiny private run.
#include <cmath>
#include <cstdio>

#include "dpsosp/dpsosp.hpp"

int main() {
  const auto a = dpsosp::privacy::account_tree(5.0, {1000, 500, 256}, 1e-6);
  if (std::abs(a.epsilon_gdp - 2.92160) > 1e-4) {
    std::printf("unexpected epsilon %.6f\n", a.epsilon_gdp);
    return 1;
  }
  const auto problem = dpsosp::make_synthetic("phase-retrieval:n=20000,d=4,seed=3");
  const auto model = dpsosp::make_model(problem.model, problem.data.cols());
  dpsosp::RunOptions o;
  o.privacy = {4.0, 1e-6};
  o.constants = {6.0, 20.0, 6.0, 1.0};
  o.seed = 1;
  o.alpha_scale = 2.0;
  const auto s = dpsosp::minimize(*model, problem.data, problem.saddle, o);
  std::printf("consumer: eps %.4f <= 4, %zu steps\n", s.privacy.epsilon, static_cast<size_t>(s.steps));
  return s.privacy.epsilon <= 4.0 + 1e-9 && s.steps > 0 ? 0 : 1;
}
