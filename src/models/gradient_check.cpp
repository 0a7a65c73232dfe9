// Finite-difference checks of a Model's gradient and Hessian-vector product.
//
// Central differences D(h) = (g(h) - g(-h)) / 2h have truncation error
// c h^2 + O(h^4) and rounding error ~ eps |f| / h. Richardson's combination
// (4 D(h/2) - D(h)) / 3 cancels the h^2 term, which lets the step stay large
// (1e-4) and keeps the rounding error near 1e-12 relative.
#include "dpsosp/gradient_check.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"

namespace dpsosp {

void GradientCheckOptions::Validate() const {
  auto fail = [](const std::string& field, double value, const std::string& rule) {
    std::ostringstream s;
    s.precision(17);
    s << "GradientCheckOptions::Validate: " << field << " is " << value << ", expected " << rule;
    throw Error(s.str());
  };
  if (!(step > 0.0 && step < 1.0)) fail("step", step, "a number in (0, 1)");
  if (!(tolerance > 0.0)) fail("tolerance", tolerance, "a positive number");
  if (!(scale_floor > 0.0)) fail("scale_floor", scale_floor, "a positive number");
}

double relative_error(const Vec& a, const Vec& b, double floor) {
  const double scale = std::max({a.norm(), b.norm(), floor});
  return (a - b).norm() / scale;
}

namespace {

// Central difference of `fn` (returning T) at step h, optionally Richardson-extrapolated.
template <typename T, typename Fn>
T derivative(const Fn& fn, double h, bool richardson) {
  const T coarse = (fn(h) - fn(-h)) / (2.0 * h);
  if (!richardson) return coarse;
  const T fine = (fn(0.5 * h) - fn(-0.5 * h)) / h;
  return (4.0 * fine - coarse) / 3.0;
}

Index worst_coordinate(const Vec& a, const Vec& b) {
  Eigen::Index at = 0;
  if (a.size() > 0) (a - b).cwiseAbs().maxCoeff(&at);
  return static_cast<Index>(at);
}

std::string describe(const char* what, double error, double tolerance, Index at, const Vec& analytic,
                     const Vec& numeric) {
  std::ostringstream s;
  s.precision(6);
  const auto j = static_cast<Eigen::Index>(at);
  s << what << " relative error " << error << " > tolerance " << tolerance << " (worst coordinate " << at
    << ": analytic " << analytic[j] << ", numeric " << numeric[j] << ")";
  return s.str();
}

}  // namespace

GradientCheckResult check_model_derivatives(const Model& model, const Dataset& data, Index i, const Vec& x,
                                            const Vec& v, const GradientCheckOptions& options) {
  options.Validate();
  const std::string where = "check_model_derivatives: " + model.name();
  const auto d = static_cast<Eigen::Index>(model.dim());
  if (x.size() != d) {
    throw Error(where + ": x has " + std::to_string(x.size()) + " entries, expected " + std::to_string(d));
  }
  if (v.size() != d) {
    throw Error(where + ": v has " + std::to_string(v.size()) + " entries, expected " + std::to_string(d));
  }
  if (i >= data.rows()) {
    throw Error(where + ": record " + std::to_string(i) + " does not exist, expected an index below " +
                std::to_string(data.rows()));
  }
  const double v_norm = v.norm();
  if (!(v_norm > 0.0) || !std::isfinite(v_norm))
    throw Error(where + ": v has norm 0 or not finite, expected a nonzero direction");

  GradientCheckResult r;
  r.gradient.resize(d);
  model.gradient(x, data, i, r.gradient);
  r.numeric_gradient.resize(d);
  Vec moved = x;
  for (Eigen::Index j = 0; j < d; ++j) {
    const double h = options.step * std::max(1.0, std::abs(x[j]));
    auto f = [&](double t) {
      moved[j] = x[j] + t;
      const double value = model.loss(moved, data, i);
      moved[j] = x[j];
      return value;
    };
    r.numeric_gradient[j] = derivative<double>(f, h, options.richardson);
  }

  r.hvp.resize(d);
  model.hvp(x, data, i, v, r.hvp);
  const double h = options.step * std::max(1.0, x.norm()) / v_norm;
  auto g = [&](double t) {
    Vec out(d);
    model.gradient(x + t * v, data, i, out);
    return out;
  };
  r.numeric_hvp = derivative<Vec>(g, h, options.richardson);

  r.gradient_error = relative_error(r.gradient, r.numeric_gradient, options.scale_floor);
  r.hvp_error = relative_error(r.hvp, r.numeric_hvp, options.scale_floor);
  r.worst_gradient_coordinate = worst_coordinate(r.gradient, r.numeric_gradient);
  r.worst_hvp_coordinate = worst_coordinate(r.hvp, r.numeric_hvp);
  const bool gradient_ok = r.gradient_error <= options.tolerance;
  const bool hvp_ok = r.hvp_error <= options.tolerance;
  r.ok = gradient_ok && hvp_ok;
  if (r.ok) {
    r.message = "ok";
  } else {
    r.message = where + " record " + std::to_string(i) + ": ";
    if (!gradient_ok) {
      r.message += describe("gradient", r.gradient_error, options.tolerance, r.worst_gradient_coordinate, r.gradient,
                            r.numeric_gradient);
    }
    if (!hvp_ok) {
      if (!gradient_ok) r.message += "; ";
      r.message += describe("hvp", r.hvp_error, options.tolerance, r.worst_hvp_coordinate, r.hvp, r.numeric_hvp);
    }
  }
  return r;
}

}  // namespace dpsosp
