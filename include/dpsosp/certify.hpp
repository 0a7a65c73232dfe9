// dpsosp: the SOSP certificate (SPEC section 6).
#pragma once
#include <functional>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/synthetic.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

struct Certificate {
  double grad_norm = 0;   ///< ||grad F(x)||
  double lambda_min = 0;  ///< smallest eigenvalue of hess F(x) (the estimate, see below)
  double sosp_gap = 0;    ///< max(||grad F||, max(0, -lambda_min)^2 / rho)
  /// Ritz residual of lambda_min: an eigenvalue of the Hessian lies within this of
  /// lambda_min (0 for the dense solver).
  double lambda_residual = 0;
  /// False when the matrix-free solver stopped at its iteration limit before the
  /// residual met the tolerance: lambda_min is then the best Ritz value found, an
  /// upper bound on the true smallest eigenvalue, and the certificate says so.
  bool lambda_converged = true;
};

/// The smallest alpha for which x is an alpha-SOSP of a rho-Hessian-Lipschitz F.
double sosp_gap(double grad_norm, double lambda_min, double rho);

// HvpFunction (model.hpp): the operator, out = H v.

/// Where the matrix-free solver stands after a Lanczos cycle (EigenOptions::on_cycle).
struct EigenProgress {
  Index cycle = 0;      ///< cycles (restarts) done
  Index products = 0;   ///< operator products (Hessian-vector products) so far
  double value = 0;     ///< the smallest Ritz value, the current estimate of lambda_min
  double residual = 0;  ///< its Ritz residual
  double target = 0;    ///< the residual that counts as converged (tolerance * spectral scale)
};

struct EigenOptions {
  /// Below this dimension a dense eigen-decomposition of the assembled Hessian is used.
  Index dense_below = 64;
  Index max_iterations = 100;
  /// At most this many operator products in all (0 = no limit): with the
  /// large automatic basis, the bound on the solver's time.
  Index max_products = 2000;
  /// Converged when the Ritz residual is below tolerance * ||H||: lambda_min is then
  /// accurate to that absolute error, far below what the SOSP gap can resolve.
  double tolerance = 1e-6;
  /// Lanczos subspace size, capped at the dimension; memory is
  /// subspace_dimension vectors of the operator's size. 0 = automatic: up to
  /// 200 vectors within 2^24 doubles (at least 20). The residual is checked
  /// every 10 products, so a large basis costs memory, not products.
  Index subspace_dimension = 0;
  /// Called at each convergence check of the matrix-free solver (every 10
  /// products; not by the dense solver); returning false stops it there, unconverged.
  std::function<bool(const EigenProgress&)> on_cycle;
  /// Throws Error naming the field when a value is invalid.
  void Validate() const;
};
/// lambda_min of the symmetric operator given by hvp: dense below dense_below,
/// else matrix-free thick-restart Lanczos with full reorthogonalisation,
/// converged when the Ritz residual is below tolerance * ||H|| (certify.cpp says
/// why not Spectra 1.0.1). Throws Error when it does not converge.
double smallest_eigenvalue(const HvpFunction& hvp, Index dim, const EigenOptions& options = {});

/// As smallest_eigenvalue, but never throws for non-convergence: returns the best
/// Ritz value with its residual and whether the tolerance was met.
struct EigenEstimate {
  double value = 0;
  double residual = 0;
  bool converged = true;
};
EigenEstimate smallest_eigenvalue_estimate(const HvpFunction& hvp, Index dim, const EigenOptions& options = {});

/// Certificate of x for the known population F.
Certificate certify_population(const Population& population, const Vec& x, double rho,
                               const EigenOptions& options = {});
/// Certificate of x for the empirical objective of the model on `data` (evaluation data).
Certificate certify_empirical(const Model& model, const Dataset& data, const Vec& x, double rho,
                              const EigenOptions& options = {});
/// Certificate of a point whose objective's gradient there is `gradient` and
/// whose Hessian there is the operator `hvp` (a model of the caller's: a
/// network's mean loss by double backward, dpsosp.torch.certify).
Certificate certify_operator(const Vec& gradient, const HvpFunction& hvp, double rho, const EigenOptions& options = {});

}  // namespace dpsosp
