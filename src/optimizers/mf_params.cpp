// Parameters of spider-mf-adaptive (include/dpsosp/params.hpp,
// docs/parameters.md "spider-mf-adaptive"). Every rule reads public
// quantities only: n, d, the target, the constants and the options, never the
// data, so the parameters, the noise and the guarantee are fixed before the
// run.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/mechanism.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

constexpr Index kMinBatch = 16;
constexpr double kBatchScale = 0.25;
constexpr Index kDefaultPhaseCap = 4;
constexpr double kDefaultTail = 0.25;

Index ceil_count(double v) {
  if (!std::isfinite(v) || v > 9.0e18) throw Error("spider_mf_adaptive_parameters: a batch size overflowed");
  return std::max<Index>(1, static_cast<Index>(std::ceil(v)));
}

// The releases a run can make: every O1 takes b1 records, every O2 at least
// b2_min; passes over the order (O1 steps only) n / b1 each.
Index horizon_for(Index n, Index b1, bool o2, Index b2_min, Index epochs) {
  if (!o2) return epochs * (n / b1);
  return 1 + (n - b1) / b2_min;
}

}  // namespace

MfParameters spider_mf_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy, const ProblemConstants& c,
                                           const MfChoices& ch, const ParameterOverrides& o) {
  const char* who = "spider_mf_adaptive_parameters";
  privacy.Validate();
  c.Validate();
  if (!privacy.is_private()) throw Error(std::string(who) + ": needs a finite epsilon (a private target)");
  if (d == 0) throw Error(std::string(who) + ": dimension d must be at least 1, got 0");
  if (!(ch.alpha_scale > 0) || !std::isfinite(ch.alpha_scale))
    throw Error(std::string(who) + ": alpha_scale must be positive and finite");
  if (ch.epochs < 1) throw Error(std::string(who) + ": epochs must be at least 1, got 0");
  if (ch.epochs > 1 && ch.o2.value_or(false)) {
    // O2 batch sizes follow the released steps, so a record's place in the
    // later passes, and the releases it enters, would depend on them; the
    // sensitivity of cyclic passes holds for fixed batches (docs/privacy-accounting.md).
    std::ostringstream os;
    os << who << ": o2 = on with epochs = " << ch.epochs
       << ": several passes take O1 steps only (fixed batches, so every record's releases are a pass apart); "
          "set o2 = off";
    throw Error(os.str());
  }
  MfParameters p;
  p.epochs = ch.epochs;
  const double mu = privacy::gdp_mu(privacy.epsilon, privacy.delta);
  p.alpha = o.alpha ? *o.alpha : ch.alpha_scale * theorem_alpha(n, d, privacy.epsilon, c);
  p.M2 = c.M;
  p.eta = ch.learning_rate ? *ch.learning_rate : 1.0 / c.M;
  p.tail = ch.tail.value_or(kDefaultTail);
  p.b2_min = 1;
  // b1 = 0.25 sqrt(n / mu), mu the target's GDP parameter: about 4 sqrt(n mu)
  // steps, more of them at weaker privacy. With the noise of the steps
  // cancelling in the iterates' sum, many noisy steps beat few quiet ones until
  // the iterates' own noise, (2G / (b1 mu)) column_norm^2 sqrt(d) per unit
  // step, takes over. Fitted on phase retrieval (n = 1e4..1e6) and
  // Fashion-MNIST softmax; checked on PCA, the MLP and other data
  // (docs/results.md, experiments/).
  if (ch.b1) {
    p.b1 = *ch.b1;
  } else {
    const double want = kBatchScale * std::sqrt(static_cast<double>(n) / mu);
    p.b1 = std::min(std::max<Index>(kMinBatch, ceil_count(want)), std::max<Index>(1, n / 10));
  }
  if (p.b1 == 0) throw Error(std::string(who) + ": the O1 batch must be at least 1");
  if (p.b1 > n) {
    std::ostringstream os;
    os << who << ": n = " << n << " records cannot fill one O1 batch of b1 = " << p.b1 << " records";
    throw Error(os.str());
  }
  p.bt_slope = static_cast<double>(p.b1) / c.G;
  p.sensitivity = 2.0 * c.G / static_cast<double>(p.b1);  // = 2 / bt_slope: O1 and O2 alike
  p.max_phase_length = ch.max_phase_length.value_or(kDefaultPhaseCap);
  // O2 steps only when asked: they break the cancellation of the noise in the
  // iterates' sum (each O2 step's estimate carries the phase's noise into x),
  // and in every configuration measured, eps 0.5 to 1000, O1 steps only did
  // better (docs/parameters.md).
  p.o2 = ch.o2.value_or(false) && p.epochs == 1;
  p.kappa = o.kappa ? *o.kappa : c.G / (p.M2 * p.eta);
  {
    p.horizon = std::max<Index>(1, horizon_for(n, p.b1, p.o2, p.b2_min, p.epochs));
    p.steps_per_epoch = p.o2 ? p.horizon : n / p.b1;
    const Index period = p.epochs > 1 ? p.steps_per_epoch : 0;
    const BltFactorization f = BltFactorization::square_root(p.horizon);
    p.column_norm = period > 0 ? f.cyclic_participation_norm(p.horizon, period) : f.max_column_norm(p.horizon);
    p.sigma = o.sigma              ? *o.sigma
              : o.noise_multiplier ? *o.noise_multiplier * p.sensitivity
                                   : mf_noise_sigma(p.sensitivity, p.horizon, privacy, d, period);
    const std::vector<double> r = f.inverse_coefficients(std::min<Index>(p.horizon, 4096));
    double row2 = 0;
    for (double v : r) row2 += v * v;
    p.step_noise = p.sigma * std::sqrt(row2);
  }
  if (!p.o2) {
    if (ch.max_phase_length && *ch.max_phase_length > 1) {
      std::ostringstream os;
      os << who << ": max_phase_length = " << *ch.max_phase_length << " needs O2 steps, and O2 is off ("
         << (p.epochs > 1 ? "several passes take O1 steps only" : "o2 is off unless set on")
         << (p.epochs > 1 ? ")" : "); set o2 = on");
      throw Error(os.str());
    }
    p.max_phase_length = 1;
  }
  // The saddle perturbation (Algorithm 2 lines 9-11) at the theory's scale.
  p.threshold = o.threshold ? *o.threshold : p.alpha;
  p.zeta = o.zeta ? *o.zeta : p.alpha;
  p.Gamma = o.Gamma ? *o.Gamma : std::max<Index>(1, ceil_count(c.M / std::sqrt(c.rho * p.alpha)));
  return p;
}

}  // namespace dpsosp
