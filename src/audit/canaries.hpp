// Internal: the audit's canary models and its per-run randomness (docs/privacy.md).
#pragma once
#include <cstdint>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/optimizer.hpp"

namespace dpsosp::audit::detail {

// f(x; z) = scale * <z, x>: the gradient scale * z does not depend on x, so
// zero records carry no signal at any iterate and O2 differences vanish; only
// the canary's clipped gradient reaches the output. scale = 1 but for the
// extreme canary, whose records are stored divided by scale = 2^1000 so that a
// finite record (2^30) overflows to infinity inside the model while the others
// come out exactly. fail_on_overflow: the run throws instead (a broken build).
class LinearCanaryModel final : public Model {
 public:
  LinearCanaryModel(Index d, double scale, bool fail_on_overflow)
      : d_(d), scale_(scale), fail_on_overflow_(fail_on_overflow) {}
  std::string name() const override { return "audit-linear"; }
  Index dim() const override { return d_; }
  Index features() const override { return d_; }
  void validate(const Dataset& data) const override {
    if (data.cols() != d_)
      throw Error("audit-linear: the data have " + std::to_string(data.cols()) + " features, expected " +
                  std::to_string(d_));
  }
  double loss(const Vec& x, const Dataset& data, Index i) const override { return scale_ * data.row_dot(i, x); }
  void gradient(const Vec&, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    data.row_dense(i, out);
    if (scale_ != 1.0) out *= scale_;
    if (fail_on_overflow_ && !out.allFinite())
      throw Error("audit-linear: a per-example gradient overflowed and this build gives up (tampering extreme-fails)");
  }
  void hvp(const Vec&, const Dataset&, Index, const Vec&, Eigen::Ref<Vec> out) const override { out.setZero(); }

 private:
  Index d_;
  double scale_;
  bool fail_on_overflow_;
};

// f(x; z) = k sum_j z_j (x_j - m)^2 / 2 + w x_1, with curvature k and centre m
// (k = 1, m = 0 but for the consistent O2, below). The drift w e1 is the same
// for every record and the same at every x: it moves the first step by a
// public amount (so that the O2 step after it is long enough to saturate the
// batch rule) and cancels in gradient differences. The rest, k z .* (x - m),
// is zero for z = 0; between two iterates it differs by k z .* (x_t - x_{t-1}).
// The consistent O2 (spider-mf-adaptive) takes differences of gradients
// clipped at G, which reach the replace-one worst case (+2G in D, -2G in D')
// only where the canary's clipped gradient flips sign between the iterates:
// a steep quadratic (k = 100) centred at m slightly past x_0 = 0 in the
// direction the drift moves x_1 does so whenever x_1 passes m.
class QuadraticCanaryModel final : public Model {
 public:
  QuadraticCanaryModel(Index d, double w, double centre = 0.0, double curvature = 1.0)
      : d_(d), w_(w), centre_(centre), curvature_(curvature) {}
  std::string name() const override { return "audit-quadratic"; }
  Index dim() const override { return d_; }
  Index features() const override { return d_; }
  void validate(const Dataset& data) const override {
    if (data.cols() != d_)
      throw Error("audit-quadratic: the data have " + std::to_string(data.cols()) + " features, expected " +
                  std::to_string(d_));
  }
  double loss(const Vec& x, const Dataset& data, Index i) const override {
    Vec z(d_);
    data.row_dense(i, z);
    return 0.5 * curvature_ * (z.array() * (x.array() - centre_).square()).sum() + w_ * x[0];
  }
  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    data.row_dense(i, out);
    if (centre_ == 0.0) {
      out.array() *= x.array();
    } else {
      out.array() *= x.array() - centre_;
    }
    if (curvature_ != 1.0) out *= curvature_;
    out[0] += w_;
  }
  void hvp(const Vec&, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    data.row_dense(i, out);
    out.array() *= v.array();
    if (curvature_ != 1.0) out *= curvature_;
  }

 private:
  Index d_;
  double w_, centre_, curvature_;
};

// Distinct for every (base seed, algorithm, dataset, run).
std::uint64_t run_seed(std::uint64_t base, Algorithm algorithm, int dataset, Index run);
// The noise key of run `run` on dataset `dataset`: a function of the audit's
// seed, so that an audit is reproducible. The audit's scores never read it
// (the attacker does not hold the key), except where a tampering publishes it.
NoiseKey run_key(std::uint64_t base, Algorithm algorithm, int dataset, Index run);

}  // namespace dpsosp::audit::detail
