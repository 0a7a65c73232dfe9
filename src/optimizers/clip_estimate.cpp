// Private estimates of G and M (include/dpsosp/clip_estimate.hpp).
#include "dpsosp/clip_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/privacy.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {
namespace {

constexpr double kLow = -20, kHigh = 20;  // log2 of the values searched

// The noisy counts of one run of estimates: Gaussian (float mode) or discrete
// Gaussian on the integers (secure mode), `total` counts in all.
class NoisyCounts {
 public:
  NoisyCounts(const NoiseKey& key, const PrivacyTarget& target, int total, double mu)
      : key_(key), stream_(key, StreamPurpose::kClipEstimate) {
    secure_ = target.noise == NoiseMode::kSecure;
    if (secure_) {
      // rho = total / (2 S^2) <= the target's rho.
      const double rho = privacy::zcdp_rho(target.epsilon, target.delta);
      scale_ = static_cast<std::uint64_t>(std::ceil(std::sqrt(total / (2.0 * rho))));
      if (scale_ < 1) scale_ = 1;
      if (scale_ > exact::kMaxDiscreteSigma) throw Error("estimate_constants: the count noise would pass 2^28");
      sigma_ = static_cast<double>(scale_);
    } else {
      sigma_ = std::sqrt(static_cast<double>(total)) / (mu > 0 ? mu : target.run_gdp_mu());
    }
  }
  double noisy(double count) {
    if (secure_) {
      double z = 0;
      fill_discrete_gaussian(key_, StreamPurpose::kClipEstimate, released_++, scale_, &z, 1, 1);
      return count + z;
    }
    return count + sigma_ * stream_.next();
  }
  double sigma() const { return sigma_; }

 private:
  NoiseKey key_;
  GaussianStream stream_;
  bool secure_ = false;
  std::uint64_t scale_ = 0;
  double sigma_ = 0;
  std::uint32_t released_ = 0;
};

// A record with no value of its own (a zero gradient: no clip norm acts on it,
// no direction to curve along).
constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// The noisy q-quantile of the values by binary search on log2; infinite
// values count as above every midpoint, and of the k kNoValue floor(q k) as
// below every one, so that the quantile is the other values'. A count stays an
// integer (secure mode's discrete noise needs one) that one record moves by at
// most 1: a record turning from kNoValue into a value below moves floor(q k)
// by 0 or -1 and its own count by +1. Returns 2^(upper end).
double noisy_quantile(const std::vector<double>& values, NoisyCounts& counts, double q) {
  std::vector<double> logs;
  logs.reserve(values.size());
  double none = 0;
  for (double v : values) {
    if (std::isnan(v))
      none += 1;
    else
      logs.push_back(std::isinf(v) ? std::numeric_limits<double>::infinity() : std::log2(v));
  }
  double lo = kLow, hi = kHigh;
  const double share = q * static_cast<double>(values.size());
  for (int r = 0; r < kEstimateRounds; ++r) {
    const double mid = 0.5 * (lo + hi);
    double below = std::floor(q * none);
    for (double l : logs) below += l <= mid ? 1.0 : 0.0;
    if (counts.noisy(below) >= share)
      hi = mid;
    else
      lo = mid;
  }
  return std::exp2(hi);
}

}  // namespace

double regression_clip_quantile(Index n, Index d, double mu) {
  const double r = noise_to_signal(n, d, mu);
  if (!(r < kClipQuantileNoisy)) return 0.5;  // infinite at n = 0, NaN at n = d = 0
  if (r <= kClipQuantileQuiet) return kClipQuantileHigh;
  const double f = std::log(kClipQuantileNoisy / r) / std::log(kClipQuantileNoisy / kClipQuantileQuiet);
  return 0.5 + f * (kClipQuantileHigh - 0.5);
}

