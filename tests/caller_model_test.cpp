// A model of the caller's (include/dpsosp/caller_model.hpp): logistic
// regression given as a callback runs as the built-in logistic model does,
// with the same guarantee; the library clips whatever the callback returns.
#include "dpsosp/caller_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

struct Logistic {
  RowMatrix X;
  Vec y;  // 0 / 1
};

Logistic table(Index n, Index p) {
  std::mt19937_64 g(3);
  std::normal_distribution<double> z(0, 1);
  Logistic t{RowMatrix(n, p), Vec(n)};
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < p; ++j) t.X(i, j) = z(g) / std::sqrt(static_cast<double>(p));
    t.y[i] = t.X(i, 0) + 0.3 * z(g) > 0 ? 1 : 0;
  }
  return t;
}

// f = log(1 + exp(-s z)), s = +-1: grad = -s sigmoid(-s z) a.
CallerGradients logistic_callback(const Logistic& t, int* calls = nullptr) {
  CallerGradients g;
  g.name = "my-logistic";
  g.dim = t.X.cols();
  g.gradients = [&t, calls](const Vec& x, const std::vector<std::int64_t>& ids, RowMatrix& out) {
    if (calls) ++*calls;
    out.resize(static_cast<Eigen::Index>(ids.size()), t.X.cols());
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const double s = t.y[ids[k]] > 0 ? 1.0 : -1.0;
      const double z = t.X.row(ids[k]).dot(x);
      out.row(static_cast<Eigen::Index>(k)) = (-s / (1 + std::exp(s * z))) * t.X.row(ids[k]);
    }
  };
  g.losses = [&t](const Vec& x, const std::vector<std::int64_t>& ids, Vec& out) {
    out.resize(static_cast<Eigen::Index>(ids.size()));
    for (std::size_t k = 0; k < ids.size(); ++k)
      out[static_cast<Eigen::Index>(k)] = std::log1p(std::exp(-(t.y[ids[k]] > 0 ? 1 : -1) * t.X.row(ids[k]).dot(x)));
  };
  return g;
}

RunOptions options(Algorithm algo) {
  RunOptions o;
  o.algorithm = algo;
  o.privacy = PrivacyTarget{2.0, 1e-6};
  o.seed = 5;
  o.noise_key = testing::test_noise_key();
  o.constants.G = 1;
  o.constants.M = 2;
  o.threads = 1;
  return o;
}

TEST(CallerModel, RunsAsTheBuiltInModelWithTheSameGuarantee) {
  const Logistic t = table(4000, 5);
  const Dataset records(t.X, t.y);
  const auto builtin = make_model("logistic", 5);
  int calls = 0;
  const auto mine = make_caller_model(logistic_callback(t, &calls));
  const Dataset ids = caller_records(4000);
  for (Algorithm algo : {Algorithm::kDpsgd, Algorithm::kSpiderMfAdaptive}) {
    RunOptions o = options(algo);
    if (algo == Algorithm::kSpiderMfAdaptive) ASSERT_TRUE(choose_default_sampling(o, false));
    const Summary a = minimize(*builtin, records, Vec::Zero(5), o);
    const Summary b = minimize(*mine, ids, Vec::Zero(5), o);
    EXPECT_EQ(a.steps, b.steps);
    EXPECT_EQ(a.privacy.epsilon, b.privacy.epsilon);
    EXPECT_EQ(a.privacy.noise_multiplier, b.privacy.noise_multiplier);
    EXPECT_EQ(a.privacy.mechanism, b.privacy.mechanism);
    // The same gradients up to the order of a dot product's terms: the same point to rounding.
    EXPECT_LT((a.x - b.x).norm(), 1e-9 * (1 + a.x.norm())) << algorithm_name(algo);
  }
  EXPECT_GT(calls, 0);
  // The loss callback, and central differences for the Hessian-vector product.
  Vec v = Vec::Ones(5), hv(5), hv_builtin(5);
  const Vec x = Vec::Constant(5, 0.3);
  mine->hvp(x, ids, 7, v, hv);
  builtin->hvp(x, records, 7, v, hv_builtin);
  EXPECT_LT((hv - hv_builtin).norm(), 1e-6);
  EXPECT_NEAR(mine->loss(x, ids, 7), builtin->loss(x, records, 7), 1e-12);
}

