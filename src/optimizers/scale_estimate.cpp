// The private box estimate of scaling.hpp: two noisy histograms per column
// (or the first alone, where the second could not be read).
#include <algorithm>
#include <cmath>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {
namespace {

// The octave grid: public range [-2^40, 2^40]. Its first 41 octaves a side
// ([0, 2^-20] to (2^19, 2^20], the whole grid before it reached 2^40) keep
// their counts' noise as drawn before (release 0, column by column); the 20
// octaves a side above them, (2^20, 2^21] to (2^39, 2^40], take theirs from
// release 2, so that a column inside [-2^20, 2^20] gets the same noise, and
// the same box, as before (scaling.hpp).
constexpr int kLowExponent = -20, kOldHighExponent = 20, kHighExponent = 40;
constexpr int kOldBins = kOldHighExponent - kLowExponent + 1;  // a side's octaves up to 2^20
constexpr int kHighBins = kHighExponent - kOldHighExponent;    // a side's octaves above 2^20
constexpr int kOctaveBins = kOldBins + kHighBins;
static_assert(static_cast<double>(std::uint64_t{1} << kHighExponent) == kScaleRangeTop, "scaling.hpp's range");
constexpr int kLinearBins = 16;
const double kOldRange = std::ldexp(1.0, kOldHighExponent);
constexpr double kPublicRange = kScaleRangeTop;
constexpr double kQuantile = 0.02;           // the box spans the 2% to 98% points
constexpr double kMagnitudeThreshold = 4.0;  // counts kept: above 4 sigma (octaves), 2.5 sigma (linear)
constexpr double kLinearThreshold = 2.5;
constexpr double kTightShare = 0.8;  // step 1 alone: kept counts holding 80% of n bound a box from below
// Where no count is kept, the guess among pairs takes a public prior: a raw
// column is non-negative with odds 20 to 1 (scaling.hpp).
constexpr double kNonNegativeOdds = 20.0;
// The noise releases (Noise): the octaves up to 2^20, the linear bins, the
// octaves above 2^20. Secure mode draws column c's counts of release r from
// the discrete stream 100 + r * kReleaseStride + c: distinct for C < kReleaseStride.
constexpr std::uint32_t kOctaveRelease = 0, kLinearRelease = 1, kHighRelease = 2, kPairRelease = 3;
// Octave pairs (step 1 alone where no count can clear its threshold, scaling.hpp):
// pair 0 is [0, 2^-20], pair j >= 1 the octaves 2j - 1 and 2j, (2^(2j-22), 2^(2j-20)],
// up to pair 20, (2^18, 2^20] with everything beyond it.
constexpr int kPairs = (kOldBins + 1) / 2;
static_assert(2 * (kPairs - 1) == kOldBins - 1, "the pairs end at 2^20");
constexpr std::uint32_t kReleaseStride = 100000;

// The octave of |v|, closed above: 0 for [0, 2^-20], k for
// (2^(k-21), 2^(k-20)], up to the top (2^39, 2^40] with everything beyond
// it. Closed above, a power of two is the top of its octave: integer data
// that reaches 16, or a proportion that reaches 1, keeps S = 16 or 1 rather
// than twice it (scaling.hpp).
int octave_bin(double v) {
  const double a = std::abs(v);
  if (!(a > std::ldexp(1.0, kLowExponent))) return 0;
  int e = std::ilogb(a);             // a in [2^e, 2^(e+1))
  if (a == std::ldexp(1.0, e)) --e;  // 2^e: the top of (2^(e-1), 2^e]
  return std::min(kOctaveBins - 1, e - kLowExponent + 1);
}
double octave_upper_edge(int bin) { return std::ldexp(1.0, kLowExponent + bin); }

// Noisy counts of one histogram column by column (the whole matrix one
// release): Gaussian in float mode, discrete Gaussian of scale s in secure mode.
class Noise {
 public:
  Noise(const NoiseKey& key, bool secure, std::uint64_t scale, std::uint32_t release)
      : key_(key), stream_(key, StreamPurpose::kScaling, release), secure_(secure), scale_(scale), release_(release) {}
  // sigma: this column's float noise (the target's may differ); secure: the scale.
  void add(std::vector<double>& counts, double sigma) {
    if (secure_) {
      std::vector<double> z(counts.size());
      fill_discrete_gaussian(key_, StreamPurpose::kScaling, 100 + release_ * kReleaseStride + next_++, scale_, z.data(),
                             z.size(), 1);
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += z[k];
    } else if (sigma > 0) {
      for (double& c : counts) c += sigma * stream_.next();
    }
  }

