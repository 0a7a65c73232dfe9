// Parameters of spider-tree-adaptive from the problem constants (paper
// Theorem 3.11 with every hidden constant set to 1; SPEC section 2).
// docs/parameters.md gives each formula with the paper line it comes from.
#include "dpsosp/params.hpp"
#include "dpsosp/mechanism.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void require_positive_finite(double v, const char* name, const char* who) {
  if (!(v > 0.0) || !std::isfinite(v)) {
    std::ostringstream os;
    os << who << ": " << name << " must be positive and finite, got " << v;
    throw Error(os.str());
  }
}

Index ceil_index(double v) {
  if (!std::isfinite(v) || v > 9.0e18) throw Error("parameters: a batch size overflowed (" + std::to_string(v) + ")");
  return static_cast<Index>(std::ceil(v));
}

double cbrt_bgm(const ProblemConstants& c) { return std::cbrt(c.B * c.G * c.M); }

Index automatic_phase_length(double kappa, double alpha) {
  const double typical = std::min(2.0 * kappa / alpha, 1.0e6);  // at most depth 20
  int depth = 1;
  while (static_cast<double>((Index{1} << depth) - 1) < typical) ++depth;
  return (Index{1} << depth) - 1;
}

}  // namespace

void ProblemConstants::Validate() const {
  require_positive_finite(G, "G", "ProblemConstants");
  require_positive_finite(M, "M", "ProblemConstants");
  require_positive_finite(rho, "rho", "ProblemConstants");
  require_positive_finite(B, "B", "ProblemConstants");
}

double theorem_alpha(Index n, Index d, double epsilon, const ProblemConstants& c) {
  const double nn = static_cast<double>(n);
  const double dd = static_cast<double>(d);
  // Privacy term ((BGM)^(1/3) + sqrt(BM)) (sqrt(d)/(n eps))^(1/2); zero when eps = inf.
  const double privacy_term =
      epsilon < kInf ? (cbrt_bgm(c) + std::sqrt(c.B * c.M)) * std::sqrt(std::sqrt(dd) / (nn * epsilon)) : 0.0;
  // Statistical term (B^(2/9) M^(2/9) G^(5/9) + B^(4/9) M^(4/9) G^(1/9)) / n^(1/3).
  const double stat_term = (std::pow(c.B * c.M, 2.0 / 9.0) * std::pow(c.G, 5.0 / 9.0) +
                            std::pow(c.B * c.M, 4.0 / 9.0) * std::pow(c.G, 1.0 / 9.0)) /
                           std::cbrt(nn);
  // Sampling term sqrt(MB / n).
  const double sample_term = std::sqrt(c.M * c.B / nn);
  return privacy_term + stat_term + sample_term;
}

