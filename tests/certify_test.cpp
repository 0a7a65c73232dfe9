// The SOSP certificate: the gap formula, the smallest-eigenvalue solver (dense and
// matrix-free, against Eigen's dense decomposition and known spectra) and the
// certificates of the known populations and of empirical objectives.
#include "dpsosp/certify.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "test_errors.hpp"

namespace dpsosp {
namespace {

Vec random_vector(Index dim, std::uint64_t seed, std::uint32_t index = 0) {
  GaussianStream stream(seed, StreamPurpose::kTest, index);
  Vec v(static_cast<Eigen::Index>(dim));
  stream.fill(v);
  return v;
}

/// A Wigner-type symmetric matrix: eigenvalues on both sides of zero.
Eigen::MatrixXd random_symmetric(Index dim, std::uint64_t seed) {
  const auto n = static_cast<Eigen::Index>(dim);
  const Vec entries = random_vector(dim * dim, seed);
  const Eigen::Map<const Eigen::MatrixXd> g(entries.data(), n, n);
  return (g + g.transpose()) / std::sqrt(2.0 * static_cast<double>(dim));
}

HvpFunction matrix_hvp(const Eigen::MatrixXd& h) {
  return [&h](const Vec& v, Vec& out) { out = h * v; };
}

double dense_lambda_min(const Eigen::MatrixXd& h) {
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(h, Eigen::EigenvaluesOnly).eigenvalues()[0];
}

using testing::error_of;

// The solver's accuracy tests ask for more than the certificate's default tolerance.
EigenOptions matrix_free() {
  EigenOptions options;
  options.dense_below = 0;
  options.tolerance = 1e-10;
  options.max_iterations = 1000;
  return options;
}

// ---------------------------------------------------------------------------

TEST(CertifySospGap, Examples) {
  EXPECT_DOUBLE_EQ(sosp_gap(0.1, 1.0, 1.0), 0.1);    // positive curvature: the gradient alone
  EXPECT_DOUBLE_EQ(sosp_gap(0.1, -1.0, 4.0), 0.25);  // (-lambda)^2 / rho dominates
  EXPECT_DOUBLE_EQ(sosp_gap(0.3, -1.0, 4.0), 0.3);
  EXPECT_DOUBLE_EQ(sosp_gap(0.0, -2.0, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(sosp_gap(0.0, 0.0, 1.0), 0.0);
  // x is an alpha-SOSP iff gap <= alpha: the boundary lambda = -sqrt(rho alpha).
  const double rho = 2.0, alpha = 0.5;
  EXPECT_NEAR(sosp_gap(alpha, -std::sqrt(rho * alpha), rho), alpha, 1e-15);
}

TEST(CertifySospGap, RejectsInvalidInputs) {
  EXPECT_EQ(error_of([] { sosp_gap(0.1, -1, 0); }), "sosp_gap: rho must be finite and > 0, got 0");
  EXPECT_EQ(error_of([] { sosp_gap(0.1, -1, -2); }), "sosp_gap: rho must be finite and > 0, got -2");
  EXPECT_NE(error_of([] { sosp_gap(0.1, -1, std::numeric_limits<double>::quiet_NaN()); }), "");
  EXPECT_NE(error_of([] { sosp_gap(0.1, -1, std::numeric_limits<double>::infinity()); }), "");
  EXPECT_EQ(error_of([] { sosp_gap(-1, -1, 1); }), "sosp_gap: grad_norm must be >= 0, got -1");
  EXPECT_EQ(error_of([] { sosp_gap(1, std::numeric_limits<double>::quiet_NaN(), 1); }), "sosp_gap: lambda_min is NaN");
}

TEST(CertifyEigen, MatchesDenseDecompositionOfRandomSymmetricMatrices) {
  for (const Index dim : {3, 12, 40, 150}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const Eigen::MatrixXd h = random_symmetric(dim, seed);
      const double expected = dense_lambda_min(h);
      ASSERT_LT(expected, 0.0);
      const double scale = h.norm();
      EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(h), dim, matrix_free()), expected, 1e-8 * scale)
          << "dim " << dim << " seed " << seed;
      EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(h), dim), expected, 1e-6 * scale);  // default: dense below 64
    }
  }
}

