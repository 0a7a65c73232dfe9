// Synthetic problems: spec parsing, reproducible generation, and the closed-form
// populations (checked against finite differences, an independent Hessian
// formula, and a 10^6-record Monte Carlo average of the real models).
#include "dpsosp/synthetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "data/dataset_layout.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"

namespace dpsosp {
namespace {

using Layout = detail::DatasetLayout;

Vec random_vector(Index dim, std::uint32_t index, double scale = 1.0) {
  GaussianStream stream(2024, StreamPurpose::kTest, index);
  Vec v(static_cast<Eigen::Index>(dim));
  stream.fill(v, scale);
  return v;
}

/// The message of the Error that `make_synthetic(spec)` throws ("" if none).
std::string spec_error(const std::string& spec) {
  try {
    make_synthetic(spec);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

double smallest_eigenvalue_dense(const Eigen::MatrixXd& h) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(h, Eigen::EigenvaluesOnly).eigenvalues()[0];
}

// ---------------------------------------------------------------------------
// Parsing

TEST(SyntheticSpec, DefaultsFillEveryKey) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=50");
  EXPECT_EQ(p.name, "phase-retrieval");
  EXPECT_EQ(p.model, "phase-retrieval");
  const std::map<std::string, double> expected = {{"n", 50}, {"d", 10}, {"seed", 1}, {"noise", 0}, {"xnorm", 1}};
  EXPECT_EQ(p.params, expected);
  const SyntheticProblem q = make_synthetic("pca");
  const std::map<std::string, double> pca_expected = {{"n", 10000}, {"d", 10},  {"seed", 1},
                                                      {"top", 1},   {"gap", 2}, {"rank", 1}};
  EXPECT_EQ(q.params, pca_expected);
  EXPECT_EQ(q.data.rows(), 10000u);
  const SyntheticProblem g = make_synthetic("gaussian-mixture:mu=2.5,d=4,n=7,seed=9");
  const std::map<std::string, double> mix_expected = {{"n", 7}, {"d", 4}, {"seed", 9}, {"mu", 2.5}};
  EXPECT_EQ(g.params, mix_expected);
  EXPECT_EQ(make_synthetic("pca:n=1e3").data.rows(), 1000u);  // integral values in any notation
}

TEST(SyntheticSpec, UnknownProblemListsValidNames) {
  const std::string message = spec_error("phase_retrieval:n=10");
  EXPECT_NE(message.find("synthetic: unknown problem 'phase_retrieval'"), std::string::npos) << message;
  EXPECT_NE(message.find("phase-retrieval, pca, gaussian-mixture"), std::string::npos) << message;
  EXPECT_NE(spec_error("").find("unknown problem ''"), std::string::npos);
}

TEST(SyntheticSpec, UnknownKeyNamesItAndTheValidKeys) {
  const std::string message = spec_error("pca:n=10,mu=3");
  EXPECT_NE(message.find("unknown key 'mu' for pca"), std::string::npos) << message;
  EXPECT_NE(message.find("valid keys: n, d, seed, top, gap, rank"), std::string::npos) << message;
  EXPECT_NE(spec_error("gaussian-mixture:noise=1").find("valid keys: n, d, seed, mu"), std::string::npos);
}

TEST(SyntheticSpec, BadValuesNameKeyAndValue) {
  for (const char* bad :
       {"pca:n=abc", "pca:n=-5", "pca:n=0", "pca:n=2.5", "pca:n=", "pca:n=10x", "pca:n=inf", "pca:n=5000000000"}) {
    const std::string message = spec_error(bad);
    EXPECT_NE(message.find("synthetic: key 'n' must be a positive integer"), std::string::npos)
        << bad << " -> " << message;
    const std::string value = std::string(bad).substr(6);
    EXPECT_NE(message.find("got '" + value + "'"), std::string::npos) << message;
  }
  EXPECT_NE(spec_error("phase-retrieval:d=0").find("key 'd' must be a positive integer (at most 2^32 - 1), got '0'"),
            std::string::npos);
  EXPECT_NE(spec_error("phase-retrieval:noise=-1").find("key 'noise' must be a finite number >= 0, got '-1'"),
            std::string::npos);
  EXPECT_NE(spec_error("phase-retrieval:xnorm=0").find("key 'xnorm' must be a finite number > 0"), std::string::npos);
  EXPECT_NE(spec_error("pca:gap=1").find("key 'gap' must be a finite number > 1, got '1'"), std::string::npos);
  EXPECT_NE(spec_error("pca:top=nan").find("key 'top' must be a finite number > 0"), std::string::npos);
  EXPECT_NE(spec_error("pca:seed=-1").find("key 'seed' must be an integer in [0, 2^64)"), std::string::npos);
  EXPECT_NE(spec_error("pca:seed=1.5").find("key 'seed'"), std::string::npos);
  EXPECT_NE(spec_error("pca:seed=18446744073709551616").find("key 'seed'"), std::string::npos);
  EXPECT_EQ(spec_error("pca:n=20,seed=18446744073709551615"), "");
}

TEST(SyntheticSpec, DuplicateAndMalformedEntries) {
  EXPECT_NE(spec_error("pca:n=10,d=3,n=20").find("duplicate key 'n'"), std::string::npos);
  EXPECT_NE(spec_error("pca:n").find("expected key=value, got 'n'"), std::string::npos);
  EXPECT_NE(spec_error("pca:=5").find("expected key=value, got '=5'"), std::string::npos);
  EXPECT_NE(spec_error("pca:n=5,,d=3").find("expected key=value, got ''"), std::string::npos);
  EXPECT_NE(spec_error("pca:").find("empty key=value entry"), std::string::npos);
  EXPECT_NE(spec_error("pca:n=5,").find("empty key=value entry"), std::string::npos);
}

TEST(SyntheticSpec, ProblemConstraints) {
  EXPECT_NE(spec_error("pca:d=3,rank=3").find("pca needs rank < d"), std::string::npos);
  EXPECT_NE(spec_error("phase-retrieval:d=1").find("phase-retrieval needs d >= 2"), std::string::npos);
  EXPECT_THROW(phase_retrieval_population(Vec(), 0.0), Error);
  EXPECT_THROW(phase_retrieval_population(Vec::Ones(3), -1.0), Error);
  EXPECT_THROW(pca_population(Vec::Constant(3, -1.0), 1), Error);
  EXPECT_THROW(pca_population(Vec::Ones(3), 0), Error);
  const auto population = phase_retrieval_population(Vec::Ones(3));
  try {
    population->gradient(Vec::Ones(4));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x has 4 entries, expected 3"), std::string::npos) << e.what();
  }
}

// ---------------------------------------------------------------------------
// Generation

void expect_same_bits(const Dataset& a, const Dataset& b) {
  ASSERT_EQ(a.rows(), b.rows());
  ASSERT_EQ(a.cols(), b.cols());
  EXPECT_TRUE((a.dense().array() == b.dense().array()).all());
  EXPECT_TRUE((a.labels().array() == b.labels().array()).all());
}

TEST(SyntheticData, SameSpecSameBitsAndSeedChangesData) {
  for (const std::string name : {"phase-retrieval:noise=0.3", "pca:rank=2", "gaussian-mixture"}) {
    const std::string spec = name + (name.find(':') == std::string::npos ? ":" : ",") + "n=300,d=5";
    expect_same_bits(make_synthetic(spec).data, make_synthetic(spec).data);
    const Dataset other = make_synthetic(spec + ",seed=2").data;
    EXPECT_FALSE((make_synthetic(spec).data.dense().array() == other.dense().array()).any()) << spec;
    // Record i depends on (seed, i) only, not on n.
    const Dataset prefix = make_synthetic(name + (name.find(':') == std::string::npos ? ":" : ",") + "n=40,d=5").data;
    EXPECT_TRUE((make_synthetic(spec).data.dense().topRows(40).array() == prefix.dense().array()).all()) << spec;
  }
}

TEST(SyntheticData, PhaseRetrievalShapesAndLabels) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=200,d=6,xnorm=1.5");
  ASSERT_EQ(p.data.rows(), 200u);
  ASSERT_EQ(p.data.cols(), 6u);
  ASSERT_TRUE(p.data.has_labels());
  ASSERT_NE(p.population, nullptr);
  EXPECT_EQ(p.population->dim(), 6u);
  for (Index i = 0; i < p.data.rows(); ++i) {
    const double ax = 1.5 * p.data.dense()(static_cast<Eigen::Index>(i), 0);
    EXPECT_DOUBLE_EQ(p.data.label(i), ax * ax);  // noise = 0: y = (a.x*)^2 exactly
  }
  Vec x_star = Vec::Zero(6);
  x_star[0] = 1.5;
  EXPECT_EQ(p.x_star, x_star);
  EXPECT_NEAR(p.saddle.norm(), 1.5 / std::sqrt(3.0), 1e-15);
  EXPECT_EQ(p.saddle.dot(p.x_star), 0.0);
}

TEST(SyntheticData, PcaShapesAndSpectrum) {
  const SyntheticProblem p = make_synthetic("pca:n=40000,d=4,rank=2,top=3,gap=4");
  EXPECT_EQ(p.model, "pca");
  EXPECT_FALSE(p.data.has_labels());
  EXPECT_EQ(p.population->dim(), 8u);
  EXPECT_EQ(p.x_star.size(), 8);
  EXPECT_EQ(p.saddle.size(), 8);
  // Coordinate variances are the spiked spectrum [3, 3, 0.75, 0.75]. The sample
  // variance of n normals has relative sd sqrt(2/n) = 0.7%; 5 sd: P(fail) < 3e-6.
  const Vec variance = p.data.dense().colwise().squaredNorm().transpose() / 40000.0;
  const Vec expected = (Vec(4) << 3, 3, 0.75, 0.75).finished();
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(variance[j], expected[j], 5 * expected[j] * std::sqrt(2.0 / 40000)) << j;
}

TEST(SyntheticData, GaussianMixtureShapesAndMeans) {
  const Index n = 40000;
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=40000,d=4,mu=2");
  EXPECT_EQ(p.model, "logistic");
  EXPECT_EQ(p.population, nullptr);
  EXPECT_EQ(p.saddle.size(), 0);
  EXPECT_TRUE(p.x_star.isApprox(Vec::Constant(4, 2.0), 1e-15));  // 2 mu u, u = ones/sqrt(4)
  Vec sum_pos = Vec::Zero(4), sum_neg = Vec::Zero(4);
  Index positives = 0;
  for (Index i = 0; i < n; ++i) {
    const double y = p.data.label(i);
    ASSERT_TRUE(y == 0.0 || y == 1.0);
    const Vec z = p.data.dense().row(static_cast<Eigen::Index>(i)).transpose();
    if (y == 1.0) {
      sum_pos += z;
      ++positives;
    } else {
      sum_neg += z;
    }
  }
  // Class balance: binomial sd sqrt(n)/2 = 100; 5 sd.
  EXPECT_NEAR(static_cast<double>(positives), n / 2.0, 500.0);
  // Class means +-mu/sqrt(d) = +-1 per coordinate; standard error ~ 1/sqrt(n/2) = 0.007; 5 se.
  const double se = 1.0 / std::sqrt(n / 2.0);
  for (int j = 0; j < 4; ++j) {
    EXPECT_NEAR(sum_pos[j] / positives, 1.0, 5 * se) << j;
    EXPECT_NEAR(sum_neg[j] / static_cast<double>(n - positives), -1.0, 5 * se) << j;
  }
}

// ---------------------------------------------------------------------------
// Populations

/// An independent closed form of the PCA Hessian, entry by entry:
/// H[(i,k),(j,l)] = d_ij (U^T U)_lk + U_il U_jk + d_kl (U U^T)_ij - d_ij d_kl S_ii.
Eigen::MatrixXd pca_hessian(const Vec& spectrum, Index rank, const Vec& x) {
  const auto p = spectrum.size();
  const auto r = static_cast<Eigen::Index>(rank);
  const Eigen::Map<const Eigen::MatrixXd> u(x.data(), p, r);
  const Eigen::MatrixXd gram = u.transpose() * u;
  const Eigen::MatrixXd outer = u * u.transpose();
  Eigen::MatrixXd h = Eigen::MatrixXd::Zero(p * r, p * r);
  for (Eigen::Index k = 0; k < r; ++k)
    for (Eigen::Index i = 0; i < p; ++i)
      for (Eigen::Index l = 0; l < r; ++l)
        for (Eigen::Index j = 0; j < p; ++j) {
          double value = u(i, l) * u(j, k);
          if (i == j) value += gram(l, k);
          if (k == l) value += outer(i, j);
          if (i == j && k == l) value -= spectrum[i];
          h(k * p + i, l * p + j) = value;
        }
  return h;
}

Eigen::MatrixXd phase_retrieval_hessian(const Vec& x_star, const Vec& x) {
  const auto d = x.size();
  return (3 * x.squaredNorm() - x_star.squaredNorm()) * Eigen::MatrixXd::Identity(d, d) + 6 * x * x.transpose() -
         2 * x_star * x_star.transpose();
}

void expect_derivatives_match_finite_differences(const Population& population, const Vec& x) {
  const Index dim = population.dim();
  const double h = 1e-5;
  const Vec gradient = population.gradient(x);
  const Vec direction = random_vector(dim, 77);
  const Vec hvp = population.hvp(x, direction);
  const Vec fd_hvp = (population.gradient(x + h * direction) - population.gradient(x - h * direction)) / (2 * h);
  EXPECT_LT((hvp - fd_hvp).norm(), 1e-7 * (1 + hvp.norm()));
  for (Eigen::Index j = 0; j < static_cast<Eigen::Index>(dim); ++j) {
    Vec step = Vec::Zero(static_cast<Eigen::Index>(dim));
    step[j] = h;
    const double fd = (population.value(x + step) - population.value(x - step)) / (2 * h);
    EXPECT_NEAR(gradient[j], fd, 1e-7 * (1 + std::abs(gradient[j]))) << "coordinate " << j;
  }
}

TEST(Population, PhaseRetrievalDerivativesMatchFiniteDifferences) {
  const Vec x_star = random_vector(7, 1);
  const auto population = phase_retrieval_population(x_star, 0.3);
  for (std::uint32_t trial = 0; trial < 3; ++trial) {
    expect_derivatives_match_finite_differences(*population, random_vector(7, 10 + trial));
  }
}

TEST(Population, PcaDerivativesMatchFiniteDifferences) {
  const Vec spectrum = (Vec(5) << 2.0, 1.5, 0.5, 0.25, 0.1).finished();
  const auto population = pca_population(spectrum, 2);
  for (std::uint32_t trial = 0; trial < 3; ++trial) {
    expect_derivatives_match_finite_differences(*population, random_vector(10, 20 + trial));
  }
}

TEST(Population, AssembledHessianMatchesClosedForm) {
  const Vec x_star = random_vector(6, 2);
  const Vec x = random_vector(6, 3);
  const auto retrieval = phase_retrieval_population(x_star);
  const Eigen::MatrixXd h = retrieval->hessian(x);
  EXPECT_LT((h - phase_retrieval_hessian(x_star, x)).norm(), 1e-12 * (1 + h.norm()));

  const Vec spectrum = (Vec(4) << 3.0, 1.0, 0.5, 0.2).finished();
  const auto pca = pca_population(spectrum, 3);
  const Vec u = random_vector(12, 4);
  const Eigen::MatrixXd hp = pca->hessian(u);
  EXPECT_LT((hp - pca_hessian(spectrum, 3, u)).norm(), 1e-12 * (1 + hp.norm()));
}

TEST(Population, PhaseRetrievalSaddleAndMinimiser) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=10,d=5,xnorm=1.5,noise=0.4");
  const Population& f = *p.population;
  EXPECT_LT(f.gradient(p.saddle).norm(), 1e-14);
  EXPECT_NEAR(smallest_eigenvalue_dense(f.hessian(p.saddle)), -2 * 1.5 * 1.5, 1e-12);
  EXPECT_LT(f.gradient(p.x_star).norm(), 1e-14);
  EXPECT_NEAR(smallest_eigenvalue_dense(f.hessian(p.x_star)), 2 * 1.5 * 1.5, 1e-12);
  EXPECT_NEAR(f.value(p.x_star), 0.4 * 0.4 / 4, 1e-14);  // the noise floor
  EXPECT_NEAR(f.value(-p.x_star), 0.4 * 0.4 / 4, 1e-14);
  // The constant term: F(0) = (3 |x*|^4 + s^2) / 4.
  EXPECT_NEAR(f.value(Vec::Zero(5)), (3 * std::pow(1.5, 4) + 0.16) / 4, 1e-13);
  for (std::uint32_t trial = 0; trial < 5; ++trial) {
    EXPECT_GT(f.value(p.x_star + 0.3 * random_vector(5, 30 + trial)), f.value(p.x_star));
  }
}

