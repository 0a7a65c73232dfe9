// dpsosp: an empirical privacy audit. It runs an algorithm many times on two
// neighbouring datasets that differ in one canary record, scores each report
// (the final iterate, the trajectory, the report's other released fields, and a
// run that fails), and turns the true and false positive rates of the best
// threshold test into a Clopper-Pearson lower bound on epsilon at the run's
// delta. Beside it, a sharper test of the claim's shape: on the GDP paths a
// lower confidence bound on mu (the canary score's mean shift over its
// standard deviation) against the claimed mu; on the Poisson paths the
// likelihood-ratio test's rates, over many canaries a run, against the claimed
// trade-off curve of the PLD accountant. `violation` is set when either
// proves the claim false; an honest mechanism sets it with probability at most
// AuditResult::false_alarm (docs/privacy.md says why and what it covers).
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "dpsosp/caller_model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::audit {

/// Deliberate bugs, to show the audit catches a mechanism that overstates its
/// privacy. Each keeps claiming the epsilon the honest configuration reports.
enum class Tampering {
  kNone,              ///< the algorithm as shipped
  kNoiseDividedBy10,  ///< the calibrated noise divided by 10 (RunOptions::overrides.sigma)
  kClippingOff,       ///< clip norm raised above the canary's gradient, noise left at the honest level
  kPublishedKey,      ///< the noise key is published with the report: the attacker replays the run
  kUnclippedO2,   ///< quadratic-o2, spider-tree-adaptive / spider-mf-adaptive: O2 clip raised above the honest one, b_t
                  ///< and noise kept
  kExtremeFails,  ///< extreme canary: a run whose gradient overflows fails (the model throws)
  // Factors of two (and a forgotten tree composition), each a bug an
  // accountant could be handed; all are test-only hooks (issue 30).
  kSensitivityHalved,  ///< the clip raised to 2G, the noise left at the level G calls for: sensitivity stated 2x too
                       ///< small
  kNoiseHalved,        ///< the calibrated noise multiplier halved
  kRateHalved,         ///< Poisson paths: the noise calibrated (and the claim computed) for half the true sampling rate
  kColumnNormHalved,   ///< matrix factorization: the noise calibrated for half the factorization's column norm
  kDepthUnderstated,   ///< tree, depth >= 2: the node noise calibrated for a tree of depth 1
};
/// "none", "noise-div-10", "clip-off", "published-key", "unclipped-o2", "extreme-fails",
/// "sensitivity-half", "noise-half", "rate-half", "column-norm-half", "depth-understated".
Tampering parse_tampering(const std::string& name);
std::string tampering_name(Tampering t);

/// The canary record and the loss it is audited with (docs/privacy.md).
enum class Canary {
  /// f(x; z) = <z, x>; D holds -c G e1, D' holds +c G e1 (Poisson: D a null
  /// record, zero-out). The canary is in the first O1 batch.
  kLinear,
  /// f(x; z) = sum_j z_j x_j^2 / 2; D holds -c M e1, D' +c M e1, in the first O2
  /// batch: its gradient difference c M (x_1 - x_0) saturates the O2 clip
  /// M ||x_1 - x_0||, so the adaptive O2 sensitivity and b_t rule are audited.
  /// (spider-mf-adaptive, whose O2 takes differences of clipped gradients: a
  /// steep quadratic centred just past x_0, so that the clipped gradient flips.)
  kQuadraticO2,
  /// The linear loss with a record in D whose gradient overflows to infinity
  /// inside the model (it must contribute zero, and the run end normally),
  /// against a normally clipped canary +c G e1 in D'.
  kExtreme,
};
Canary parse_canary(const std::string& name);  ///< "linear", "quadratic-o2", "extreme"
std::string canary_name(Canary c);

