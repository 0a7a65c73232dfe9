// A model of your own in C++ (docs/torch.md): least squares whose per-example
// gradients this program computes; dpsosp clips them, adds its noise and
// accounts. Built and run by the consumer test (tests/consumer) against an
// installed dpsosp:
//
//   c++ -std=c++17 -O2 examples/caller_model.cpp $(pkg-config --cflags --libs dpsosp) -o caller_model
#include <cmath>
#include <cstdio>
#include <random>

#include "dpsosp/dpsosp.hpp"

int main() {
  // The records live here, not in the library: 20000 points on a plane, y = <w*, a> + noise.
  const dpsosp::Index n = 20000, d = 3;
  const dpsosp::Vec w_star = (dpsosp::Vec(3) << 1.0, -0.5, 0.25).finished();
  std::mt19937_64 g(7);
  std::normal_distribution<double> z(0, 1);
  dpsosp::RowMatrix A(n, d);
  dpsosp::Vec y(n);
  for (dpsosp::Index i = 0; i < n; ++i) {
    for (dpsosp::Index j = 0; j < d; ++j) A(i, j) = z(g);
    y[i] = A.row(i).dot(w_star) + 0.1 * z(g);
  }
  dpsosp::CallerGradients model;
  model.name = "least-squares";
  model.dim = d;
  // Row k: the gradient of (<a, x> - y)^2 / 2 for record ids[k], from that record alone.
  model.gradients = [&](const dpsosp::Vec& x, const std::vector<std::int64_t>& ids, dpsosp::RowMatrix& out) {
    out.resize(static_cast<Eigen::Index>(ids.size()), d);
    for (std::size_t k = 0; k < ids.size(); ++k)
      out.row(static_cast<Eigen::Index>(k)) = (A.row(ids[k]).dot(x) - y[ids[k]]) * A.row(ids[k]);
  };
  dpsosp::RunOptions o;
  o.privacy = dpsosp::PrivacyTarget{2.0, 1e-6};
  o.constants.G = 3;
  o.constants.M = 1;
  o.seed = 1;
  if (!dpsosp::choose_default_sampling(o, false)) return 1;  // the CLI's default run
  const auto m = dpsosp::make_caller_model(model);
  const dpsosp::Summary s = dpsosp::minimize(*m, dpsosp::caller_records(n), dpsosp::Vec::Zero(d), o);
  const double error = (s.x - w_star).norm();
  std::printf("caller model: %s, %.4g-DP at delta %g, %zu steps, |x - w*| = %.3f\n", s.algorithm.c_str(),
              s.privacy.epsilon, s.privacy.delta, static_cast<size_t>(s.steps), error);
  return s.privacy.epsilon <= 2.0 + 1e-9 && error < 0.5 ? 0 : 1;
}
