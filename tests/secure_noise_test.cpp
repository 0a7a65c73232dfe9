// The secure noise mode (mechanism.hpp, src/mechanisms/secure.cpp): every
// release lies on its power-of-two grid, the noise is the discrete Gaussian of
// the key's stream, the guarantee (zCDP) is at most the target and costs the
// few percent of noise the docs state, and whole runs stay reproducible,
// thread-count free and finite on extreme records.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

PrivacyTarget secure_target(double epsilon) {
  PrivacyTarget t{epsilon, 1e-6};
  t.noise = NoiseMode::kSecure;
  return t;
}

bool on_grid(const Vec& v, double grid) {
  for (Eigen::Index j = 0; j < v.size(); ++j) {
    const double k = v[j] / grid;
    if (k != std::round(k) || std::abs(k) >= 9007199254740992.0) return false;
  }
  return true;
}

TEST(SecureNoise, GridIsAPowerOfTwoAndTheRoundingIsInTheSensitivity) {
  const DiscreteNoise n = discrete_noise(0.02, 100, 3.0);
  EXPECT_EQ(n.grid, std::exp2(std::round(std::log2(n.grid))));
  EXPECT_LE(n.grid * 10 * 1024, 0.02);  // 1/1024 of the sensitivity over sqrt(d)
  EXPECT_GT(n.grid * 10 * 2048, 0.02);
  EXPECT_DOUBLE_EQ(n.integer_sensitivity, 0.02 / n.grid + 10);
  EXPECT_EQ(n.scale, static_cast<std::uint64_t>(std::ceil(3.0 * n.integer_sensitivity)));
  // A scale past 2^27 grid units takes a coarser grid; past 2^28 is refused.
  const DiscreteNoise coarse = discrete_noise(1.0, 10000, 2000.0);
  EXPECT_LE(coarse.scale, exact::kMaxDiscreteSigma);
  EXPECT_THROW(discrete_noise(1.0, 100000000, 1e6), Error);
  EXPECT_THROW(discrete_noise(0.0, 10, 1.0), Error);
}

// Exact input 0: the tree's releases are grid * (the discrete Gaussian node
// noises of the dyadic decomposition of t), node k drawn as release k of the
// key's kDiscreteNoise stream.
TEST(SecureNoise, TreeReleasesTheDyadicSumsOfItsNodes) {
  const Index d = 5;
  const PrivacyTarget target = secure_target(2.0);
  const auto tree = make_tree_mechanism(d, testing::test_noise_key(), 0.1, 7, target);
  const PrivacyRecord r = tree->account();
  const DiscreteNoise n = discrete_noise(0.1, d, std::sqrt(3 / (2 * privacy::zcdp_rho(2.0, 1e-6))));
  EXPECT_EQ(r.grid, n.grid);
  EXPECT_EQ(r.noise, NoiseMode::kSecure);
  EXPECT_EQ(r.accounting(), "zcdp-tree-discrete");
  std::vector<Vec> node(7, Vec(d));
  for (std::uint32_t k = 0; k < 7; ++k)
    fill_discrete_gaussian(testing::test_noise_key(), StreamPurpose::kDiscreteNoise, k, n.scale, node[k].data(), d, 1);
  // t = 1..7: nodes {0}, {1}, {1,2}, {3}, {3,4}, {3,5}, {3,5,6}.
  const std::vector<std::vector<int>> decomposition = {{0}, {1}, {1, 2}, {3}, {3, 4}, {3, 5}, {3, 5, 6}};
  Vec released;
  for (int t = 0; t < 7; ++t) {
    tree->release(Vec::Zero(d), t == 0, 0.1, released);
    Vec expected = Vec::Zero(d);
    for (int k : decomposition[t]) expected += node[k];
    EXPECT_EQ(released, n.grid * expected) << "t = " << t + 1;
  }
  EXPECT_THROW(tree->release(Vec::Zero(d), false, 0.1, released), Error);  // an 8th leaf
  EXPECT_THROW(tree->release(Vec::Zero(d), true, 0.2, released), Error);   // above the bound
}

