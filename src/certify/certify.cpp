// The SOSP certificate: ||grad F(x)||, lambda_min(hess F(x)) and the SOSP gap
// (SPEC sections 1 and 6; docs/certificate.md).
//
// lambda_min is found matrix-free by a thick-restart Lanczos iteration (Wu &
// Simon 2000) with full reorthogonalisation, written here rather than taken
// from Spectra: Spectra 1.0.1 (the packaged version) returns garbage flagged as
// converged for low-rank operators (upstream issue yixuan/spectra#159; a rank-1
// PSD 300 x 300 matrix gives lambda_min = -4e60), and an empirical Hessian
// over fewer records than parameters is low-rank. Its convergence test is also
// relative to the Ritz value itself, which is hopeless when lambda_min is near
// zero, the typical case near an SOSP. Here:
//  * every new basis vector is orthogonalised twice against the whole basis
//    ("twice is enough"), so a Krylov space that closes early (few distinct
//    eigenvalues) is detected and continued with a fresh random direction;
//  * the projected matrix P = V^T H V is formed column by column, so the Ritz
//    residual ||H V y - theta V y|| = ||f|| |y_last| is exact for any basis;
//  * convergence means residual <= tolerance * max |Ritz value| (the spectral
//    scale), and then |theta - lambda| <= residual for the converged pair.
#include "dpsosp/certify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

std::string number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

void check_rho(const char* where, double rho) {
  if (!(rho > 0) || !std::isfinite(rho)) {
    throw Error(std::string(where) + ": rho must be finite and > 0, got " + number(rho));
  }
}

void check_point(const char* where, const Vec& x, Index dim) {
  if (static_cast<Index>(x.size()) != dim) {
    throw Error(std::string(where) + ": x has " + std::to_string(x.size()) + " entries, expected " +
                std::to_string(dim));
  }
  if (!x.allFinite()) throw Error(std::string(where) + ": x has a non-finite entry");
}

/// Deterministic pseudo-random vectors with entries uniform in [-0.5, 0.5)
/// (splitmix64): start and restart directions. The certificate is not a
/// randomised output, so it takes no seed and is reproducible bit for bit.
class DirectionSource {
 public:
  void fill(Vec& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = next();
  }

 private:
  double next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
  }
  std::uint64_t state_ = 0;
};

/// w -= Q (Q^T w), twice; returns the coefficients Q^T w_original.
Vec orthogonalize(const Eigen::Ref<const Eigen::MatrixXd>& basis, Vec& w) {
  Vec coefficients = basis.transpose() * w;
  w.noalias() -= basis * coefficients;
  const Vec correction = basis.transpose() * w;
  w.noalias() -= basis * correction;
  return coefficients + correction;
}

/// out = H v, checked.
void apply(const HvpFunction& hvp, const Vec& v, Vec& out) {
  hvp(v, out);
  if (out.size() != v.size()) {
    throw Error("smallest_eigenvalue: hvp returned " + std::to_string(out.size()) + " entries, expected " +
                std::to_string(v.size()));
  }
  if (!out.allFinite()) throw Error("smallest_eigenvalue: hvp returned a non-finite entry");
}

// The basis size of EigenOptions::subspace_dimension = 0: up to 200 vectors
// within 2^24 doubles (128 MiB). A large basis converges in fewer products on
// the clustered low end of a Hessian (softmax on Fashion-MNIST, d = 7840: 450
// products with 60 vectors, 150 with 150), and costs nothing until it fills:
// the residual is checked every kCheckEvery products.
Eigen::Index subspace_size(const EigenOptions& options, Index dim) {
  const Index wanted = options.subspace_dimension > 0
                           ? options.subspace_dimension
                           : std::clamp<Index>((Index{1} << 24) / std::max<Index>(dim, 1), 20, 200);
  return static_cast<Eigen::Index>(std::min(wanted, dim));
}
constexpr Eigen::Index kCheckEvery = 10;