struct AuditOptions {
  Algorithm algorithm = Algorithm::kDpsgd;  ///< any private algorithm
  PrivacyTarget privacy{1.0, 1e-5};         ///< the target the runs are calibrated to
  Canary canary = Canary::kLinear;
  /// Runs on each of the two datasets; the first half chooses the test, the
  /// second half measures it.
  Index runs = 2000;
  Index batch = 16;  ///< records per batch (the O1 batch b of the SPIDER algorithms)
  /// 0 = the mode's default. Single pass: optimizer steps (default 1; n = batch *
  /// steps records when every step is an O1); quadratic-o2: 2 (one O1, one O2),
  /// the only value; Poisson (epochs > 0): steps per epoch, n = batch * steps and
  /// sampling rate 1/steps (default 10); passes (spider-mf-adaptive, epochs > 0):
  /// steps per pass, n = batch * steps (default 10).
  Index steps = 0;
  Index dim = 1;  ///< d
  /// spider-tree-periodic only: steps per tree phase q (one O1, then q - 1 O2
  /// steps on 2b records each); 1 = every step an O1 of its own.
  Index phase_length = 1;
  /// dpsgd: epochs > 0 audits multi-epoch Poisson sampling (planned steps
  /// ceil(epochs * steps)) with the zero-out neighbours it is accounted for.
  /// spider-mf-adaptive: passes as `sampling` says: order, a whole number of
  /// passes over the sample order of `steps` O1 steps each (the canary in the
  /// first batch of every pass), replace-one neighbours; poisson (the default
  /// beyond one pass), cyclic Poisson sampling with the banded factorization
  /// (n = batch * steps, the canary first in the sample order, so in group 0),
  /// zero-out neighbours.
  double epochs = 0;
  /// spider-mf-adaptive: how the passes sample (RunOptions::sampling; unset:
  /// the run's default) and, for poisson, the bands (unset: automatic).
  std::optional<Sampling> sampling;
  std::optional<Index> bands;
  double G = 1.0;  ///< the clip norm of the honest runs
  /// The canary's gradient (difference, for quadratic-o2) in units of its clip
  /// (> 1: clipping is exercised).
  double canary_norm = 10;
  double confidence = 0.95;  ///< of the epsilon lower bound
  /// False-alarm rate of the mu test (GDP paths) or the trade-off test
  /// (Poisson paths); `violation` fires on an honest mechanism with
  /// probability at most (1 - confidence) + test_level.
  double test_level = 0.01;
  /// Poisson paths (dpsgd or spider-mf-adaptive with epochs): canaries per
  /// run, canary j in coordinate j of its own record (the records' dimension
  /// is max(dim, canaries)); each gives the trade-off test one sample a run.
  /// 0 = the mode's default: 64 on Poisson paths, 1 elsewhere (the only value).
  Index canaries = 0;
  std::uint64_t seed = 1;  ///< run i on dataset k uses a seed and key derived from (seed, k, i)
  int threads = 0;         ///< runs in parallel (0 = all cores); never changes results
  Tampering tampering = Tampering::kNone;
  /// The canary's gradients from the caller instead of the audit's own model
  /// (a model of the caller's, caller_model.hpp; dpsosp.torch.audit): given
  /// one run's records (n x dim, record i's z_i in row i: zero but the
  /// canaries'), the callbacks of a model whose loss of record i is <z_i, x>,
  /// so that its per-example gradient is z_i. Every run (the claim's
  /// reference too) then trains make_caller_model(caller(records)) on
  /// caller_records(n), the rest as for the audit's own model; the runs are
  /// serial (no callback is called by two threads at once). Linear canary only.
  std::function<CallerGradients(const RowMatrix& records)> caller;
  /// Throws Error naming the field, or the combination that does not apply.
  void Validate() const;
};