// Whatever the exact values (here a prefix that grows by non-grid steps),
// every release is a grid multiple, and it differs from the all-zero run by
// the rounded prefix to within the nodes' rounding (half a grid each).
TEST(SecureNoise, EveryTreeReleaseLiesOnTheGrid) {
  const Index d = 40;
  const auto a = make_tree_mechanism(d, testing::test_noise_key(), 0.3, 15, secure_target(1.0));
  const auto zero = make_tree_mechanism(d, testing::test_noise_key(), 0.3, 15, secure_target(1.0));
  const double grid = a->account().grid;
  Vec exact = Vec::Zero(d), released, reference;
  for (int t = 0; t < 40; ++t) {
    exact += Vec::LinSpaced(d, -0.1, 0.1) * (1 + 1e-3 * t) + Vec::Constant(d, 1e-7);
    const bool restart = t % 15 == 0;
    if (restart) exact = Vec::LinSpaced(d, 0.5, 0.7);
    a->release(exact, restart, 0.3, released);
    zero->release(Vec::Zero(d), restart, 0.3, reference);
    ASSERT_TRUE(on_grid(released, grid)) << "t = " << t;
    const int nodes = __builtin_popcount(t % 15 + 1);
    EXPECT_LE((released - reference - exact).cwiseAbs().maxCoeff(), nodes * grid / 2 * (1 + 1e-9)) << "t = " << t;
  }
}

TEST(SecureNoise, TheGuaranteeIsAtMostTheTargetAndCostsAFewPercentOfNoise) {
  for (const double eps : {0.5, 1.0, 3.0, 8.0}) {
    const PrivacyTarget fl{eps, 1e-6};
    const auto secure = make_tree_mechanism(100, testing::test_noise_key(), 0.01, 63, secure_target(eps));
    const auto flt = make_tree_mechanism(100, testing::test_noise_key(), 0.01, 63, fl);
    const PrivacyRecord s = secure->account(), f = flt->account();
    EXPECT_LE(s.epsilon, eps);
    EXPECT_GE(s.epsilon, eps * 0.995);  // the scale's ceiling gives away little
    EXPECT_EQ(s.epsilon, privacy::zcdp_to_epsilon(s.zcdp_rho, 1e-6));
    EXPECT_NEAR(s.epsilon, privacy::account_tree(s.noise_multiplier, {63}, 1e-6).epsilon_rdp, 1e-12);
    const double cost = s.sigma / f.sigma;
    EXPECT_GT(cost, 1.03) << eps;
    EXPECT_LT(cost, 1.10) << eps;
    EXPECT_DOUBLE_EQ(s.sigma, tree_noise_sigma(0.01, 63, secure_target(eps), 100));
  }
  const auto g = make_gaussian_mechanism(10, testing::test_noise_key(), secure_target(1.0), 0.5);
  const PrivacyRecord r = g->account();
  EXPECT_EQ(r.accounting(), "zcdp-gaussian-discrete");
  EXPECT_LE(r.epsilon, 1.0);
  EXPECT_NEAR(r.epsilon, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.noise_multiplier, gaussian_noise_multiplier(secure_target(1.0)));
}

// The Gaussian mechanism: each release's increment on its own grid, from the
// release's sensitivity; a release of sensitivity 0 adds nothing.
TEST(SecureNoise, GaussianIncrementsLieOnTheirGrids) {
  const Index d = 30;
  const PrivacyTarget target = secure_target(1.0);
  const auto g = make_gaussian_mechanism(d, testing::test_noise_key(), target, 0.2);
  const double z = gaussian_noise_multiplier(target);
  Vec exact = Vec::LinSpaced(d, -1, 1), released, before;
  g->release(exact, true, 0.2, released);
  EXPECT_TRUE(on_grid(released, discrete_noise(0.2, d, z).grid));
  for (const double s : {0.003, 0.05, 1.7}) {
    before = released;
    exact += Vec::Constant(d, s / 7);
    g->release(exact, false, s, released);
    const double grid = discrete_noise(s, d, z).grid;
    EXPECT_TRUE(on_grid(released - before, grid)) << s;  // both sums exact: the grids are powers of two
  }
  before = released;
  g->release(exact, false, 0.0, released);
  EXPECT_EQ(released, before);
  g->release(exact, true, 0.2, released);  // a new phase: the accumulated values start again
  EXPECT_TRUE(on_grid(released, discrete_noise(0.2, d, z).grid));
}