TEST(CertifyEigen, ShiftedMatricesAndDegenerateSpectra) {
  // lambda_min near zero (the typical case near an SOSP), positive definite,
  // negative definite, a multiple of I, and the zero operator.
  const Index dim = 100;
  const Eigen::MatrixXd base = random_symmetric(dim, 9);
  const double base_min = dense_lambda_min(base);
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(100, 100);
  for (const double target : {0.0, 1e-9, 3.0, -5.0}) {
    const Eigen::MatrixXd h = base + (target - base_min) * identity;
    EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(h), dim, matrix_free()), target, 1e-8 * h.norm()) << target;
  }
  const Eigen::MatrixXd negative_definite = -(base.transpose() * base) - identity;
  EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(negative_definite), dim, matrix_free()),
              dense_lambda_min(negative_definite), 1e-8 * negative_definite.norm());
  const Eigen::MatrixXd multiple = 2.5 * identity;
  EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(multiple), dim, matrix_free()), 2.5, 1e-10);
  const Eigen::MatrixXd zero = Eigen::MatrixXd::Zero(100, 100);
  EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(zero), dim, matrix_free()), 0.0, 1e-12);
  // Tiny dimensions always go dense.
  const Eigen::MatrixXd two = (Eigen::MatrixXd(2, 2) << 1, 2, 2, 1).finished();
  EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(two), 2, matrix_free()), -1.0, 1e-14);
  const Eigen::MatrixXd one = Eigen::MatrixXd::Constant(1, 1, -3.0);
  EXPECT_DOUBLE_EQ(smallest_eigenvalue(matrix_hvp(one), 1, matrix_free()), -3.0);
}

/// Operators with few distinct eigenvalues close their Krylov space early. Spectra
/// 1.0.1 reports wrong values as converged on these (upstream issue #159: a rank-1
/// PSD matrix gave -4e60); the solver must detect the breakdown and continue.
TEST(CertifyEigen, LowRankOperators) {
  const Index dim = 300;
  const Vec entries = random_vector(dim * 5, 11);
  const Eigen::Map<const Eigen::MatrixXd> g(entries.data(), 300, 5);
  for (const Eigen::Index rank : {1, 2, 5}) {
    for (const double sign : {1.0, -1.0}) {
      const Eigen::MatrixXd h = sign * g.leftCols(rank) * g.leftCols(rank).transpose();
      const double expected = sign > 0 ? 0.0 : dense_lambda_min(h);
      EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(h), dim, matrix_free()), expected, 1e-8 * h.norm())
          << "rank " << rank << " sign " << sign;
    }
  }
  // A projector plus a multiple of I: two distinct eigenvalues.
  const Vec u = random_vector(dim, 12).normalized();
  const Eigen::MatrixXd two_values = 0.5 * Eigen::MatrixXd::Identity(300, 300) - 4.0 * u * u.transpose();
  EXPECT_NEAR(smallest_eigenvalue(matrix_hvp(two_values), dim, matrix_free()), -3.5, 1e-8 * 4);
}

/// H = diag(D) + W C W^T with D in [1, 2), C = diag(-3, 5) and two random unit
/// columns W. Below min D, det(H - l I) / det(D - l I) = det(I + C W^T (D - l)^-1 W)
/// has the sign of det(H - l I), which changes once (one negative rank-1 term):
/// bisection on it gives lambda_min to machine precision.
TEST(CertifyEigen, LargeMatrixFreeDiagonalPlusLowRank) {
  const Index dim = 200000;
  const auto n = static_cast<Eigen::Index>(dim);
  Vec diagonal(n);
  for (Eigen::Index i = 0; i < n; ++i) diagonal[i] = 1.0 + static_cast<double>(i) / static_cast<double>(n);
  Eigen::MatrixXd w(n, 2);
  w.col(0) = random_vector(dim, 5, 0).normalized();
  w.col(1) = random_vector(dim, 5, 1).normalized();
  const Eigen::Vector2d c(-3.0, 5.0);
  const HvpFunction hvp = [&](const Vec& v, Vec& out) {
    out = diagonal.cwiseProduct(v) + w * c.cwiseProduct(w.transpose() * v);
  };
  const auto secular_sign = [&](double lambda) {
    const Vec inverse = (diagonal.array() - lambda).inverse().matrix();
    const Eigen::Matrix2d m = Eigen::Matrix2d::Identity() + c.asDiagonal() * (w.transpose() * inverse.asDiagonal() * w);
    return m.determinant();
  };
  double lo = 1.0 - 3.0, hi = 1.0 - 1e-12;  // Weyl: lambda_min >= min D - 3
  ASSERT_GT(secular_sign(lo), 0.0);
  ASSERT_LT(secular_sign(hi), 0.0);
  for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
    const double mid = 0.5 * (lo + hi);
    (secular_sign(mid) > 0 ? lo : hi) = mid;
  }
  const double expected = 0.5 * (lo + hi);
  const double got = smallest_eigenvalue(hvp, dim, matrix_free());
  EXPECT_NEAR(got, expected, 1e-8 * 6.0) << "expected about -2";
  EXPECT_LT(got, -1.5);
}