 private:
  NoiseKey key_;
  GaussianStream stream_;
  bool secure_;
  std::uint64_t scale_;
  std::uint32_t release_, next_ = 0;
};

// The q-point of the kept counts (above threshold; linear within a bin of
// edges[k], edges[k + 1]); -1 when none is kept.
double kept_quantile(const std::vector<double>& counts, const std::vector<double>& edges, double threshold, double q,
                     bool* any) {
  double total = 0;
  for (double c : counts) total += c > threshold ? c : 0.0;
  *any = total > 0;
  if (!*any) return 0;
  const double target = q * total;
  double cum = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const double c = counts[k] > threshold ? counts[k] : 0.0;
    if (c > 0 && cum + c >= target) {
      const double f = std::clamp((target - cum) / c, 0.0, 1.0);
      return edges[k] + f * (edges[k + 1] - edges[k]);
    }
    cum += c;
  }
  return edges.back();
}

}  // namespace

std::vector<ColumnBox> estimate_boxes(const RowMatrix& columns, double count_noise, bool secure,
                                      std::uint64_t discrete_scale, const NoiseKey& key, bool magnitude_only,
                                      double last_column_noise) {
  const Eigen::Index n = columns.rows(), C = columns.cols();
  if (secure && C >= static_cast<Eigen::Index>(kReleaseStride))
    throw Error("scaling: a private estimate of " + std::to_string(C) + " columns in secure mode (at most " +
                std::to_string(kReleaseStride - 1) + "): give bounds");
  std::vector<ColumnBox> boxes(static_cast<std::size_t>(C));
  Noise first(key, secure, discrete_scale, kOctaveRelease), second(key, secure, discrete_scale, kLinearRelease);
  Noise high(key, secure, discrete_scale, kHighRelease), paired(key, secure, discrete_scale, kPairRelease);
  std::vector<double> octave_edges(kOctaveBins + 1);
  octave_edges[0] = 0;
  for (int k = 0; k < kOctaveBins; ++k) octave_edges[k + 1] = octave_upper_edge(k);
  for (Eigen::Index c = 0; c < C; ++c) {
    const double sigma = c == C - 1 && last_column_noise > 0 && !secure ? last_column_noise : count_noise;
    // Exact counts (sigma = 0) keep every nonzero count.
    const double t1 = sigma > 0 ? kMagnitudeThreshold * sigma : 0.5;
    const double t2 = sigma > 0 ? kLinearThreshold * sigma : 0.5;
    // The prior's weight in counts: a candidate holding all n records has log
    // likelihood n c / sigma^2 (up to terms alike for all), so prior odds r
    // weigh sigma^2 log(r) / n; it fades as n grows against the noise.
    const double negative_cost =
        sigma > 0 && n > 0 ? sigma * sigma * std::log(kNonNegativeOdds) / static_cast<double>(n) : 0.0;
    if (magnitude_only && static_cast<double>(n) < t1) {
      // No count of n records can clear the threshold (public: n, sigma): one
      // histogram of octave pairs instead, each pair's count one noise draw
      // (the fallback below sums two, sqrt(2) more noise): the side and the
      // pair with the largest noisy count are the box.
      std::vector<double> pairs(2 * kPairs, 0.0);
      for (Eigen::Index i = 0; i < n; ++i) {
        const double v = columns(i, c);
        const int j = std::min(kPairs - 1, (octave_bin(v) + 1) / 2);
        pairs[static_cast<std::size_t>(j + (v < 0 ? kPairs : 0))] += 1;
      }
      paired.add(pairs, sigma);
      for (int k = kPairs; k < 2 * kPairs; ++k) pairs[static_cast<std::size_t>(k)] -= negative_cost;
      const auto best = static_cast<int>(std::max_element(pairs.begin(), pairs.end()) - pairs.begin());
      const int j = best % kPairs;
      // The pair itself: (2^(2j-22), 2^(2j-20)] (pair 0: [0, 2^-20]).
      const double S = octave_upper_edge(2 * j), L = j == 0 ? 0.0 : octave_upper_edge(2 * j - 2);
      const bool at_top = j == kPairs - 1;  // values beyond 2^20 are clamped to it
      boxes[static_cast<std::size_t>(c)] =
          best >= kPairs ? ColumnBox{-S, -L, false, false, at_top} : ColumnBox{L, S, false, false, at_top};
      continue;
    }
    // One histogram over the signed octaves, in two parts: those up to 2^20
    // ([0, K) for x >= 0, [K, 2K) for x < 0: as before the grid reached 2^40)
    // and those above it ([0, H) for x >= 0, [H, 2H) for x < 0), each with its
    // own noise release.
    std::vector<double> counts(2 * kOldBins, 0.0), above(2 * kHighBins, 0.0);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = columns(i, c);
      const int k = octave_bin(v);
      if (k < kOldBins)
        counts[static_cast<std::size_t>(k + (v < 0 ? kOldBins : 0))] += 1;
      else
        above[static_cast<std::size_t>(k - kOldBins + (v < 0 ? kHighBins : 0))] += 1;
    }
    first.add(counts, sigma);
    high.add(above, sigma);
    const auto count = [&](int k, bool minus) {  // octave k's noisy count on one side
      return k < kOldBins ? counts[static_cast<std::size_t>(k + (minus ? kOldBins : 0))]
                          : above[static_cast<std::size_t>(k - kOldBins + (minus ? kHighBins : 0))];
    };
    // The kept octaves: above the threshold, and in the bulk's cluster (the
    // largest kept octave above 0 and the kept ones reached from it across
    // gaps of at most one octave), or octave 0 (exact zeros and values below
    // 2^-20). A lone count of noise above the threshold (about 0.4% of the
    // columns at 4 sigma over 122 bins) far from the bulk would otherwise set
    // the box's end many octaves away: a target's box up to 2^31 for values
    // under 400 (scaling.hpp).
    const auto in_bulk = [&](int k) { return count(k, false) > t1 || count(k, true) > t1; };
    int bulk = -1;
    for (int k = 1; k < kOctaveBins; ++k)
      if (in_bulk(k) &&
          (bulk < 0 || std::max(count(k, false), count(k, true)) > std::max(count(bulk, false), count(bulk, true))))
        bulk = k;
    int lo_k = bulk, hi_k = bulk;
    if (bulk > 0) {
      while (hi_k + 1 < kOctaveBins && (in_bulk(hi_k + 1) || (hi_k + 2 < kOctaveBins && in_bulk(hi_k + 2))))
        hi_k += in_bulk(hi_k + 1) ? 1 : 2;
      while (lo_k - 1 >= 1 && (in_bulk(lo_k - 1) || (lo_k - 2 >= 1 && in_bulk(lo_k - 2))))
        lo_k -= in_bulk(lo_k - 1) ? 1 : 2;
    }
    std::vector<double> magnitude(kOctaveBins, 0.0);
    bool positive = false, negative = false;
    for (int k = 0; k < kOctaveBins; ++k) {
      if (k != 0 && (k < lo_k || k > hi_k)) continue;
      const double p = count(k, false), q = count(k, true);
      if (p > t1) magnitude[static_cast<std::size_t>(k)] += p, positive = true;
      if (q > t1) magnitude[static_cast<std::size_t>(k)] += q, negative = true;
    }
    bool found = false;
    double S = kept_quantile(magnitude, octave_edges, 0.0, 1 - kQuantile, &found);
    // A one-sided box's inner end (step 1 alone): the lowest octave kept,
    // where the kept counts hold kTightShare of the n (public) records; else 0.
    double L = 0;
    if (found) {
      if (magnitude_only) {
        double kept = 0;
        int low = kOctaveBins;
        for (int k = kOctaveBins - 1; k >= 0; --k)
          if (magnitude[static_cast<std::size_t>(k)] > 0) kept += magnitude[static_cast<std::size_t>(k)], low = k;
        if (kept >= kTightShare * static_cast<double>(n)) L = octave_edges[static_cast<std::size_t>(low)];
      }
      // The upper edge of the bin holding the point.
      int k = 0;
      while (k + 1 < kOctaveBins && octave_edges[static_cast<std::size_t>(k + 1)] < S) ++k;
      S = octave_edges[static_cast<std::size_t>(k + 1)];
    } else {
      // No count above the threshold: the upper edge of the pair of adjacent
      // octaves up to 2^20, on either side, with the largest noisy count
      // (where the bulk most likely is), and that side's sign. Only the
      // octaves up to 2^20: a guess among 20 more pairs a side of noise alone
      // would move the boxes of the columns inside [-2^20, 2^20] (scaling.hpp).
      int best = 0;
      const auto pair = [&](int k) {
        const int side = k >= kOldBins - 1 ? kOldBins : 0, j = k - (side ? kOldBins - 1 : 0);
        return counts[static_cast<std::size_t>(side + j)] + counts[static_cast<std::size_t>(side + j + 1)] -
               (side ? negative_cost : 0.0);
      };
      for (int k = 1; k < 2 * (kOldBins - 1); ++k)
        if (pair(k) > pair(best)) best = k;
      negative = best >= kOldBins - 1;
      positive = !negative;
      const int j = negative ? best - (kOldBins - 1) : best;  // the pair's octaves j, j + 1
      S = octave_edges[static_cast<std::size_t>(j + 2)];
      L = octave_edges[static_cast<std::size_t>(j)];
    }
    // The second histogram's domain: the sides that hold records.
    const double a = negative ? -S : 0.0, b = positive ? S : 0.0;
    const bool top = S >= kPublicRange;  // values beyond 2^40 (if any) are clamped
    if (magnitude_only) {                // the sides and the magnitude are the box; one side from L
      // Where octave 0's kept count holds half of the n (public) records, the
      // median is 0: the box is [-S, S], centred on it as step 2 centres its
      // boxes, so that the zeros stay 0 (a mostly dark pixel; scaling.hpp).
      if (found && magnitude[0] >= 0.5 * static_cast<double>(n)) {
        boxes[static_cast<std::size_t>(c)] = {-S, S, found, top};
        continue;
      }
      boxes[static_cast<std::size_t>(c)] = {positive && !negative ? L : a, negative && !positive ? -L : b, found, top};
      continue;
    }
    // Bins: the atom at a (values <= a, the clamped ones included), the 16
    // equal bins of [a, b], the atom at b; an atom's two edges are equal.
    std::vector<double> edges(kLinearBins + 3);
    for (int k = 0; k <= kLinearBins; ++k) edges[static_cast<std::size_t>(k + 1)] = a + (b - a) * k / kLinearBins;
    edges.front() = a;
    edges.back() = b;
    std::vector<double> linear(kLinearBins + 2, 0.0);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = std::clamp(columns(i, c), a, b);
      const int k =
          v <= a   ? 0
          : v >= b ? kLinearBins + 1
                   : 1 + std::clamp(static_cast<int>(std::floor((v - a) / (b - a) * kLinearBins)), 0, kLinearBins - 1);
      linear[static_cast<std::size_t>(k)] += 1;
    }
    second.add(linear, sigma);
    bool any = false;
    double lo = kept_quantile(linear, edges, t2, kQuantile, &any);
    double hi = kept_quantile(linear, edges, t2, 1 - kQuantile, &any);
    double centre = kept_quantile(linear, edges, t2, 0.5, &any);
    // Where the kept counts hold under half of the n (public) records, their
    // points say little: the whole domain instead, centred on its middle.
    double kept = 0;
    for (double v : linear) kept += v > t2 ? v : 0.0;
    if (!any || kept < 0.5 * static_cast<double>(n)) {
      lo = a;
      hi = b;
      centre = 0.5 * (a + b);
    }
    const double width = (b - a) / kLinearBins;
    if (hi - lo < width) {
      const double mid = std::clamp(0.5 * (lo + hi), a + 0.5 * width, b - 0.5 * width);
      lo = mid - 0.5 * width;
      hi = mid + 0.5 * width;
    }
    // The box centred on the median: the map onto [-1, 1] sends the bulk of
    // the column near 0 (a column of mostly zeros keeps its zeros at 0);
    // within [-R, R], R = max(S, 2^20) (the range before it reached 2^40).
    centre = std::clamp(centre, lo, hi);
    const double half = std::max(hi - centre, centre - lo), limit = std::max(S, kOldRange);
    lo = std::max(centre - half, -limit);
    hi = std::min(centre + half, limit);
    boxes[static_cast<std::size_t>(c)] = {lo, hi, found, top};
  }
  return boxes;
}

