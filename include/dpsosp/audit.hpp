// dpsosp: an empirical privacy audit. It runs an algorithm many times on two
// neighbouring datasets that differ in one canary record, scores each output,
// and turns the true and false positive rates of the best threshold test into
// a Clopper-Pearson lower bound on epsilon at the run's delta. A bound above
// the epsilon a run claims proves the claim false (with 95% confidence); a
// bound below it proves nothing (docs/privacy.md says why and what it covers).
#pragma once
#include <cstdint>
#include <string>

#include "dpsosp/optimizer.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::audit {

/// Deliberate bugs, to show the audit catches a mechanism that overstates its
/// privacy. Both keep claiming the epsilon the honest configuration reports.
enum class Tampering {
  kNone,               ///< the algorithm as shipped
  kNoiseDividedBy10,   ///< the calibrated noise divided by 10 (RunOptions::overrides.sigma)
  kClippingOff,        ///< clip norm raised above the canary's gradient, noise left at the honest level
};
Tampering parse_tampering(const std::string& name);  ///< "none", "noise-div-10", "clip-off"
std::string tampering_name(Tampering t);

struct AuditOptions {
  Algorithm algorithm = Algorithm::kDpsgd;  ///< any private algorithm
  PrivacyTarget privacy{1.0, 1e-5};         ///< the target the runs are calibrated to
  /// Runs on each of the two datasets; the first half chooses the test, the
  /// second half measures it.
  Index runs = 2000;
  Index batch = 16;         ///< records per batch (the O1 batch b of the SPIDER algorithms)
  Index steps = 1;          ///< optimizer steps; n = batch * steps records when every step is an O1
  Index dim = 1;            ///< d
  /// spider-tree-periodic only: steps per tree phase q (one O1, then q - 1 O2
  /// steps on 2b records each); 1 = every step an O1 of its own.
  Index phase_length = 1;
  double G = 1.0;           ///< the clip norm of the honest runs
  double canary_norm = 10;  ///< the canary's gradient norm, in units of G (> 1: clipping is exercised)
  double confidence = 0.95; ///< of the lower bound
  std::uint64_t seed = 1;   ///< run i on dataset k uses a seed derived from (seed, k, i)
  int threads = 0;          ///< runs in parallel (0 = all cores); never changes results
  Tampering tampering = Tampering::kNone;
  /// Throws Error naming the field when a value is invalid.
  void Validate() const;
};

struct AuditResult {
  std::string algorithm;
  std::string tampering;
  double claimed_epsilon = 0;  ///< epsilon the honest configuration reports (the claim under test)
  double reported_epsilon = 0; ///< epsilon the audited runs themselves report (differs when tampered)
  double delta = 0;
  double claimed_mu = 0;       ///< GDP mu of the claim
  double epsilon_lower_bound = 0;  ///< the audit's result (0 when there is no evidence)
  double confidence = 0;
  // The test, chosen on the first half of the runs.
  double threshold = 0;
  bool reject_high = true;     ///< "with canary" when score > threshold (else when score <= threshold)
  // Its counts on the second half: positives among runs with / without the canary.
  Index measure_runs = 0, true_positives = 0, false_positives = 0;
  double tpr_lower = 0, fpr_upper = 0;  ///< Clopper-Pearson, each at (1 - confidence)/2
  /// Point estimate of the output's GDP mu: the shift of the mean score over
  /// its standard deviation, from all runs (not a bound; compare with claimed_mu).
  double empirical_mu = 0;
  Index n = 0, dim = 0, steps = 0, phase_length = 1;
  double seconds = 0;
};

/// Runs the audit. Each run starts at x0 = 0 on a linear loss f(x; z) = <z, x>
/// whose gradient z does not depend on x; every record is z = 0 except the
/// canary, -canary_norm*G*e1 in D and +canary_norm*G*e1 in D'. So the only
/// signal in the output is the canary's clipped gradient, replacing it is the
/// worst case of replace-one adjacency (the clipped difference has norm 2G), and
/// the score -x_T[0] is the best statistic for it. Every step calls O1
/// (max_phase_length = 1) on its own batch; the SPIDER algorithms get overrides
/// that make 2G/b their largest node sensitivity (docs/privacy.md).
AuditResult run_audit(const AuditOptions& options);

/// One-sided Clopper-Pearson bounds on a binomial proportion from k successes in
/// n trials: the lower bound holds with probability >= 1 - alpha, as does the upper.
double clopper_pearson_lower(Index k, Index n, double alpha);
double clopper_pearson_upper(Index k, Index n, double alpha);
/// Regularised incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x);

/// The epsilon lower bound of one test at delta: log((TPR_lower - delta) / FPR_upper),
/// 0 when that is not positive; each rate bounded at level alpha.
double epsilon_lower_bound(Index true_positives, Index positives_trials, Index false_positives,
                           Index negatives_trials, double delta, double alpha);

}  // namespace dpsosp::audit