EigenEstimate lanczos_smallest_eigenvalue(const HvpFunction& hvp, Index dim, const EigenOptions& options) {
  const auto n = static_cast<Eigen::Index>(dim);
  const Eigen::Index m = subspace_size(options, dim);
  const Eigen::Index keep = std::max<Eigen::Index>(1, m / 2);  // Ritz vectors kept at a restart
  // A residual below this fraction of the scale is rounding: the space is invariant.
  constexpr double kBreakdown = 1e-12;

  Eigen::MatrixXd basis(n, m);
  Eigen::MatrixXd projected = Eigen::MatrixXd::Zero(m, m);  // upper triangle of V^T H V
  DirectionSource directions;
  Vec w(n), hq(n), residual(n);
  double scale = 0;  // largest ||H q|| seen, a lower bound on ||H||

  const auto fresh_direction = [&](Eigen::Index filled) {
    directions.fill(w);
    orthogonalize(basis.leftCols(filled), w);
    return Vec(w / w.norm());
  };
  directions.fill(w);
  basis.col(0) = w / w.norm();
  Eigen::Index first_new = 0;  // first basis column whose projection is not yet known
  EigenEstimate best;
  Index products = 0;

  for (Index cycle = 0; cycle < options.max_iterations; ++cycle) {
    double residual_norm = 0;
    Eigen::MatrixXd y;
    Vec theta;
    for (Eigen::Index j = first_new; j < m; ++j) {
      apply(hvp, basis.col(j), hq);
      ++products;
      scale = std::max(scale, hq.norm());
      w = hq;
      projected.col(j).head(j + 1) = orthogonalize(basis.leftCols(j + 1), w);
      const double beta = w.norm();
      const bool invariant = beta <= kBreakdown * scale;
      const bool last = j + 1 == m;
      if (!last) {
        // On breakdown every eigenvalue of the invariant space is already a Ritz
        // value; a fresh direction keeps eigenvalues outside it reachable.
        basis.col(j + 1) = invariant ? fresh_direction(j + 1) : Vec(w / beta);
      } else if (!invariant) {
        residual = w;
        residual_norm = beta;
      }
      // With H V = V P + w e_j^T for the first j + 1 columns, the Ritz pair
      // (theta, V y) of P has the exact residual ||w|| |y_j|: checked every
      // kCheckEvery products (not at a breakdown, whose space a fresh
      // direction is about to widen) and at the end of the cycle.
      const bool out_of_products = options.max_products > 0 && products >= options.max_products;
      if (!last && !out_of_products && (invariant || (j + 1 - first_new) % kCheckEvery != 0)) continue;
      const Eigen::MatrixXd symmetric = projected.topLeftCorner(j + 1, j + 1).selfadjointView<Eigen::Upper>();
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> ritz(symmetric);
      theta = ritz.eigenvalues();
      y = ritz.eigenvectors();
      const double spectral_scale = std::max(std::abs(theta[0]), std::abs(theta[j]));
      const double ritz_residual = (last ? residual_norm : beta) * std::abs(y(j, 0));
      best = {theta[0], ritz_residual, false};
      if (ritz_residual <= options.tolerance * spectral_scale) {
        best.converged = true;
        return best;
      }
      if (out_of_products) return best;
      if (options.on_cycle && !options.on_cycle({static_cast<Index>(cycle + 1), products, theta[0], ritz_residual,
                                                 options.tolerance * spectral_scale}))
        return best;
    }

    // Thick restart: keep the `keep` smallest Ritz vectors, continue from the residual.
    Eigen::MatrixXd kept(n, keep);
    for (Eigen::Index i = 0; i < keep; ++i) kept.col(i).noalias() = basis * y.col(i);
    basis.leftCols(keep) = kept;
    projected.setZero();
    projected.diagonal().head(keep) = theta.head(keep);
    basis.col(keep) = residual_norm > 0 ? Vec(residual / residual_norm) : fresh_direction(keep);
    first_new = keep;
  }
  return best;
}

double dense_smallest_eigenvalue(const HvpFunction& hvp, Index dim) {
  const auto n = static_cast<Eigen::Index>(dim);
  Eigen::MatrixXd h(n, n);
  Vec unit = Vec::Zero(n);
  Vec column;
  for (Eigen::Index j = 0; j < n; ++j) {
    unit[j] = 1.0;
    hvp(unit, column);
    unit[j] = 0.0;
    if (column.size() != n) {
      throw Error("smallest_eigenvalue: hvp returned " + std::to_string(column.size()) + " entries, expected " +
                  std::to_string(n));
    }
    h.col(j) = column;
  }
  if (!h.allFinite()) throw Error("smallest_eigenvalue: hvp returned a non-finite entry");
  const Eigen::MatrixXd symmetric = 0.5 * (h + h.transpose());
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(symmetric, Eigen::EigenvaluesOnly);
  if (solver.info() != Eigen::Success) {
    throw Error("smallest_eigenvalue: dense eigen-decomposition failed (dim " + std::to_string(n) + ")");
  }
  return solver.eigenvalues()[0];
}