// A solver stopped by its iteration limit does not throw inside a certificate:
// it reports the best Ritz value, its residual, and converged = false.
TEST(CertifyEigen, EstimateReportsNonConvergenceInsteadOfThrowing) {
  const Index dim = 400;
  const HvpFunction hvp = [](const Vec& v, Vec& out) {
    out.resize(v.size());
    for (Eigen::Index i = 0; i < v.size(); ++i) out[i] = (1.0 + 1e-3 * static_cast<double>(i)) * v[i];
  };
  EigenOptions options;
  options.dense_below = 0;
  options.max_iterations = 1;
  options.subspace_dimension = 20;
  options.tolerance = 1e-12;
  const EigenEstimate e = smallest_eigenvalue_estimate(hvp, dim, options);
  EXPECT_FALSE(e.converged);
  EXPECT_GT(e.residual, 0.0);
  EXPECT_GE(e.value, 1.0 - 1e-12);  // a Ritz value never undershoots lambda_min = 1
  EXPECT_THROW(smallest_eigenvalue(hvp, dim, options), Error);
  options.max_iterations = 2000;
  options.max_products = 0;
  options.tolerance = 1e-9;
  const EigenEstimate done = smallest_eigenvalue_estimate(hvp, dim, options);
  EXPECT_TRUE(done.converged);
  EXPECT_NEAR(done.value, 1.0, 1e-6);
  // The product budget stops it too, and the progress hook sees every check.
  options.max_products = 30;
  Index checks = 0, last_products = 0;
  options.on_cycle = [&](const EigenProgress& p) {
    ++checks;
    EXPECT_GT(p.products, last_products);
    last_products = p.products;
    return true;
  };
  const EigenEstimate stopped = smallest_eigenvalue_estimate(hvp, dim, options);
  EXPECT_FALSE(stopped.converged);
  EXPECT_EQ(checks, 2u);  // at 10 and 20 products; the 30th ends it
  options.on_cycle = [](const EigenProgress&) { return false; };
  options.max_products = 0;
  EXPECT_FALSE(smallest_eigenvalue_estimate(hvp, dim, options).converged);
}

// The automatic basis (up to 200 vectors here) is checked every 10 products:
// on a spectrum spread evenly over [1, 2] it converges within its first
// cycle, after a whole number of checks, at the smallest eigenvalue.
TEST(CertifyEigen, TheAutomaticBasisConvergesBetweenRestarts) {
  const Index dim = 1000;
  Index count = 0;
  const HvpFunction hvp = [&count](const Vec& v, Vec& out) {
    ++count;
    out.resize(v.size());
    for (Eigen::Index i = 0; i < v.size(); ++i) out[i] = (1.0 + 1e-3 * static_cast<double>(i)) * v[i];
  };
  EigenOptions options;
  options.dense_below = 0;
  const EigenEstimate e = smallest_eigenvalue_estimate(hvp, dim, options);
  EXPECT_TRUE(e.converged);
  EXPECT_LT(count, 200u);
  EXPECT_EQ(count % 10, 0u);
  EXPECT_NEAR(e.value, 1.0, e.residual + 1e-12);
}

