// The known populations of the synthetic problems (synthetic.cpp), in closed form.
//
// Population of phase retrieval, f(x; a, y) = ((a.x)^2 - y)^2 / 4 with
// a ~ N(0, I_d), y = (a.x*)^2 + s e, e ~ N(0, 1) independent of a.
// Expanding the square, the cross terms with e vanish (E e = 0), and the
// Gaussian moments E(a.x)^4 = 3|x|^4 and E(a.x)^2 (a.u)^2 = |x|^2|u|^2 + 2(x.u)^2
// (Isserlis) give
//   4 F(x) = 3|x|^4 - 2(|x|^2|x*|^2 + 2(x.x*)^2) + 3|x*|^4 + s^2,
// so F(x*) = s^2/4 (the noise floor), and
//   grad F(x) = 3|x|^2 x - |x*|^2 x - 2(x.x*) x*,
//   hess F(x) = (3|x|^2 - |x*|^2) I + 6 x x^T - 2 x* x*^T.
// At x* the Hessian is 2|x*|^2 I + 4 x* x*^T (lambda_min = 2|x*|^2 for d >= 2).
// At x0 orthogonal to x* with |x0|^2 = |x*|^2/3 the gradient is (3|x0|^2 - |x*|^2) x0
// = 0 and the Hessian is 6 x0 x0^T - 2 x* x*^T: eigenvalues 2|x*|^2 (along x0),
// -2|x*|^2 (along x*), 0 elsewhere -- a strict saddle with lambda_min = -2|x*|^2.
// (x = 0 is a local maximum, Hessian -|x*|^2 I - 2 x* x*^T.)
//
// Population of PCA / matrix factorisation, f(U; z) = |U U^T - z z^T|_F^2 / 4
// with z ~ N(0, S), S = diag(lambda), x = vec(U), U p x r column-major:
//   4 F(U) = |U^T U|_F^2 - 2 tr(U^T S U) + E|z|^4,  E|z|^4 = (tr S)^2 + 2 tr(S^2),
//   grad F(U) = U U^T U - S U,
//   hess F(U)[V] = V U^T U + U V^T U + U U^T V - S V.
// The per-example gradient is (U U^T - z z^T) U, whose mean is grad F.
// For U with orthogonal columns sqrt(lambda_{j_k}) e_{j_k}, directions e_a e_k^T
// with a outside {j_k} have curvature lambda_{j_k} - lambda_a, the others >= 0;
// docs/synthetic.md works this out and the saddle make_pca (synthetic.cpp)
// chooses.
#include "dpsosp/synthetic.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "dpsosp/error.hpp"

namespace dpsosp {

Eigen::MatrixXd Population::hessian(const Vec& x) const {
  const Eigen::Index n = static_cast<Eigen::Index>(dim());
  Eigen::MatrixXd h(n, n);
  Vec unit = Vec::Zero(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    unit[j] = 1.0;
    h.col(j) = hvp(x, unit);
    unit[j] = 0.0;
  }
  // hvp is symmetric in exact arithmetic; averaging removes the rounding asymmetry.
  return 0.5 * (h + h.transpose());
}

namespace {

void check_point(const char* where, const Vec& x, Index dim) {
  if (static_cast<Index>(x.size()) != dim) {
    throw Error(std::string(where) + ": x has " + std::to_string(x.size()) + " entries, expected " +
                std::to_string(dim));
  }
}

class PhaseRetrievalPopulation final : public Population {
 public:
  PhaseRetrievalPopulation(Vec x_star, double noise_std)
      : x_star_(std::move(x_star)), star_sq_(x_star_.squaredNorm()), noise_var_(noise_std * noise_std) {}

  Index dim() const override { return static_cast<Index>(x_star_.size()); }

  double value(const Vec& x) const override {
    check_point("PhaseRetrievalPopulation::value", x, dim());
    const double xx = x.squaredNorm();
    const double xs = x.dot(x_star_);
    return (3 * xx * xx - 2 * (xx * star_sq_ + 2 * xs * xs) + 3 * star_sq_ * star_sq_ + noise_var_) / 4;
  }