TEST(Population, PcaSaddleAndMinimiser) {
  for (const Index rank : {1, 2}) {
    const SyntheticProblem p = make_synthetic("pca:n=10,d=5,top=2,gap=4,rank=" + std::to_string(rank));
    const Population& f = *p.population;
    EXPECT_LT(f.gradient(p.saddle).norm(), 1e-14);
    EXPECT_NEAR(smallest_eigenvalue_dense(f.hessian(p.saddle)), -(2 - 2.0 / 4), 1e-12) << rank;
    EXPECT_LT(f.gradient(p.x_star).norm(), 1e-14);
    // Rank 1: curvature lambda_1 - lambda_2 across; rank >= 2: zero along rotations U -> U R.
    EXPECT_NEAR(smallest_eigenvalue_dense(f.hessian(p.x_star)), rank == 1 ? 2 - 0.5 : 0.0, 1e-12) << rank;
    // F(U*) = [-sum_{j<=r} lambda_j^2 + (tr S)^2 + 2 tr S^2] / 4 with S = diag(2,..,0.5,..).
    Vec spectrum = Vec::Constant(5, 0.5);
    spectrum.head(static_cast<Eigen::Index>(rank)).setConstant(2.0);
    const double expected =
        (-4.0 * static_cast<double>(rank) + spectrum.sum() * spectrum.sum() + 2 * spectrum.squaredNorm()) / 4;
    EXPECT_NEAR(f.value(p.x_star), expected, 1e-13);
    // x = 0 is a local maximum with Hessian -S (x) I_r.
    EXPECT_NEAR(smallest_eigenvalue_dense(f.hessian(Vec::Zero(5 * static_cast<Eigen::Index>(rank)))), -2.0, 1e-14);
  }
}

