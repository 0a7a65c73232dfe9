// Shared by the scaling tests: a raw regression table and a private run.
#pragma once
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/scaling.hpp"
#include "test_keys.hpp"

namespace dpsosp::testing {

// Two features on different scales (about 50 +- 10 and 0 +- 0.01) and a target about 200 +- 30.
inline Dataset regression(Index n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> z(0, 1);
  RowMatrix X(n, 2);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    X(i, 0) = 50 + 10 * z(g);
    X(i, 1) = 0.01 * z(g);
    y[i] = 200 + 3 * (X(i, 0) - 50) + 1000 * X(i, 1) + 5 * z(g);
  }
  return Dataset(std::move(X), std::move(y));
}

// A private run at (epsilon, 1e-6) with G and M estimated, seed 7 and the tests' key.
inline RunOptions private_run(double epsilon) {
  RunOptions o;
  o.privacy = PrivacyTarget{epsilon, 1e-6};
  o.seed = 7;
  o.noise_key = testing::test_noise_key();
  o.estimate.G = o.estimate.M = true;
  return o;
}

// A model with an intercept, and the scaling that estimates every feature's box and the target's privately.
inline std::unique_ptr<Model> with_intercept(const std::string& name, Index features) {
  ModelOptions mo;
  mo.fit_intercept = true;
  return make_model(name, features, mo);
}
inline ScalingOptions estimate_every_box() {
  ScalingOptions so;
  so.target = true;
  so.estimate_features = so.estimate_target = true;
  return so;
}

// R^2 of the point x (in the user's units) on the records of test.
inline double r_squared(const Model& model, const Vec& x, const Dataset& test) {
  const Vec p = predict(model, x, test);
  const double mean = test.labels().mean();
  double res = 0, tot = 0;
  for (Index i = 0; i < test.rows(); ++i) {
    res += (p[i] - test.label(i)) * (p[i] - test.label(i));
    tot += (test.label(i) - mean) * (test.label(i) - mean);
  }
  return 1 - res / tot;
}

}  // namespace dpsosp::testing