  Vec gradient(const Vec& x) const override {
    check_point("PhaseRetrievalPopulation::gradient", x, dim());
    return (3 * x.squaredNorm() - star_sq_) * x - 2 * x.dot(x_star_) * x_star_;
  }

  Vec hvp(const Vec& x, const Vec& v) const override {
    check_point("PhaseRetrievalPopulation::hvp", x, dim());
    check_point("PhaseRetrievalPopulation::hvp (v)", v, dim());
    return (3 * x.squaredNorm() - star_sq_) * v + 6 * x.dot(v) * x - 2 * x_star_.dot(v) * x_star_;
  }

 private:
  Vec x_star_;
  double star_sq_;
  double noise_var_;
};

class PcaPopulation final : public Population {
 public:
  PcaPopulation(Vec spectrum, Index rank)
      : spectrum_(std::move(spectrum)),
        rank_(static_cast<Eigen::Index>(rank)),
        fourth_moment_(spectrum_.sum() * spectrum_.sum() + 2 * spectrum_.squaredNorm()) {}

  Index dim() const override { return static_cast<Index>(spectrum_.size() * rank_); }

  double value(const Vec& x) const override {
    check_point("PcaPopulation::value", x, dim());
    const auto u = as_matrix(x);
    const Eigen::MatrixXd gram = u.transpose() * u;
    const double trace_sus = (spectrum_.asDiagonal() * u).cwiseProduct(u).sum();
    return (gram.squaredNorm() - 2 * trace_sus + fourth_moment_) / 4;
  }

  Vec gradient(const Vec& x) const override {
    check_point("PcaPopulation::gradient", x, dim());
    const auto u = as_matrix(x);
    const Eigen::MatrixXd g = u * (u.transpose() * u) - spectrum_.asDiagonal() * u;
    return Eigen::Map<const Vec>(g.data(), g.size());
  }

  Vec hvp(const Vec& x, const Vec& v) const override {
    check_point("PcaPopulation::hvp", x, dim());
    check_point("PcaPopulation::hvp (v)", v, dim());
    const auto u = as_matrix(x);
    const auto w = as_matrix(v);
    const Eigen::MatrixXd h =
        w * (u.transpose() * u) + u * (w.transpose() * u) + u * (u.transpose() * w) - spectrum_.asDiagonal() * w;
    return Eigen::Map<const Vec>(h.data(), h.size());
  }

 private:
  Eigen::Map<const Eigen::MatrixXd> as_matrix(const Vec& x) const {
    return Eigen::Map<const Eigen::MatrixXd>(x.data(), spectrum_.size(), rank_);
  }
  Vec spectrum_;
  Eigen::Index rank_;
  double fourth_moment_;
};

}  // namespace

std::shared_ptr<const Population> phase_retrieval_population(const Vec& x_star, double noise_std) {
  if (x_star.size() == 0 || !x_star.allFinite()) {
    throw Error("phase_retrieval_population: x_star must be non-empty and finite, got " +
                std::to_string(x_star.size()) + " entries");
  }
  if (!(noise_std >= 0) || !std::isfinite(noise_std)) {
    throw Error("phase_retrieval_population: noise_std must be finite and >= 0, got " + std::to_string(noise_std));
  }
  return std::make_shared<PhaseRetrievalPopulation>(x_star, noise_std);
}

std::shared_ptr<const Population> pca_population(const Vec& spectrum, Index rank) {
  if (spectrum.size() == 0 || !spectrum.allFinite() || (spectrum.array() < 0).any()) {
    throw Error("pca_population: spectrum must be non-empty, finite and >= 0 (a covariance), got " +
                std::to_string(spectrum.size()) + " entries, min " +
                (spectrum.size() ? std::to_string(spectrum.minCoeff()) : std::string("none")));
  }
  if (rank < 1) throw Error("pca_population: rank must be >= 1, got 0");
  return std::make_shared<PcaPopulation>(spectrum, rank);
}

}  // namespace dpsosp