// Poisson DP-SGD's RDP is for continuous noise: refused, as is secure noise in
// a run without noise.
TEST(SecureNoise, RefusedWhereItsAccountingDoesNotApply) {
  EXPECT_THROW(make_poisson_gaussian_mechanism(5, testing::test_noise_key(), 1.0, 0.1, 10, secure_target(1.0)), Error);
  RunOptions o;
  o.algorithm = parse_algorithm("dpsgd");
  o.privacy = secure_target(1.0);
  o.epochs = 2;
  try {
    o.Validate();
    FAIL() << "secure Poisson dpsgd accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("RunOptions: privacy.noise = secure: Poisson sampling (dpsgd with", 0), 0u)
        << e.what();
  }
  o.epochs.reset();
  EXPECT_NO_THROW(o.Validate());
  // spider-mf-adaptive's passes: Poisson by default beyond one (refused), over the order (accepted).
  o.algorithm = parse_algorithm("spider-mf-adaptive");
  o.epochs = 3;
  EXPECT_THROW(o.Validate(), Error);
  o.sampling = Sampling::kOrder;
  EXPECT_NO_THROW(o.Validate());
  o.sampling.reset();
  o.epochs.reset();
  o.algorithm = parse_algorithm("spider");
  o.privacy = secure_target(std::numeric_limits<double>::infinity());
  EXPECT_THROW(o.Validate(), Error);
}

// Whole runs: every private algorithm that has the mode, on data with one
// extreme record, ends with a finite x, the same bits on 1 and 2 threads,
// epsilon at most the target, and differs from the float run.
TEST(SecureNoise, PrivateRunsAreFiniteReproducibleAndWithinTheTarget) {
  GaussianStream g(31, StreamPurpose::kTest);
  const Index n = 4000, p = 3;
  RowMatrix X(n, p);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < p; ++j) X(i, j) = g.next();
    y[static_cast<Eigen::Index>(i)] = X(i, 0) * X(i, 0) + 0.1 * g.next();
  }
  X.row(2000).setConstant(1e120);
  const Dataset data(std::move(X), std::move(y));
  const auto model = make_model("phase-retrieval", p);
  for (const char* algo :
       {"spider-tree-adaptive", "spider-tree-periodic", "spider-gauss-fixed", "dpsgd", "spider-mf-adaptive"}) {
    SCOPED_TRACE(algo);
    RunOptions o;
    o.algorithm = parse_algorithm(algo);
    o.privacy = secure_target(2.0);
    if (algorithm_info(o.algorithm).knobs & kKnobAlphaScale) o.alpha_scale = 3.0;
    if (std::string(algo) == "dpsgd") o.batch_size = 50;
    o.seed = 4;
    o.noise_key = testing::test_noise_key();
    o.threads = 1;
    const Summary one = minimize(*model, data, Vec::Constant(p, 0.3), o);
    o.threads = 2;
    const Summary two = minimize(*model, data, Vec::Constant(p, 0.3), o);
    EXPECT_TRUE(one.x.allFinite());
    EXPECT_EQ(one.x, two.x);
    EXPECT_EQ(one.privacy.noise, NoiseMode::kSecure);
    EXPECT_LE(one.privacy.epsilon, 2.0);
    EXPECT_GE(one.privacy.epsilon, 1.99);
    o.privacy->noise = NoiseMode::kFloat;
    const Summary flt = minimize(*model, data, Vec::Constant(p, 0.3), o);
    EXPECT_NE(one.x, flt.x);
    EXPECT_GT(one.privacy.sigma, flt.privacy.sigma);
  }
}

}  // namespace
}  // namespace dpsosp