double few_records_clip_fraction(double ratio) {
  if (!(ratio > kFewRecordsDeep)) return kFewRecordsClipLow;  // NaN too: the smaller clip
  if (ratio >= 2 * kFewRecordsDeep) return kFewRecordsClipHigh;
  return kFewRecordsClipLow * std::pow(kFewRecordsClipHigh / kFewRecordsClipLow, std::log2(ratio / kFewRecordsDeep));
}

Index estimate_records(Index n) {
  const Index floor = std::min<Index>(500, n / 10);
  return std::min<Index>(20000, std::max(floor, n / 50));
}

ConstantsEstimate estimate_constants(const Model& model, const Dataset& data, const IndexList& records, const Vec& x0,
                                     const ConstantsEstimateOptions& what, const PrivacyTarget& target,
                                     const NoiseKey& key, std::uint64_t seed) {
  if (!what.any()) throw Error("estimate_constants: nothing to estimate (G and M both off)");
  if (records.empty()) throw Error("estimate_constants: no records to estimate from");
  if (!(what.g_quantile > 0 && what.g_quantile < 1))
    throw Error("estimate_constants: the G quantile must lie in (0, 1), got " + std::to_string(what.g_quantile));
  target.Validate();
  if (!target.is_private()) throw Error("estimate_constants: needs a private target (a finite epsilon)");
  if (static_cast<Index>(x0.size()) != model.dim())
    throw Error("estimate_constants: x0 has " + std::to_string(x0.size()) + " entries, the model " +
                std::to_string(model.dim()));
  ConstantsEstimate e;
  e.records = records.size();
  e.rounds = kEstimateRounds * ((what.G ? 1 : 0) + (what.M ? 1 : 0));
  if (what.mu > 0 && target.noise == NoiseMode::kSecure)
    throw Error("estimate_constants: a shared estimate (mu given) needs float noise");
  NoisyCounts counts(key, target, e.rounds, what.mu);
  e.count_noise = counts.sigma();
  e.mu = target.noise == NoiseMode::kSecure ? 0.0 : what.mu > 0 ? what.mu : target.run_gdp_mu();
  e.shared = what.mu > 0;
  (void)seed;
  const auto d = static_cast<Eigen::Index>(model.dim());
  Vec g(d), g_moved(d), moved(d);
  std::vector<double> norms, ratios;
  const double h = 1e-3 * std::max(1.0, x0.norm());
  // A model of the table's regression rows (a caller's model is none).
  const ModelInfo* info = find_model_info(model.name());
  const bool regression = info && info->regression;
  for (Index i : records) {
    model.gradient(x0, data, i, g);
    const double norm = g.norm();
    // A regression's record whose target x0 predicts exactly (most of a
    // zero-inflated target centred on its zeros) has a zero gradient and no
    // value of its own. Elsewhere a zero gradient is x0's stationarity (phase
    // retrieval, PCA at their saddle: every record's), and counts as 0. A
    // non-finite gradient counts as above every threshold.
    const bool none = norm == 0 && regression;
    if (what.G) norms.push_back(none ? kNoValue : std::isfinite(norm) ? norm : HUGE_VAL);
    if (what.M) {
      // The record's curvature along its own gradient, the direction it
      // pushes a step: a zero gradient has none.
      if (none) {
        ratios.push_back(kNoValue);
      } else if (!(norm > 0)) {
        ratios.push_back(0.0);
      } else if (!std::isfinite(norm)) {
        ratios.push_back(std::numeric_limits<double>::infinity());
      } else {
        moved = x0 + (h / norm) * g;
        model.gradient(moved, data, i, g_moved);
        const double ratio = (g_moved - g).norm() / h;
        ratios.push_back(std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio);
      }
    }
  }
  if (what.G) e.G = noisy_quantile(norms, counts, what.g_quantile);
  if (what.M) e.M = noisy_quantile(ratios, counts, 0.5);
  e.g_quantile = what.G ? what.g_quantile : 0.0;
  return e;
}

}  // namespace dpsosp
