// Internal: the audit's tests of the claim's shape (docs/privacy.md, "From
// rates to a bound"): the lower confidence bound on mu of the GDP paths, and
// the Poisson paths' likelihood-ratio test against the PLD's trade-off curve.
#pragma once
#include <cstdint>
#include <vector>

#include "dpsosp/audit.hpp"

namespace dpsosp::audit::detail {

/// A lower bound on |mu| from the estimate mu_hat = (mean' - mean) / pooled sd
/// of n0 and n1 Gaussian scores of equal variance, holding with probability
/// >= 1 - level: |mu_hat| - z_{1 - level/2} se, se^2 = 1/n0 + 1/n1 + mu_hat^2 /
/// (2 (n0 + n1 - 2)) (normal approximation); 0 when not positive.
double mu_lower_bound(double mu_hat, Index n0, Index n1, double level);
/// The standard normal quantile (Acklam's rational approximation, refined by one Newton step).
double normal_quantile(double p);

/// The trade-off curve that `steps` Poisson-subsampled Gaussian steps at
/// rate q and noise multiplier z claim under add/remove (zero-out with n
/// public): (eps, delta(eps))-DP for every eps, delta from the PLD accountant
/// (pessimistic, as the runs' own figure), read on a grid of eps.
class ClaimedCurve {
 public:
  ClaimedCurve(double q, double z, std::uint64_t steps);
  /// The largest TPR any test may have at this FPR: the least over the grid of
  /// e^eps FPR + delta(eps) and 1 - e^-eps (1 - FPR - delta(eps)) (both orders of the pair).
  double max_tpr(double fpr) const;

 private:
  std::vector<double> epsilon_, delta_;
};

/// The log-likelihood ratio of "the canary is in" over its opportunities v
/// (shift `signal` where sampled, with probability q, noise z * signal):
/// sum_k log(1 - q + q exp(mu u_k - mu^2 / 2)), u_k = v_k / (z signal), mu = 1/z.
double poisson_lr(const std::vector<double>& v, double signal, double q, double z);

/// The trade-off test: the threshold (D' named when the statistic is above
/// it) is chosen on the selection samples among the null's upper quantiles,
/// maximising TPR_lower - max_tpr(FPR_upper) there; its rates are measured
/// on the measuring samples, each Clopper-Pearson bound at level / 2.
AuditResult::TradeOff tradeoff_test(std::vector<double> select_without, std::vector<double> select_with,
                                    std::vector<double> measure_without, std::vector<double> measure_with,
                                    const ClaimedCurve& curve, double level);

}  // namespace dpsosp::audit::detail