Certificate make_certificate(const char* where, const Vec& gradient, const HvpFunction& hvp, Index dim, double rho,
                             const EigenOptions& options) {
  if (!gradient.allFinite()) throw Error(std::string(where) + ": the gradient at x is not finite");
  Certificate certificate;
  certificate.grad_norm = gradient.norm();
  const EigenEstimate lambda = smallest_eigenvalue_estimate(hvp, dim, options);
  certificate.lambda_min = lambda.value;
  certificate.lambda_residual = lambda.residual;
  certificate.lambda_converged = lambda.converged;
  certificate.sosp_gap = sosp_gap(certificate.grad_norm, certificate.lambda_min, rho);
  return certificate;
}

}  // namespace

void EigenOptions::Validate() const {
  if (max_iterations < 1) throw Error("EigenOptions: max_iterations must be >= 1, got 0");
  if (!(tolerance > 0) || !(tolerance < 1)) {
    throw Error("EigenOptions: tolerance must be in (0, 1), got " + number(tolerance));
  }
  if (subspace_dimension != 0 && subspace_dimension < 3) {
    throw Error("EigenOptions: subspace_dimension must be 0 (automatic) or >= 3, got " +
                std::to_string(subspace_dimension));
  }
}

double sosp_gap(double grad_norm, double lambda_min, double rho) {
  check_rho("sosp_gap", rho);
  if (!(grad_norm >= 0)) throw Error("sosp_gap: grad_norm must be >= 0, got " + number(grad_norm));
  if (std::isnan(lambda_min)) throw Error("sosp_gap: lambda_min is NaN");
  const double negative_curvature = std::max(0.0, -lambda_min);
  return std::max(grad_norm, negative_curvature * negative_curvature / rho);
}

EigenEstimate smallest_eigenvalue_estimate(const HvpFunction& hvp, Index dim, const EigenOptions& options) {
  options.Validate();
  if (dim < 1) throw Error("smallest_eigenvalue: dim must be >= 1, got 0");
  if (!hvp) throw Error("smallest_eigenvalue: hvp is empty");
  // Below 3 the Lanczos restart has nothing to keep; the dense path is exact anyway.
  if (dim < options.dense_below || dim < 3) return {dense_smallest_eigenvalue(hvp, dim), 0.0, true};
  return lanczos_smallest_eigenvalue(hvp, dim, options);
}

double smallest_eigenvalue(const HvpFunction& hvp, Index dim, const EigenOptions& options) {
  const EigenEstimate e = smallest_eigenvalue_estimate(hvp, dim, options);
  if (!e.converged) {
    throw Error("smallest_eigenvalue: Lanczos did not converge in " + std::to_string(options.max_iterations) +
                " restarts (or " + std::to_string(options.max_products) + " products) to tolerance " +
                number(options.tolerance) + " (dim " + std::to_string(dim) + ", residual " + number(e.residual) +
                "); raise EigenOptions::max_iterations or subspace_dimension");
  }
  return e.value;
}

Certificate certify_population(const Population& population, const Vec& x, double rho, const EigenOptions& options) {
  check_rho("certify_population", rho);
  check_point("certify_population", x, population.dim());
  const HvpFunction hvp = [&](const Vec& v, Vec& out) { out = population.hvp(x, v); };
  return make_certificate("certify_population", population.gradient(x), hvp, population.dim(), rho, options);
}

Certificate certify_operator(const Vec& gradient, const HvpFunction& hvp, double rho, const EigenOptions& options) {
  return make_certificate("certify_operator", gradient, hvp, static_cast<Index>(gradient.size()), rho, options);
}

Certificate certify_empirical(const Model& model, const Dataset& data, const Vec& x, double rho,
                              const EigenOptions& options) {
  check_rho("certify_empirical", rho);
  check_point("certify_empirical", x, model.dim());
  if (data.rows() == 0) throw Error("certify_empirical: the evaluation data have no records");
  model.validate(data);
  IndexList all(data.rows());
  for (Index i = 0; i < all.size(); ++i) all[i] = i;
  // One pass over the data per Lanczos product, what depends on x alone kept (Model::mean_hessian).
  const HvpFunction hvp = model.mean_hessian(x, data, all);
  return make_certificate("certify_empirical", model.mean_gradient(x, data, all), hvp, model.dim(), rho, options);
}

}  // namespace dpsosp