/// The sample mean of per-example gradients (and losses) of the model on the
/// synthetic data agrees with the closed-form population within 4 standard
/// errors per coordinate. Under the CLT each check fails with probability
/// 6.3e-5; with the d + 1 checks here a fresh seed would fail with probability
/// below 1e-3. The seed is fixed, so the test is deterministic.
void expect_sample_mean_matches_population(const SyntheticProblem& problem, const Model& model, const Vec& x) {
  const Dataset& data = problem.data;
  model.validate(data);
  const auto dim = static_cast<Eigen::Index>(model.dim());
  ASSERT_EQ(model.dim(), problem.population->dim());
  Vec sum = Vec::Zero(dim), sum_sq = Vec::Zero(dim), g(dim);
  double loss_sum = 0, loss_sq = 0;
  for (Index i = 0; i < data.rows(); ++i) {
    model.gradient(x, data, i, g);
    sum += g;
    sum_sq += g.cwiseAbs2();
    const double loss = model.loss(x, data, i);
    loss_sum += loss;
    loss_sq += loss * loss;
  }
  const double n = static_cast<double>(data.rows());
  const Vec mean = sum / n;
  const Vec se = ((sum_sq / n - mean.cwiseAbs2()) / n).cwiseSqrt();
  const Vec expected = problem.population->gradient(x);
  for (Eigen::Index j = 0; j < dim; ++j) {
    EXPECT_LT(std::abs(mean[j] - expected[j]), 4 * se[j])
        << problem.name << " coordinate " << j << ": sample " << mean[j] << " population " << expected[j];
  }
  const double loss_mean = loss_sum / n;
  const double loss_se = std::sqrt((loss_sq / n - loss_mean * loss_mean) / n);
  EXPECT_LT(std::abs(loss_mean - problem.population->value(x)), 4 * loss_se)
      << problem.name << ": sample loss " << loss_mean << " population " << problem.population->value(x);
}

