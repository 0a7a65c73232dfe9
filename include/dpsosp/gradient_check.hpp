// dpsosp: finite-difference checks of a model's gradient and Hessian-vector
// product (after Ceres' GradientChecker). Use it when writing a new Model: the
// library's privacy claim does not depend on a correct gradient (clipping bounds
// the sensitivity whatever it is), but every utility and certificate figure does.
#pragma once
#include <string>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

struct GradientCheckOptions {
  /// Relative step: coordinate j of x moves by step * max(1, |x_j|); the HVP
  /// check moves x along v by step * max(1, ||x||) / ||v||. Must be in (0, 1).
  double step = 1e-4;
  /// Richardson extrapolation of the central differences (steps h and h/2):
  /// truncation error O(h^4) instead of O(h^2), for twice the evaluations.
  bool richardson = true;
  /// Largest accepted relative error ||analytic - numeric|| / max(||analytic||,
  /// ||numeric||, scale_floor). Must be positive.
  double tolerance = 1e-6;
  /// Norms below this count as this, so that a (near) zero vector is compared in
  /// absolute terms. Must be positive.
  double scale_floor = 1e-8;
  /// Throws Error naming the field when a value is invalid.
  void Validate() const;
};

struct GradientCheckResult {
  /// Both relative errors are within the tolerance.
  bool ok = false;
  /// Relative errors, as defined by GradientCheckOptions::tolerance.
  double gradient_error = 0.0;
  double hvp_error = 0.0;
  /// The coordinates with the largest absolute disagreement.
  Index worst_gradient_coordinate = 0;
  Index worst_hvp_coordinate = 0;
  /// The model's values and their finite-difference estimates.
  Vec gradient, numeric_gradient;
  Vec hvp, numeric_hvp;
  /// One line: "ok" or what disagreed, by how much, and where.
  std::string message;
};

/// Compares model.gradient(x; z_i) with central differences of model.loss, and
/// model.hvp(x; z_i, v) with central differences of model.gradient along v.
/// Costs 2 d (4 d with Richardson) loss evaluations. Throws Error when x or v has
/// the wrong size, v is zero, i is not a record of data, or options are invalid.
GradientCheckResult check_model_derivatives(const Model& model, const Dataset& data, Index i, const Vec& x,
                                            const Vec& v, const GradientCheckOptions& options = {});

/// Relative distance ||a - b|| / max(||a||, ||b||, floor) used by the checker.
double relative_error(const Vec& a, const Vec& b, double floor = 1e-8);

}  // namespace dpsosp