TEST(CertifyEigen, ErrorMessages) {
  const Eigen::MatrixXd h = random_symmetric(10, 3);
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(matrix_hvp(h), 0); }), "smallest_eigenvalue: dim must be >= 1, got 0");
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(HvpFunction(), 10); }), "smallest_eigenvalue: hvp is empty");
  const HvpFunction wrong_size = [](const Vec&, Vec& out) { out = Vec::Zero(3); };
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(wrong_size, 10); }),
            "smallest_eigenvalue: hvp returned 3 entries, expected 10");
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(wrong_size, 10, matrix_free()); }),
            "smallest_eigenvalue: hvp returned 3 entries, expected 10");
  const HvpFunction not_finite = [](const Vec& v, Vec& out) { out = v * std::numeric_limits<double>::quiet_NaN(); };
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(not_finite, 10, matrix_free()); }),
            "smallest_eigenvalue: hvp returned a non-finite entry");
  EigenOptions options;
  options.tolerance = 0;
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(matrix_hvp(h), 10, options); }),
            "EigenOptions: tolerance must be in (0, 1), got 0");
  options = EigenOptions();
  options.subspace_dimension = 2;
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(matrix_hvp(h), 10, options); }),
            "EigenOptions: subspace_dimension must be 0 (automatic) or >= 3, got 2");
  options = EigenOptions();
  options.max_iterations = 0;
  EXPECT_EQ(error_of([&] { smallest_eigenvalue(matrix_hvp(h), 10, options); }),
            "EigenOptions: max_iterations must be >= 1, got 0");
  // A clustered 400 x 400 spectrum with a 3-vector subspace and one restart cannot converge.
  const Eigen::MatrixXd hard = random_symmetric(400, 4);
  options = matrix_free();
  options.subspace_dimension = 3;
  options.max_iterations = 1;
  options.tolerance = 1e-12;
  const std::string message = error_of([&] { smallest_eigenvalue(matrix_hvp(hard), 400, options); });
  EXPECT_NE(message.find("smallest_eigenvalue: Lanczos"), std::string::npos) << message;
  EXPECT_NE(message.find("did not converge in 1 restarts"), std::string::npos) << message;
}

// ---------------------------------------------------------------------------
// Known populations

TEST(CertifyPopulation, PhaseRetrievalClosedForms) {
  for (const EigenOptions& options : {EigenOptions(), matrix_free()}) {
    const SyntheticProblem p = make_synthetic("phase-retrieval:n=10,d=80,xnorm=1.5");
    const double rho = 3.0;
    const Certificate at_saddle = certify_population(*p.population, p.saddle, rho, options);
    EXPECT_LT(at_saddle.grad_norm, 1e-14);
    EXPECT_NEAR(at_saddle.lambda_min, -2 * 2.25, 1e-8);
    EXPECT_NEAR(at_saddle.sosp_gap, 4.5 * 4.5 / rho, 1e-7);
    const Certificate at_minimum = certify_population(*p.population, p.x_star, rho, options);
    EXPECT_LT(at_minimum.grad_norm, 1e-14);
    EXPECT_NEAR(at_minimum.lambda_min, 2 * 2.25, 1e-8);
    EXPECT_DOUBLE_EQ(at_minimum.sosp_gap, 0.0);
    // x = 0: a local maximum, Hessian -|x*|^2 I - 2 x* x*^T.
    const Certificate at_zero = certify_population(*p.population, Vec::Zero(80), rho, options);
    EXPECT_NEAR(at_zero.lambda_min, -3 * 2.25, 1e-8);
    // A generic point: gradient norm from the closed form.
    const Vec x = Vec::LinSpaced(80, -0.1, 0.1);
    const Certificate generic = certify_population(*p.population, x, rho, options);
    EXPECT_DOUBLE_EQ(generic.grad_norm, p.population->gradient(x).norm());
    EXPECT_NEAR(generic.lambda_min, dense_lambda_min(p.population->hessian(x)), 1e-8);
  }
}

TEST(CertifyPopulation, UnitPhaseRetrievalSaddleGap) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=10,d=4");
  const Certificate c = certify_population(*p.population, p.saddle, 0.5);
  EXPECT_NEAR(c.lambda_min, -2.0, 1e-12);
  EXPECT_NEAR(c.sosp_gap, 4.0 / 0.5, 1e-11);
}