TEST(Population, PhaseRetrievalSampleMeanMatchesClosedForm) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=1000000,d=6,noise=0.5,xnorm=1.2,seed=7");
  const auto model = make_model(p.model, p.data.cols());
  expect_sample_mean_matches_population(p, *model, random_vector(6, 40, 0.7));
}

TEST(Population, PcaSampleMeanMatchesClosedForm) {
  const SyntheticProblem p = make_synthetic("pca:n=1000000,d=5,rank=2,top=2,gap=3,seed=7");
  ModelOptions options;
  options.rank = 2;
  const auto model = make_model(p.model, p.data.cols(), options);
  expect_sample_mean_matches_population(p, *model, random_vector(10, 41, 0.7));
}

// Generated straight into a sample order: every record is the one made in
// record order, only stored where Dataset::store_in_sample_order would put it
// (the stored arrays are the same, bit for bit).
TEST(SyntheticSampleOrder, SameRecordsStoredInTheSeedsOrder) {
  for (const std::string spec :
       {"phase-retrieval:n=3001,d=5,seed=4", "pca:n=2000,d=6,rank=2,seed=5", "gaussian-mixture:n=2500,d=9,seed=6"}) {
    SCOPED_TRACE(spec);
    const SyntheticProblem plain = make_synthetic(spec);
    const SyntheticProblem ordered = make_synthetic(spec, std::uint64_t{77});
    ASSERT_EQ(Layout::sample_order_seed(ordered.data), std::optional<std::uint64_t>(77));
    EXPECT_FALSE(Layout::sample_order_seed(plain.data).has_value());
    Dataset moved = plain.data;
    moved.store_in_sample_order(77);
    EXPECT_EQ(ordered.data.dense(), moved.dense());
    EXPECT_EQ(ordered.data.labels(), moved.labels());
    EXPECT_NE(ordered.data.dense(), plain.data.dense());  // it did move them
    const auto p = static_cast<Eigen::Index>(plain.data.cols());
    for (Index i = 0; i < plain.data.rows(); ++i) {
      ASSERT_EQ(Eigen::Map<const Vec>(ordered.data.dense_row(i), p), Eigen::Map<const Vec>(plain.data.dense_row(i), p));
      if (plain.data.has_labels()) ASSERT_EQ(ordered.data.label(i), plain.data.label(i));
      ASSERT_EQ(Layout::record_at(ordered.data, Layout::slot(moved, i)), i);
    }
  }
}

}  // namespace
}  // namespace dpsosp