struct AuditResult {
  std::string algorithm;
  std::string tampering;
  std::string canary;
  std::string adjacency;        ///< of the neighbours D, D': "replace-one" or "zero-out" (Poisson)
  double claimed_epsilon = 0;   ///< epsilon the honest configuration reports (the claim under test)
  double reported_epsilon = 0;  ///< largest epsilon the audited runs themselves report (differs when tampered)
  double delta = 0;
  /// GDP mu of the claim; secure noise: sqrt(2 rho) of its zCDP rho, the mu
  /// of a Gaussian at the same rho; 0 on the Poisson paths (a PLD curve).
  double claimed_mu = 0;
  double epsilon_lower_bound = 0;  ///< the audit's result (0 when there is no evidence)
  double confidence = 0;
  // The test, chosen on the first half of the runs among every score.
  std::string score;                ///< the score it thresholds (docs/privacy.md lists them)
  std::vector<std::string> scores;  ///< every score the attacker computed
  double threshold = 0;
  bool reject_high = true;  ///< the test fires when score > threshold (else when score <= threshold)
  /// The test names D' (the dataset with the canary) when it fires; false: it
  /// names D (DP bounds both orderings of the pair alike).
  bool positive_is_canary = true;
  // Its counts on the second half: positives on the named dataset, and on the other.
  Index measure_runs = 0, true_positives = 0, false_positives = 0;
  double tpr_lower = 0, fpr_upper = 0;  ///< Clopper-Pearson, each at (1 - confidence)/2
  /// Point estimate of the shift of the "trajectory" score's mean over its
  /// standard deviation, from all runs that did not fail (not a bound; for the
  /// linear canary, compare with claimed_mu).
  double empirical_mu = 0;
  /// Runs that threw, on D and on D'. A failure is an outcome the attacker sees:
  /// every score of such a run is +infinity.
  Index failures_without = 0, failures_with = 0;
  std::string first_failure;  ///< the message of one failed run ("" if none)
  /// The claim proved false: epsilon_lower_bound > claimed_epsilon, or
  /// mu_lower_bound > claimed_mu, or the trade-off test's point lies beyond
  /// the claimed curve. violation_by names which ("epsilon", "mu",
  /// "trade-off", joined by "+"; "" when none).
  bool violation = false;
  std::string violation_by;
  double false_alarm = 0;  ///< (1 - confidence) + test_level: the most an honest mechanism sets violation
  /// GDP paths: a lower bound on |empirical_mu| holding with probability
  /// >= 1 - test_level (normal approximation, the score being Gaussian); NaN elsewhere.
  double mu_lower_bound = std::numeric_limits<double>::quiet_NaN();
  /// Poisson paths: the trade-off test. The score of a (run, canary) is the
  /// likelihood-ratio statistic of the claimed mechanism over the canary's
  /// opportunities; the threshold is chosen on the first half of the runs,
  /// the rates measured on the second: Clopper-Pearson at test_level / 2 each.
  /// The claim allows TPR <= claimed_tpr_max(FPR) (from the PLD's delta(eps)).
  struct TradeOff {
    Index canaries = 0;
    Index samples = 0;  ///< measured (run, canary) pairs on each dataset
    double threshold = 0;
    Index true_positives = 0, false_positives = 0;
    double tpr_lower = 0, fpr_upper = 0;
    double claimed_tpr_max = 1;                      ///< the claimed curve's largest TPR at fpr_upper
    double sampling_rate = 0, noise_multiplier = 0;  ///< the claim's (q, z)
    std::uint64_t steps = 0;                         ///< the claim's compositions
  };
  std::optional<TradeOff> tradeoff;
  Index n = 0, dim = 0, steps = 0, phase_length = 1;
  double epochs = 0;
  double seconds = 0;
};

/// Runs the audit (docs/privacy.md: canaries, neighbours, configurations,
/// scores). Every run starts at x0 = 0 and records its trajectory; a run that
/// throws is recorded as an outcome, never aborts the audit. Throws Error only
/// for invalid options or when the honest configuration cannot be set up.
AuditResult run_audit(const AuditOptions& options);

/// The public seed and secret key of run `run` on D (dataset 0) or D' (1).
struct RunRandomness {
  std::uint64_t seed;
  NoiseKey key;
};
RunRandomness run_randomness(const AuditOptions& options, int dataset, Index run);

/// One run of the audited configuration (its tampering included) on D
/// (with_canary = false) or D' (true), with the given seed and key and the
/// trajectory recorded: what run_audit scores, for tests that compare the
/// reports of D and D' under the same randomness. Throws what the run throws.
Summary run_once(const AuditOptions& options, bool with_canary, const RunRandomness& randomness);

/// One-sided Clopper-Pearson bounds on a binomial proportion from k successes in
/// n trials: the lower bound holds with probability >= 1 - alpha, as does the upper.
double clopper_pearson_lower(Index k, Index n, double alpha);
double clopper_pearson_upper(Index k, Index n, double alpha);
/// Regularised incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x);

/// The epsilon lower bound of one test at delta: log((TPR_lower - delta) / FPR_upper),
/// 0 when that is not positive; each rate bounded at level alpha.
double epsilon_lower_bound(Index true_positives, Index positives_trials, Index false_positives, Index negatives_trials,
                           double delta, double alpha);

}  // namespace dpsosp::audit