TEST(CertifyPopulation, PcaClosedForms) {
  for (const EigenOptions& options : {EigenOptions(), matrix_free()}) {
    const SyntheticProblem p = make_synthetic("pca:n=10,d=30,top=2,gap=4");
    const Certificate at_saddle = certify_population(*p.population, p.saddle, 1.0, options);
    EXPECT_LT(at_saddle.grad_norm, 1e-14);
    EXPECT_NEAR(at_saddle.lambda_min, -(2.0 - 0.5), 1e-8);
    const Certificate at_minimum = certify_population(*p.population, p.x_star, 1.0, options);
    EXPECT_LT(at_minimum.grad_norm, 1e-14);
    EXPECT_NEAR(at_minimum.lambda_min, 2.0 - 0.5, 1e-8);
    EXPECT_NEAR(at_minimum.sosp_gap, 0.0, 1e-14);  // the gradient is zero up to rounding
    EXPECT_NEAR(certify_population(*p.population, Vec::Zero(30), 1.0, options).lambda_min, -2.0, 1e-8);
  }
}

TEST(CertifyPopulation, ErrorMessages) {
  const auto population = phase_retrieval_population(Vec::Ones(5));
  EXPECT_EQ(error_of([&] { certify_population(*population, Vec::Ones(3), 1.0); }),
            "certify_population: x has 3 entries, expected 5");
  EXPECT_EQ(error_of([&] { certify_population(*population, Vec::Ones(5), 0.0); }),
            "certify_population: rho must be finite and > 0, got 0");
  Vec bad = Vec::Ones(5);
  bad[2] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of([&] { certify_population(*population, bad, 1.0); }),
            "certify_population: x has a non-finite entry");
}

// ---------------------------------------------------------------------------
// Empirical objectives

TEST(CertifyEmpirical, MatchesDenseComputationOnTheData) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=20000,d=10,seed=3");
  const auto model = make_model(p.model, p.data.cols());
  IndexList all(p.data.rows());
  for (Index i = 0; i < all.size(); ++i) all[i] = i;
  const Vec x = p.saddle;
  Eigen::MatrixXd h(10, 10);
  for (Eigen::Index j = 0; j < 10; ++j) h.col(j) = model->mean_hvp(x, p.data, all, Vec::Unit(10, j));
  const double expected = dense_lambda_min(0.5 * (h + h.transpose()));
  for (const EigenOptions& options : {EigenOptions(), matrix_free()}) {
    const Certificate c = certify_empirical(*model, p.data, x, 2.0, options);
    EXPECT_NEAR(c.grad_norm, model->mean_gradient(x, p.data, all).norm(), 1e-12);
    EXPECT_NEAR(c.lambda_min, expected, 1e-8);
    EXPECT_DOUBLE_EQ(c.sosp_gap, sosp_gap(c.grad_norm, c.lambda_min, 2.0));
  }
  // Close to the population certificate (-2 at the saddle). The per-entry
  // standard error of the mean Hessian is about 0.05 at n = 20000; the bound 0.4
  // is several of them, for the fixed seed.
  const Certificate c = certify_empirical(*model, p.data, x, 2.0);
  EXPECT_NEAR(c.lambda_min, -2.0, 0.4);
  EXPECT_LT(c.grad_norm, 0.1);
}

TEST(CertifyEmpirical, ErrorMessages) {
  const SyntheticProblem p = make_synthetic("phase-retrieval:n=50,d=4");
  const auto model = make_model(p.model, p.data.cols());
  EXPECT_EQ(error_of([&] { certify_empirical(*model, p.data, Vec::Zero(3), 1.0); }),
            "certify_empirical: x has 3 entries, expected 4");
  EXPECT_EQ(error_of([&] { certify_empirical(*model, p.data, Vec::Zero(4), -1.0); }),
            "certify_empirical: rho must be finite and > 0, got -1");
  EXPECT_EQ(error_of([&] { certify_empirical(*model, Dataset(), Vec::Zero(4), 1.0); }),
            "certify_empirical: the evaluation data have no records");
  // Data without labels do not fit a supervised model: the model's own check speaks.
  const SyntheticProblem unlabeled = make_synthetic("pca:n=50,d=4");
  EXPECT_NE(error_of([&] { certify_empirical(*model, unlabeled.data, Vec::Zero(4), 1.0); }), "");
}

}  // namespace
}  // namespace dpsosp
