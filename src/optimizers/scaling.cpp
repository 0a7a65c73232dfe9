// Scale as part of the privacy contract (include/dpsosp/scaling.hpp).
#include "dpsosp/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

constexpr int kLowExponent = -20, kHighExponent = 20;  // the octave grid: public range [-2^20, 2^20]
constexpr int kOctaveBins = kHighExponent - kLowExponent + 1;
constexpr int kLinearBins = 16;
constexpr double kQuantile = 0.02;           // the box spans the 2% to 98% points
constexpr double kMagnitudeThreshold = 4.0;  // counts kept: above 4 sigma (octaves), 2.5 sigma (linear)
constexpr double kLinearThreshold = 2.5;

bool valid(const Interval& b) { return std::isfinite(b.lower) && std::isfinite(b.upper) && b.lower < b.upper; }

std::string show(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

int octave_bin(double v) {
  const double a = std::abs(v);
  if (!(a >= std::ldexp(1.0, kLowExponent))) return 0;
  const int e = std::ilogb(a);  // a in [2^e, 2^(e+1))
  return std::min(kOctaveBins - 1, e - kLowExponent + 1);
}
double octave_upper_edge(int bin) { return std::ldexp(1.0, kLowExponent + bin); }

// Noisy counts of one histogram column by column (the whole matrix one
// release): Gaussian in float mode, discrete Gaussian of scale s in secure mode.
class Noise {
 public:
  Noise(const NoiseKey& key, double sigma, bool secure, std::uint64_t scale, std::uint32_t release)
      : key_(key), stream_(key, StreamPurpose::kScaling, release), sigma_(sigma), secure_(secure), scale_(scale),
        release_(release) {}
  void add(std::vector<double>& counts) {
    if (secure_) {
      std::vector<double> z(counts.size());
      fill_discrete_gaussian(key_, StreamPurpose::kScaling, 100 + release_ * 100000 + next_++, scale_, z.data(),
                             z.size(), 1);
      for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += z[k];
    } else if (sigma_ > 0) {
      for (double& c : counts) c += sigma_ * stream_.next();
    }
  }

 private:
  NoiseKey key_;
  GaussianStream stream_;
  double sigma_;
  bool secure_;
  std::uint64_t scale_;
  std::uint32_t release_, next_ = 0;
};

// The q-point of the kept counts (above threshold; linear within a bin of
// edges[k], edges[k + 1]); -1 when none is kept.
double kept_quantile(const std::vector<double>& counts, const std::vector<double>& edges, double threshold,
                     double q, bool* any) {
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

void ScalingOptions::Validate(Index features) const {
  if (!bounds.empty() && bounds.size() != 1 && static_cast<Index>(bounds.size()) != features)
    throw Error("bounds: expected one interval for every feature or one per feature (" + std::to_string(features) +
                "), got " + std::to_string(bounds.size()));
  for (std::size_t j = 0; j < bounds.size(); ++j)
    if (!valid(bounds[j]))
      throw Error("bounds: " + (bounds.size() == 1 ? std::string() : "feature " + std::to_string(j) + ": ") +
                  "expected finite lower < upper, got " + show(bounds[j].lower) + ":" + show(bounds[j].upper));
  if (y_bounds && !valid(*y_bounds))
    throw Error("y_bounds: expected finite lower < upper, got " + show(y_bounds->lower) + ":" + show(y_bounds->upper));
  if (y_bounds && !target) throw Error("y_bounds: applies to the regression models (linear, cauchy)");
  if (!(share > 0 && share < 1)) throw Error("scale_share: expected a number in (0, 1), got " + show(share));
}

bool scales_target(const std::string& model) { return model == "linear" || model == "cauchy"; }
bool scales_by_default(const std::string& model) {
  return model == "logistic" || model == "sigmoid" || model == "softmax" || model == "mlp" || scales_target(model);
}

std::vector<ColumnBox> estimate_boxes(const RowMatrix& columns, double count_noise, bool secure,
                                      std::uint64_t discrete_scale, const NoiseKey& key) {
  const Eigen::Index n = columns.rows(), C = columns.cols();
  std::vector<ColumnBox> boxes(static_cast<std::size_t>(C));
  Noise first(key, count_noise, secure, discrete_scale, 0), second(key, count_noise, secure, discrete_scale, 1);
  std::vector<double> octave_edges(kOctaveBins + 1);
  octave_edges[0] = 0;
  for (int k = 0; k < kOctaveBins; ++k) octave_edges[k + 1] = octave_upper_edge(k);
  // Exact counts (count_noise = 0) keep every nonzero count.
  const double t1 = count_noise > 0 ? kMagnitudeThreshold * count_noise : 0.5;
  const double t2 = count_noise > 0 ? kLinearThreshold * count_noise : 0.5;
  for (Eigen::Index c = 0; c < C; ++c) {
    std::vector<double> counts(kOctaveBins, 0.0);
    for (Eigen::Index i = 0; i < n; ++i) counts[static_cast<std::size_t>(octave_bin(columns(i, c)))] += 1;
    first.add(counts);
    bool found = false;
    double S = kept_quantile(counts, octave_edges, t1, 1 - kQuantile, &found);
    if (found) {
      // The upper edge of the bin holding the point.
      int k = 0;
      while (k + 1 < kOctaveBins && octave_edges[static_cast<std::size_t>(k + 1)] < S) ++k;
      S = octave_edges[static_cast<std::size_t>(k + 1)];
    } else {
      // No count above the threshold: the upper edge of the pair of adjacent
      // octaves with the largest noisy count (where the bulk most likely is).
      int best = 0;
      for (int k = 1; k + 1 < kOctaveBins; ++k)
        if (counts[static_cast<std::size_t>(k)] + counts[static_cast<std::size_t>(k + 1)] >
            counts[static_cast<std::size_t>(best)] + counts[static_cast<std::size_t>(best + 1)])
          best = k;
      S = octave_edges[static_cast<std::size_t>(best + 2)];
    }
    std::vector<double> edges(kLinearBins + 1);
    for (int k = 0; k <= kLinearBins; ++k) edges[static_cast<std::size_t>(k)] = -S + 2.0 * S * k / kLinearBins;
    std::vector<double> linear(kLinearBins, 0.0);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double v = std::clamp(columns(i, c), -S, S);
      const int k = std::clamp(static_cast<int>(std::floor((v + S) / (2.0 * S) * kLinearBins)), 0, kLinearBins - 1);
      linear[static_cast<std::size_t>(k)] += 1;
    }
    second.add(linear);
    bool any = false;
    double lo = kept_quantile(linear, edges, t2, kQuantile, &any);
    double hi = kept_quantile(linear, edges, t2, 1 - kQuantile, &any);
    if (!any) {
      lo = -S;
      hi = S;
    }
    const double width = 2.0 * S / kLinearBins;
    if (hi - lo < width) {
      const double mid = std::clamp(0.5 * (lo + hi), -S + 0.5 * width, S - 0.5 * width);
      lo = mid - 0.5 * width;
      hi = mid + 0.5 * width;
    }
    boxes[static_cast<std::size_t>(c)] = {lo, hi, found};
  }
  return boxes;
}

Dataset Scaling::apply(const Dataset& data) const {
  const Index n = data.rows(), p = data.cols();
  if (maps_features() && static_cast<Index>(lower.size()) != p)
    throw Error("scaling: the records have " + std::to_string(p) + " features, the scaling " +
                std::to_string(lower.size()));
  RowMatrix z(n, p);
  Vec row(p);
  for (Index i = 0; i < n; ++i) {
    data.row_dense(i, row);
    if (maps_features()) {
      for (Index j = 0; j < p; ++j) {
        const double c = 0.5 * (lower[j] + upper[j]), h = 0.5 * (upper[j] - lower[j]);
        row[j] = (std::clamp(row[j], lower[j], upper[j]) - c) / h;
      }
    }
    if (normalize) {
      const double norm = row.norm();
      if (norm > 0) row /= norm;
    }
    z.row(i) = row.transpose();
  }
  Vec labels = data.has_labels() ? Vec(data.labels().size()) : Vec();
  for (Index i = 0; i < static_cast<Index>(labels.size()); ++i) {
    const double y = data.label(i);
    if (has_target) {
      const double c = 0.5 * (y_lower + y_upper), h = 0.5 * (y_upper - y_lower);
      labels[i] = (std::clamp(y, y_lower, y_upper) - c) / h;
    } else {
      labels[i] = y;
    }
  }
  return Dataset(std::move(z), std::move(labels));
}

double Scaling::target_to_user(double v) const {
  if (!has_target) return v;
  // The target's box is public: a prediction outside it is clamped into it.
  return 0.5 * (y_lower + y_upper) + 0.5 * (y_upper - y_lower) * std::clamp(v, -1.0, 1.0);
}

std::optional<Vec> user_units_point(const Model& model, const Vec& x, const Scaling& s) {
  if (s.normalize) return std::nullopt;
  const Index p = model.features();
  const bool softmax = model.name() == "softmax";
  const bool margin = model.name() == "logistic" || model.name() == "sigmoid" || scales_target(model.name());
  if (!(softmax || margin) || !model.options().fit_intercept) return std::nullopt;
  const Index rows = softmax ? model.options().classes : 1;
  if (static_cast<Index>(x.size()) != rows * (p + 1)) return std::nullopt;
  Vec out = x;
  const double yc = s.has_target ? 0.5 * (s.y_lower + s.y_upper) : 0.0;
  const double yh = s.has_target ? 0.5 * (s.y_upper - s.y_lower) : 1.0;
  for (Index r = 0; r < rows; ++r) {
    double offset = x[rows * p + r];
    for (Index j = 0; j < p; ++j) {
      double w = x[r * p + j];
      if (s.maps_features()) {
        const double c = 0.5 * (s.lower[j] + s.upper[j]), h = 0.5 * (s.upper[j] - s.lower[j]);
        w /= h;
        offset -= w * c;
      }
      out[r * p + j] = yh * w;
    }
    out[rows * p + r] = yc + yh * offset;
  }
  return out;
}

ScaledSummary minimize_scaled(const Model& model, const Dataset& data, const Vec& x0, const RunOptions& options,
                              const ScalingOptions& so) {
  ScaledSummary out;
  so.Validate(model.features());
  if (!so.any()) {
    out.summary = minimize(model, data, x0, options);
    return out;
  }
  Scaling& s = out.scaling;
  s.normalize = so.normalize;
  const Index p = data.cols();
  if (p != model.features())
    throw Error("scaling: the records have " + std::to_string(p) + " features, the model " +
                std::to_string(model.features()));
  const bool estimate_x = so.bounds.empty() && so.estimate_features;
  const bool estimate_y = so.target && !so.y_bounds && so.estimate_target && data.has_labels();
  const Index C = (estimate_x ? p : 0) + (estimate_y ? 1 : 0);
  RunOptions o = options;
  const bool is_private = o.is_private_run();
  if (C > 0) {
    if (o.process_group && o.process_group->size() > 1)
      throw Error("scaling: the private estimate of the scales runs in one process; give bounds (and y_bounds)");
    // Not numbers are refused before any noise is drawn (SPEC section 8).
    check_finite(data, "scaling");
    if (!o.noise_key && is_private) o.noise_key = NoiseKey::generate();
    RowMatrix columns(data.rows(), C);
    Vec row(p);
    for (Index i = 0; i < data.rows(); ++i) {
      data.row_dense(i, row);
      Index c = 0;
      if (estimate_x)
        for (Index j = 0; j < p; ++j) columns(i, c++) = row[j];
      if (estimate_y) columns(i, c) = data.label(i);
    }
    double sigma = 0;
    std::uint64_t discrete = 0;
    const bool secure = is_private && o.privacy->noise == NoiseMode::kSecure;
    if (is_private) {
      const PrivacyTarget t = *o.privacy;
      s.share = so.share;
      if (secure) {
        if (o.poisson()) throw Error("scaling: secure noise with Poisson sampling: give bounds (and y_bounds)");
        const double rho = privacy::zcdp_rho(t.epsilon, t.delta);
        s.rho = so.share * rho;
        // Two histograms of sensitivity^2 = 2C: rho_s = 2C / s^2.
        discrete = static_cast<std::uint64_t>(std::ceil(std::sqrt(2.0 * static_cast<double>(C) / s.rho)));
        discrete = std::max<std::uint64_t>(discrete, 1);
        if (discrete > exact::kMaxDiscreteSigma) throw Error("scaling: the count noise would pass 2^28");
        sigma = static_cast<double>(discrete);
        s.composition = "zcdp";
        o.privacy->epsilon = privacy::zcdp_to_epsilon((1 - so.share) * rho, t.delta);
      } else if (o.poisson()) {
        s.epsilon = so.share * t.epsilon;
        s.delta = 0.5 * t.delta;
        s.mu = privacy::gdp_mu(s.epsilon, s.delta);
        s.composition = "basic";
        o.privacy->epsilon = (1 - so.share) * t.epsilon;
        o.privacy->delta = 0.5 * t.delta;
      } else {
        const double mu = privacy::gdp_mu(t.epsilon, t.delta);
        s.mu = std::sqrt(so.share) * mu;
        s.composition = "gdp";
        o.privacy->epsilon = privacy::gdp_epsilon(std::sqrt(1 - so.share) * mu, t.delta);
      }
      if (!secure) sigma = 2.0 * std::sqrt(static_cast<double>(C)) / s.mu;
    }
    s.count_noise = sigma;
    s.columns = C;
    const std::vector<ColumnBox> boxes =
        estimate_boxes(columns, sigma, secure, discrete, o.noise_key ? *o.noise_key : NoiseKey::generate());
    if (estimate_x) {
      for (Index j = 0; j < p; ++j) {
        s.lower.push_back(boxes[static_cast<std::size_t>(j)].lower);
        s.upper.push_back(boxes[static_cast<std::size_t>(j)].upper);
      }
      s.feature_source = is_private ? "private" : "exact (non-private run)";
    }
    if (estimate_y) {
      s.has_target = true;
      s.y_lower = boxes.back().lower;
      s.y_upper = boxes.back().upper;
      s.target_source = is_private ? "private" : "exact (non-private run)";
    }
  }
  if (!so.bounds.empty()) {
    for (Index j = 0; j < p; ++j) {
      const Interval& b = so.bounds.size() == 1 ? so.bounds[0] : so.bounds[static_cast<std::size_t>(j)];
      s.lower.push_back(b.lower);
      s.upper.push_back(b.upper);
    }
    s.feature_source = "declared";
  }
  if (so.target && so.y_bounds) {
    s.has_target = true;
    s.y_lower = so.y_bounds->lower;
    s.y_upper = so.y_bounds->upper;
    s.target_source = "declared";
  }
  const Dataset unit = s.apply(data);
  // On the unit box a record's gradient and curvature have public bounds: the
  // estimates of G and M are capped at them (post-processing of the estimate).
  if (s.maps_features() || s.normalize) {
    const double r2 = (s.normalize ? 1.0 : static_cast<double>(p)) + (model.options().fit_intercept ? 1.0 : 0.0);
    const std::string& m = model.name();
    double slope = 0, curvature = 0;  // bounds of |phi'| (or ||p - e_y||) and phi''
    if (m == "logistic") slope = 1, curvature = 0.25;
    else if (m == "sigmoid") slope = 0.25, curvature = 0.1;
    else if (m == "softmax") slope = std::sqrt(2.0), curvature = 0.5;
    else if (m == "linear") slope = 1, curvature = 1;
    else if (m == "cauchy") slope = std::sqrt(0.5), curvature = 1;
    if (slope > 0 && (!scales_target(m) || s.has_target)) {
      o.estimate.G_cap = slope * std::sqrt(r2);
      o.estimate.M_cap = curvature * r2;
      // Where the estimate's records are too few for its noise (fewer than 4
      // times the counts' noise at the run's mu: small n, small eps), the
      // public rule instead: G = G_cap / 2, M = M_cap / 4 (docs/parameters.md).
      if (is_private && o.estimate.any() && o.privacy->noise == NoiseMode::kFloat && !o.poisson()) {
        const double mu_r = privacy::gdp_mu(o.privacy->epsilon, o.privacy->delta);
        const int rounds = kEstimateRounds * ((o.estimate.G ? 1 : 0) + (o.estimate.M ? 1 : 0));
        const double noise = std::sqrt(static_cast<double>(rounds)) / mu_r;
        if (static_cast<double>(estimate_records(data.rows())) < 4.0 * noise) {
          if (o.estimate.G) o.constants.G = 0.5 * o.estimate.G_cap;
          if (o.estimate.M) o.constants.M = 0.25 * o.estimate.M_cap;
          o.estimate = ConstantsEstimateOptions{};
          s.public_constants = true;
        }
      }
    }
  }
  const bool supplied = options.noise_key.has_value();
  out.summary = minimize(model, unit, x0, o);
  if (!supplied) out.summary.noise_key_source = "generated";
  // The whole run's guarantee: the estimate composed with the run.
  PrivacyRecord& r = out.summary.privacy;
  if (is_private && !s.composition.empty() && r.is_private()) {
    if (s.composition == "gdp") {
      r.mu = std::sqrt(r.mu * r.mu + s.mu * s.mu);
      r.epsilon = privacy::gdp_epsilon(r.mu, r.delta);
      r.zcdp_rho = 0.5 * r.mu * r.mu;
      r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, r.delta);
    } else if (s.composition == "zcdp") {
      r.zcdp_rho += s.rho;
      r.epsilon = privacy::zcdp_to_epsilon(r.zcdp_rho, r.delta);
      r.epsilon_rdp = r.epsilon;
    } else {
      r.epsilon += s.epsilon;
      r.delta += s.delta;
      if (r.epsilon_pld > 0) r.epsilon_pld += s.epsilon;
      if (r.epsilon_rdp > 0) r.epsilon_rdp += s.epsilon;
    }
  }
  out.x_user = user_units_point(model, out.summary.x, s);
  return out;
}

}  // namespace dpsosp