double automatic_scale_share(Index columns, Index n, const RunOptions& run) {
  constexpr double kMost = 0.25, kLeast = 0.1, kRoom = 0.2;  // 2.5 sigma under kRoom n
  const auto room = [&](double share) { return 2.5 * scale_count_noise(columns, run, share) <= kRoom * n; };
  if (columns <= 0 || n <= 0 || !run.is_private_run()) return kMost;
  if (!room(kMost)) {
    // Few records: up to kBuried, the least share at which step 1's counts
    // (one histogram, sqrt(2) below the two's noise) stand kRead sigma under
    // n, so that half of a column's records in one bin clear 3 sigma.
    constexpr double kBuried = 0.4, kRead = 6.0;
    const auto read = [&](double share) {
      return kRead * scale_count_noise(columns, run, share) / std::sqrt(2.0) <= static_cast<double>(n);
    };
    if (read(kMost)) return kMost;
    if (!read(kBuried)) return kBuried;
    double lo = kMost, hi = kBuried;  // read(hi), not read(lo)
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (read(mid) ? hi : lo) = mid;
    }
    return hi;
  }
  if (room(kLeast)) return kLeast;
  double lo = kLeast, hi = kMost;  // room(hi), not room(lo): the noise falls as the share grows
  for (int i = 0; i < 40; ++i) {
    const double mid = 0.5 * (lo + hi);
    (room(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace dpsosp
