// dpsosp: private estimates of the constants G and M (--G auto, --M auto;
// docs/parameters.md, "Estimated constants").
//
// G: the median of the per-example gradient norms ||grad f(x0; z)||, the clip
// norm that Andrew, Thakkar, McMahan and Ramaswamy (2021) adapt to (a
// regression's where the noise is small: a higher quantile, up to 0.9, by the
// public rule regression_clip_quantile). M: the
// median of the per-example ratios ||grad f(x0 + h u; z) - grad f(x0; z)|| / h
// along the record's own gradient direction u = grad f(x0; z) / ||grad f(x0; z)||
// (h = 1e-3 max(1, ||x0||)): the record's curvature in the direction a step
// on it moves, whose inverse is a step size that does not overshoot it. A
// regression's (linear, cauchy) record whose gradient at x0 is zero, its
// target predicted exactly (no clip acts on it, no direction), has no value:
// of k such records floor(q k) count as below every threshold (q the
// quantile sought), the rest as above, so the quantiles are the other
// records' (a zero-inflated target,
// centred on its zeros, put G and M near 2^-20 and the steps at 1/M).
// Elsewhere a zero gradient is x0's stationarity and counts as 0.
// minimize() uses G = f times the G estimate and M = max(f median, G / max(1, ||x0||)): a step
// at the clip norm moves the iterate by at most max(1, ||x0||), where the
// curvature at x0 is lower than what the steps meet later. f = 1/4 for a
// classifier fitted by an algorithm that averages its last iterates (most
// gradients clipped, the noise, which scales with G, four times smaller, the
// step's length bound G / M the medians'), else 1. Each quantile is found by
// a noisy binary search on log2 of the value over [-20, 20]: every round
// releases how many of the records lie below the midpoint, plus noise. A count
// changes by at most 1 when one record is replaced (floor(q k) included), so `rounds` counts with
// noise sigma_c are (sqrt(rounds) / sigma_c)-GDP (Gaussian mechanisms compose
// exactly), and sigma_c is chosen to make the estimate mu-GDP for the run's
// target mu. The records are the first ones of the public sample order,
// which the run then leaves unused: every record is seen by the estimate or
// by the run, never both, so the whole is (epsilon, delta)-DP at the target
// (parallel composition; the run's noise does not depend on the estimate's
// values except through G and M, which the run's guarantee holds for any
// value of). Secure mode: discrete Gaussian noise on the integer counts, zCDP.
//
// A shared estimate (Poisson-sampled runs with float noise under the PLD
// accountant, the default run's, on fewer than 25,000 records): the counts
// are on kSharedRecords times as many records, the run keeps every record,
// and the counts, a Gaussian mechanism of mu_e-GDP with mu_e = mu_run /
// kSharedRecords (the same noise relative to the records counted), are
// composed into the run's PLD as a prior release (PrivacyTarget::prior_mu
// becomes hypot(prior_mu, mu_e)): sequential composition, exact for Gaussian
// counts, at (1 / kSharedRecords)^2 of the run's mu^2 instead of the records.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// Which constants to estimate.
struct ConstantsEstimateOptions {
  bool G = false;
  bool M = false;
  /// Public bounds the estimates are capped at (post-processing): a scaled
  /// run's records lie in a known box, so G and M have bounds (scaling.hpp).
  double G_cap = std::numeric_limits<double>::infinity();
  double M_cap = std::numeric_limits<double>::infinity();
  /// > 0: the counts' GDP parameter (a shared estimate, composed into the
  /// run); 0: the target's (PrivacyTarget::run_gdp_mu, parallel composition).
  double mu = 0;
  /// The quantile of the gradient norms that G estimates: the median (0.5),
  /// or a regression's public rule (regression_clip_quantile).
  double g_quantile = 0.5;
  bool any() const { return G || M; }
};

/// What an estimate found and what it cost (all of it covered by the guarantee).
struct ConstantsEstimate {
  std::optional<double> G, M;
  Index records = 0;       ///< records spent (the first of the sample order)
  int rounds = 0;          ///< noisy counts released
  double count_noise = 0;  ///< the counts' noise standard deviation
  double mu = 0;           ///< the estimate's GDP parameter (float mode; the target's)
  /// The run used these records too: mu is composed into the run's own
  /// figures (a prior release), not in parallel with them.
  bool shared = false;
  double g_quantile = 0;  ///< the quantile G estimates (0: G not estimated)
};

/// The quantile of the per-example gradient norms that a regression's G
/// estimates (public: n, d, mu): the median where the noise is not small
/// (noise_to_signal sqrt(d) / (n mu) >= kClipQuantileNoisy), 0.9 where it is
/// (<= kClipQuantileQuiet), log-linear between. Clipping at the median makes
/// the fit a Huber regression whose residuals beyond the clip count only by
/// their sign: on a skewed target it follows the median, not the mean R^2
/// measures (randhie's doctor visits, fair's affairs: R^2 about 0 against a
/// non-private 0.05 to 0.07). A higher clip costs noise, which scales with G:
/// only where there is little (docs/parameters.md, "A regression's clip").
double regression_clip_quantile(Index n, Index d, double mu);
constexpr double kClipQuantileNoisy = 0.008, kClipQuantileQuiet = 0.002, kClipQuantileHigh = 0.9;

/// The fraction of the public cap G_cap (scaling.hpp) that a scaled run
/// clips at where its estimate has too few records for its noise (the public
/// rule of docs/parameters.md, "Few records"). `ratio`: the estimate's
/// records over 4 times its counts' noise at the run's mu (below 1 where the
/// rule applies; public: n, the budget). 1/4 where ratio >=
/// kFewRecordsDeep * 2, 1/6 where ratio <= kFewRecordsDeep, log-linear between.
/// The deeper in the noise, the more a smaller clip's smaller noise is worth
/// against the gradients it cuts: at 1/6, wine and iris at eps 1 (ratio 0.13,
/// 0.11) gain 2 to 5 points of the way from the majority class to the
/// non-private model, where iris at eps 3 (ratio 0.34) would lose 1 to 6
/// (docs/parameters.md, "Few records").
double few_records_clip_fraction(double ratio);
constexpr double kFewRecordsDeep = 0.15, kFewRecordsClipLow = 1.0 / 6, kFewRecordsClipHigh = 0.25;

/// Rounds of the binary search per constant: [-20, 20] in log2 halved ten
/// times, a resolution of 40 / 2^10 = 0.04 of an octave (3 %).
constexpr int kEstimateRounds = 10;

/// The records an estimate takes from n: n / 50, at least min(500, n / 10),
/// at most 20000.
Index estimate_records(Index n);

/// A shared estimate counts this many times estimate_records(n) (at most n)
/// at mu_run / kSharedRecords.
constexpr Index kSharedRecords = 8;
/// ... where the reserved records would be more than n / kSharedAbove (n
/// below 25,000): beyond, the 2% reserved cost less than the counts' share
/// of the run and their time (8 times the gradients at x0; a prior in every
/// PLD of the calibration).
constexpr Index kSharedAbove = 50;

/// The medians above on `records` (indices into data) at x0, with noise keyed
/// by `key` (the kClipEstimate stream); `seed` is not read (kept for the
/// signature's users). Throws Error for an empty request, no records or a
/// non-private target.
ConstantsEstimate estimate_constants(const Model& model, const Dataset& data, const IndexList& records, const Vec& x0,
                                     const ConstantsEstimateOptions& what, const PrivacyTarget& target,
                                     const NoiseKey& key, std::uint64_t seed);

}  // namespace dpsosp