// The caller's clipped sums ask for larger blocks (fewer callbacks) and are
// Model's reference form bit for bit: each row of batch_gradients clipped by
// clip_to_norm and added in order.
TEST(CallerModel, LargerBlocksKeepTheReferenceForm) {
  const Logistic t = table(3000, 40);
  int calls = 0;
  const auto m = make_caller_model(logistic_callback(t, &calls));
  const Dataset ids = caller_records(3000);
  IndexList idx;
  for (Index i = 0; i < 3000; i += 2) idx.push_back(i);
  const Vec x = Vec::LinSpaced(40, -3, 3), x_prev = Vec::LinSpaced(40, 2, -1);
  RowMatrix rows, prev;
  m->batch_gradients(x, ids, idx, rows);
  m->batch_gradients(x_prev, ids, idx, prev);
  Vec sum = Vec::Zero(40), diff = Vec::Zero(40), consistent = Vec::Zero(40);
  for (Eigen::Index r = 0; r < rows.rows(); ++r) {
    Vec g = rows.row(r).transpose(), d = g - prev.row(r).transpose(), p = prev.row(r).transpose(), c = g;
    clip_to_norm(g, 0.5);
    sum += g;
    clip_to_norm(d, 0.5);
    diff += d;
    clip_to_norm(c, 0.7);
    clip_to_norm(p, 0.7);
    Vec cd = c - p;
    clip_to_norm(cd, 0.5);
    consistent += cd;
  }
  calls = 0;
  EXPECT_EQ(m->clipped_gradient_sum(x, ids, idx, 0.5).sum, sum);
  EXPECT_LE(calls, 6);  // 1500 rows in blocks of at least 256
  EXPECT_EQ(m->clipped_difference_sum(x, x_prev, ids, idx, 0.5).sum, diff);
  EXPECT_EQ(m->clipped_consistent_difference_sum(x, x_prev, ids, idx, 0.7, 0.5).sum, consistent);
}

// Whatever the callback returns (huge rows, NaN), each row is clipped by the
// library's rule before it reaches a release: the guarantee does not depend on it.
TEST(CallerModel, TheLibraryClipsWhatTheCallbackReturns) {
  CallerGradients g;
  g.dim = 3;
  g.gradients = [](const Vec&, const std::vector<std::int64_t>& ids, RowMatrix& out) {
    out = RowMatrix::Constant(static_cast<Eigen::Index>(ids.size()), 3, 1e12);
    for (std::size_t k = 0; k < ids.size(); ++k)
      if (ids[k] % 2) out(static_cast<Eigen::Index>(k), 1) = std::numeric_limits<double>::quiet_NaN();
  };
  const auto m = make_caller_model(g);
  const Dataset ids = caller_records(10);
  IndexList all(10);
  for (Index i = 0; i < 10; ++i) all[i] = i;
  const ClippedSum s = m->clipped_gradient_sum(Vec::Zero(3), ids, all, 2.0);
  EXPECT_EQ(s.clipped, 10);
  EXPECT_EQ(s.nonfinite, 5);
  EXPECT_NEAR(s.sum.norm(), 5 * 2.0, 1e-9);  // five rows at the bound, five zeroed
  // Bad shapes and bad records are one clear error.
  CallerGradients wrong = g;
  wrong.gradients = [](const Vec&, const std::vector<std::int64_t>& ids, RowMatrix& out) {
    out = RowMatrix::Zero(static_cast<Eigen::Index>(ids.size()), 2);
  };
  EXPECT_THROW(make_caller_model(wrong)->clipped_gradient_sum(Vec::Zero(3), ids, all, 1.0), Error);
  EXPECT_THROW(make_caller_model(CallerGradients{}), Error);
  EXPECT_THROW(caller_records(0), Error);
  EXPECT_THROW(m->validate(Dataset(RowMatrix::Constant(2, 1, 0.5), Vec())), Error);
}

}  // namespace
}  // namespace dpsosp