namespace {

SpiderParameters compute(Index n, Index d, const PrivacyTarget& privacy, const ProblemConstants& c, double alpha_scale,
                         const ParameterOverrides& o, Index max_phase_length) {
  SpiderParameters p;
  const double eps = privacy.epsilon;
  const double sd = std::sqrt(static_cast<double>(d));
  p.alpha = o.alpha ? *o.alpha : alpha_scale * theorem_alpha(n, d, eps, c);
  require_positive_finite(p.alpha, "alpha", "spider-tree-adaptive");
  const double a = p.alpha;
  // Lemma 3.10: kappa = max(alpha sqrt(d)/eps, (BGM)^(1/3)).
  p.kappa = o.kappa ? *o.kappa : std::max(eps < kInf ? a * sd / eps : 0.0, cbrt_bgm(c));
  // Lemma 3.8: b = G sqrt(d)/(eps alpha) + G^2/alpha^2.
  p.b = o.b ? *o.b : ceil_index((eps < kInf ? c.G * sd / (eps * a) : 0.0) + c.G * c.G / (a * a));
  if (p.b == 0) p.b = 1;
  // Lemma 3.8: b_t = max(u_t sqrt(d)/(alpha eps), kappa u_t / alpha^2, 1).
  p.bt_slope = std::max(eps < kInf ? sd / (a * eps) : 0.0, p.kappa / (a * a));
  // SPEC 2.3: every node's replace-one sensitivity is at most s.
  p.sensitivity = std::max(2.0 * c.G / static_cast<double>(p.b), 2.0 / p.bt_slope);
  // L_max: given, or automatic. Near a stationary point ||grad~|| is about alpha,
  // so drift reaches kappa after about kappa/alpha steps (the phase length
  // behind Lemma 3.9's count of O1 calls). The automatic cap is the largest
  // phase of the smallest tree depth that holds twice that: 2^D - 1 with
  // D = ceil(log2(2 kappa/alpha + 1)). It rarely binds, and sigma is calibrated
  // for depth D instead of a far larger fixed cap (docs/parameters.md).
  p.max_phase_length = max_phase_length > 0 ? max_phase_length : automatic_phase_length(p.kappa, a);
  p.depth = privacy::tree_depth(p.max_phase_length);
  // The tree mechanism's calibration (mechanism.hpp), or the override.
  p.sigma = o.sigma                ? *o.sigma
            : o.noise_multiplier   ? *o.noise_multiplier * p.sensitivity
            : privacy.is_private() ? tree_noise_sigma(p.sensitivity, p.max_phase_length, privacy, d)
                                   : 0.0;
  p.eta = o.eta ? *o.eta : 1.0 / c.M;
  // Proposition 3.4: T = B / (eta alpha^2) = B M / alpha^2.
  p.T = o.T ? *o.T : ceil_index(c.B * c.M / (a * a));
  // Lemma 3.3 with its logarithm dropped (hidden constant 1): Gamma = M / sqrt(rho alpha).
  p.Gamma = o.Gamma ? *o.Gamma : std::max<Index>(1, ceil_index(c.M / std::sqrt(c.rho * a)));
  // Proposition 3.4: zeta = gamma (log factor dropped); Algorithm 2 line 9: threshold = gamma.
  p.zeta = o.zeta ? *o.zeta : a;
  p.threshold = o.threshold ? *o.threshold : a;
  return p;
}

}  // namespace

SpiderParameters spider_tree_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy,
                                                 const ProblemConstants& c, double alpha_scale,
                                                 const ParameterOverrides& overrides, Index max_phase_length) {
  const char* who = "spider-tree-adaptive";
  privacy.Validate();
  c.Validate();
  require_positive_finite(alpha_scale, "alpha_scale", who);
  if (d == 0) throw Error(std::string(who) + ": dimension d must be at least 1, got 0");
  if (n == 0) throw Error(std::string(who) + ": n must be at least 1, got 0");
  SpiderParameters p = compute(n, d, privacy, c, alpha_scale, overrides, max_phase_length);
  if (p.b > n) {
    // Find the smallest n' with b(n') <= n' (b falls as n grows) to say which n would do.
    Index lo = n, hi = std::max<Index>(2 * n, 2);
    while (compute(hi, d, privacy, c, alpha_scale, overrides, max_phase_length).b > hi) {
      lo = hi;
      if (hi > (Index{1} << 60))
        throw Error(std::string(who) + ": no dataset size can fill one O1 batch with these parameters");
      hi *= 2;
    }
    while (hi - lo > 1) {
      const Index mid = lo + (hi - lo) / 2;
      if (compute(mid, d, privacy, c, alpha_scale, overrides, max_phase_length).b > mid)
        lo = mid;
      else
        hi = mid;
    }
    std::ostringstream os;
    os << who << ": n = " << n << " records cannot fill one O1 batch of b = " << p.b
       << " records; these parameters need n >= " << hi << " (or a larger epsilon, alpha_scale or override of b)";
    throw Error(os.str());
  }
  return p;
}

}  // namespace dpsosp
