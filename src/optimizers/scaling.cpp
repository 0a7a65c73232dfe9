// Scale as part of the privacy contract (include/dpsosp/scaling.hpp).
#include "dpsosp/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <tuple>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

constexpr double kTargetWeight = 0.25;  // the least part of mu_s^2 a regression target takes (scaling.hpp)

bool valid(const Interval& b) { return std::isfinite(b.lower) && std::isfinite(b.upper) && b.lower < b.upper; }

std::string show(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

double noise_to_signal(Index n, Index d, double mu) {
  return std::sqrt(static_cast<double>(d)) / (static_cast<double>(n) * mu);
}

std::string noise_warning(Index n, Index d, const RunOptions& run, bool regression) {
  if (!run.is_private_run()) return {};
  const double mu = privacy::gdp_mu(run.privacy->epsilon, run.privacy->delta);
  const double r = noise_to_signal(n, d, mu);
  const double limit = regression ? kNoiseSwampsRegression : kNoiseSwamps;
  if (r < limit) return {};
  char buf[128];
  std::snprintf(buf, sizeof buf, ": sqrt(d) / (n mu) = %.3g >= %g%s for n = ", r, limit,
                regression ? " (regression)" : "");
  return std::string(kNoiseSwampsWords) + buf + std::to_string(n) + ", d = " + std::to_string(d) +
         " at the run's mu = " + std::to_string(mu).substr(0, 5) +
         (regression ? " (expect R^2 near or below 0, no better than predicting the mean; more records, a larger "
                       "epsilon, or declared bounds and y_bounds help)"
                     : " (expect little better than guessing; more records or a larger epsilon help)");
}

void ScalingOptions::Validate(Index features) const {
  if (!bounds.empty() && bounds.size() != 1 && static_cast<Index>(bounds.size()) != features)
    throw OptionError("bounds", ": expected one interval for every feature or one per feature (" +
                                    std::to_string(features) + "), got " + std::to_string(bounds.size()));
  for (std::size_t j = 0; j < bounds.size(); ++j)
    if (!valid(bounds[j]))
      throw OptionError("bounds", ": " + (bounds.size() == 1 ? std::string() : "feature " + std::to_string(j) + ": ") +
                                      "expected finite lower < upper, got " + show(bounds[j].lower) + ":" +
                                      show(bounds[j].upper));
  if (!public_boxes.empty() && static_cast<Index>(public_boxes.size()) != features)
    throw Error("scaling: public boxes for " + std::to_string(public_boxes.size()) + " features, the records have " +
                std::to_string(features));
  for (const std::optional<Interval>& b : public_boxes)
    if (b && !valid(*b)) throw Error("scaling: a public box is not finite lower < upper");
  if (y_bounds && !valid(*y_bounds))
    throw OptionError("y_bounds",
                      ": expected finite lower < upper, got " + show(y_bounds->lower) + ":" + show(y_bounds->upper));
  if (y_bounds && !target) throw OptionError("y_bounds", ": applies to the regression models (linear, cauchy)");
  if (!(share > 0 && share < 1)) throw OptionError("scale_share", ": expected a number in (0, 1), got " + show(share));
}

// Poisson-sampled runs under the PLD accountant compose the estimate's
// Gaussian into their own PLD (PrivacyTarget::prior_mu); under RDP the two
// compose by basic composition.
static bool basic_composition(const RunOptions& run) {
  return run.poisson() && run.accountant.value_or(Accountant::kPld) != Accountant::kPld;
}

double scale_count_noise(Index columns, const RunOptions& run, double share) {
  if (!run.is_private_run() || columns <= 0) return 0;
  const PrivacyTarget& t = *run.privacy;
  const double C = static_cast<double>(columns);
  if (t.noise == NoiseMode::kSecure) {
    const double rho_s = share * privacy::zcdp_rho(t.epsilon, t.delta);
    return std::max(1.0, std::ceil(std::sqrt(2.0 * C / rho_s)));
  }
  const double mu_s = basic_composition(run) ? privacy::gdp_mu(share * t.epsilon, 0.5 * t.delta)
                                             : std::sqrt(share) * privacy::gdp_mu(t.epsilon, t.delta);
  return 2.0 * std::sqrt(C) / mu_s;
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
  bool estimate_x = so.bounds.empty() && so.estimate_features;
  bool estimate_y = so.target && !so.y_bounds && so.estimate_target && data.has_labels();
  RunOptions o = options;
  const bool is_private = o.is_private_run();
  std::vector<std::string> notes;  // why scale "auto" left something as it is; clamped columns
  if (estimate_x && data.is_sparse()) {
    if (!so.automatic)
      throw Error(
          "scaling: a private scale of sparse records would make them dense (0 maps off 0): scale them "
          "beforehand from public knowledge, or run them as they are");
    estimate_x = false;  // the documented default for sparse records: as they are
  }
  // Whether the counts can stand out of their noise (public: n, the columns, the budget).
  const auto too_noisy = [&](Index columns) {
    if (!is_private || columns == 0) return false;
    const double sigma = scale_count_noise(columns, o, so.share);
    return sigma >= static_cast<double>(data.rows());
  };
  // The features estimated: those without a public box (a one-hot feature's [0, 1]).
  std::vector<Index> estimated;
  for (Index j = 0; j < p; ++j)
    if (so.public_boxes.empty() || !so.public_boxes[static_cast<std::size_t>(j)]) estimated.push_back(j);
  const auto columns_of = [&] {
    return (estimate_x ? static_cast<Index>(estimated.size()) : 0) + (estimate_y ? 1 : 0);
  };
  if (too_noisy(columns_of())) {
    const Index asked = columns_of();
    if (!so.automatic)
      throw Error(
          "scaling: a private estimate of " + std::to_string(asked) + " scales needs more records than " +
          std::to_string(data.rows()) +
          " at this budget (its counts' noise sigma >= n: not even all "
          "records in one bin would stand out): give bounds (and y_bounds), a larger epsilon or a larger scale share");
    if (estimate_x) {
      estimate_x = false;
      notes.push_back("scale: the " + std::to_string(p) +
                      " features run as they are: a private estimate of their "
                      "scales needs more records than " +
                      std::to_string(data.rows()) +
                      " at this budget (its "
                      "counts' noise sigma >= n); give bounds to scale them");
    }
    if (estimate_y && too_noisy(columns_of())) {
      estimate_y = false;
      notes.push_back(
          "scale: the target runs as it is: a private estimate of its interval needs more records "
          "than " +
          std::to_string(data.rows()) + " at this budget; give y_bounds");
    }
  }
  const Index C = columns_of();
  std::vector<ColumnBox> boxes;  // the estimated columns': features (as in `estimated`), then the target
  const double share = so.automatic_share && !estimate_y ? automatic_scale_share(C, data.rows(), options) : so.share;
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
        for (const Index j : estimated) columns(i, c++) = row[j];
      if (estimate_y) columns(i, c) = data.label(i);
    }
    double sigma = 0;
    std::uint64_t discrete = 0;
    const bool secure = is_private && o.privacy->noise == NoiseMode::kSecure;
    if (is_private) {
      const PrivacyTarget t = *o.privacy;
      s.share = share;
      if (secure) {
        if (o.poisson()) throw Error("scaling: secure noise with Poisson sampling: give bounds (and y_bounds)");
        const double rho = privacy::zcdp_rho(t.epsilon, t.delta);
        s.rho = share * rho;
        s.composition = "zcdp";
        o.privacy->epsilon = privacy::zcdp_to_epsilon((1 - share) * rho, t.delta);
      } else if (o.poisson() && !basic_composition(o)) {
        // The run's PLD with the estimate's Gaussian composed in, calibrated to
        // the whole target; a G/M estimate takes the GDP remainder.
        s.mu = std::sqrt(share) * privacy::gdp_mu(t.epsilon, t.delta);
        s.composition = "pld";
        o.privacy->prior_mu = s.mu;
      } else if (o.poisson()) {
        s.epsilon = share * t.epsilon;
        s.delta = 0.5 * t.delta;
        s.mu = privacy::gdp_mu(s.epsilon, s.delta);
        s.composition = "basic";
        o.privacy->epsilon = (1 - share) * t.epsilon;
        o.privacy->delta = 0.5 * t.delta;
      } else {
        const double mu = privacy::gdp_mu(t.epsilon, t.delta);
        s.mu = std::sqrt(share) * mu;
        s.composition = "gdp";
        o.privacy->epsilon = privacy::gdp_epsilon(std::sqrt(1 - share) * mu, t.delta);
      }
      // Two histograms: sigma = 2 sqrt(C) / mu_s (secure: the discrete scale of rho_s = 2C / s^2).
      sigma = scale_count_noise(C, options, share);
      if (secure) {
        if (sigma > static_cast<double>(exact::kMaxDiscreteSigma))
          throw Error("scaling: the count noise would pass 2^28");
        discrete = static_cast<std::uint64_t>(sigma);
      }
    }
    // Step 2 unreadable at this noise (public: n, C, the budget): step 1 alone,
    // one histogram, its noise sqrt(2) smaller for the same mu_s (rho_s).
    const bool one = is_private && 2.5 * sigma >= 0.25 * static_cast<double>(data.rows());
    if (one) {
      if (secure) {
        discrete = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(std::ceil(std::sqrt(static_cast<double>(C) / s.rho))));
        sigma = static_cast<double>(discrete);
      } else {
        sigma = std::sqrt(2.0 * static_cast<double>(C)) / s.mu;
      }
    }
    s.histograms = one ? 1 : 2;
    s.columns = C;
    // The target's part of mu_s^2 (scaling.hpp): w = max(1/C, 1/4) of it.
    double target_sigma = 0;
    if (is_private && !secure && estimate_x && estimate_y && C > 1) {
      const double c = static_cast<double>(C), w = std::max(1.0 / c, kTargetWeight);
      target_sigma = sigma / std::sqrt(c * w);
      sigma *= std::sqrt((c - 1) / (c * (1 - w)));
      s.target_count_noise = target_sigma;
    }
    s.count_noise = sigma;
    boxes = estimate_boxes(columns, sigma, secure, discrete, o.noise_key ? *o.noise_key : NoiseKey::generate(), one,
                           target_sigma);
    // A column whose 98% point fell in the public range's top octave: its
    // values beyond it are clamped (post-processing of the noisy counts).
    // So is one whose octave pairs (few records) chose their top pair.
    const auto beyond = [&](const ColumnBox& b) {
      return b.top ? " reaches the top octave of the private estimate's public range: its values beyond +-2^40 (" +
                         show(kScaleRangeTop) + "), if any, are clamped to it; declare "
                   : " reaches the top of the few-records estimate's octave pairs: its values beyond +-2^20 (" +
                         show(std::ldexp(1.0, 20)) + "), if any, are clamped to it; declare ";
    };
    for (std::size_t k = 0; estimate_x && k < estimated.size(); ++k)
      if (boxes[k].top || boxes[k].pairs_top)
        notes.push_back("scale: feature " + std::to_string(estimated[k]) + " (0-based)" + beyond(boxes[k]) +
                        "its bounds (bounds)");
    if (estimate_y) {
      s.has_target = true;
      s.y_lower = boxes.back().lower;
      s.y_upper = boxes.back().upper;
      if (boxes.back().top || boxes.back().pairs_top)
        notes.push_back("scale: the target" + beyond(boxes.back()) + "its interval (y_bounds)");
      s.target_source = is_private ? "private" : "exact (non-private run)";
    }
  }
  if (estimate_x) {  // each feature's box: estimated, or its public one
    const std::string estimate = is_private ? "private" : "exact (non-private run)";
    std::size_t k = 0;
    for (Index j = 0; j < p; ++j) {
      const std::optional<Interval> known =
          so.public_boxes.empty() ? std::nullopt : so.public_boxes[static_cast<std::size_t>(j)];
      s.lower.push_back(known ? known->lower : boxes[k].lower);
      s.upper.push_back(known ? known->upper : boxes[k].upper);
      s.feature_sources.push_back(known ? "public (one-hot)" : estimate);
      if (!known) ++k;
    }
    s.feature_source = estimated.empty() ? "public" : estimate;
  }
  if (!so.bounds.empty()) {
    for (Index j = 0; j < p; ++j) {
      const Interval& b = so.bounds.size() == 1 ? so.bounds[0] : so.bounds[static_cast<std::size_t>(j)];
      s.lower.push_back(b.lower);
      s.upper.push_back(b.upper);
      s.feature_sources.push_back("declared");
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
    if (m == "logistic")
      slope = 1, curvature = 0.25;
    else if (m == "sigmoid")
      slope = 0.25, curvature = 0.1;
    else if (m == "softmax")
      slope = std::sqrt(2.0), curvature = 0.5;
    else if (m == "linear")
      slope = 1, curvature = 1;
    else if (m == "cauchy")
      slope = std::sqrt(0.5), curvature = 1;
    if (slope > 0 && (!model_info(m).regression || s.has_target)) {
      o.estimate.G_cap = slope * std::sqrt(r2);
      o.estimate.M_cap = curvature * r2;
      // Where the estimate's records are too few for its noise (fewer than 4
      // times the counts' noise at the run's mu: small n, small eps), the
      // public rule instead: G = G_cap / 4 down to G_cap / 6 deep in the noise
      // (few_records_clip_fraction), M = M_cap / 4. The caps are the box's
      // corner, far beyond most records' gradient and curvature; G at half the
      // cap put twice the noise on every step (docs/parameters.md, "Few
      // records").
      if (is_private && o.estimate.any() && o.privacy->noise == NoiseMode::kFloat) {
        const double mu_r = o.privacy->run_gdp_mu();
        const int rounds = kEstimateRounds * ((o.estimate.G ? 1 : 0) + (o.estimate.M ? 1 : 0));
        const double noise = std::sqrt(static_cast<double>(rounds)) / mu_r;
        const double ratio = static_cast<double>(estimate_records(data.rows())) / (4.0 * noise);
        if (ratio < 1.0) {
          if (o.estimate.G) o.constants.G = few_records_clip_fraction(ratio) * o.estimate.G_cap;
          if (o.estimate.M) o.constants.M = 0.25 * o.estimate.M_cap;
          o.estimate = ConstantsEstimateOptions{};
          s.public_constants = true;
        }
      }
    }
  }
  // A classifier's default passes on a scaled table: more where the noise is
  // small (public: n, d, the target; classifier_passes).
  const ModelInfo* info = find_model_info(model.name());
  if (is_private && (s.maps_features() || s.normalize) && !o.epochs && info && (info->classifier || info->binary))
    o.default_epochs = static_cast<double>(
        classifier_passes(data.rows(), model.dim(), privacy::gdp_mu(o.privacy->epsilon, o.privacy->delta)));
  const bool supplied = options.noise_key.has_value();
  out.summary = minimize(model, unit, x0, o);
  std::tie(out.summary.diagnostics.outside_box, out.summary.diagnostics.target_outside_box) = s.outside_box(data);
  if (!supplied) out.summary.noise_key_source = "generated";
  // The whole run's guarantee: the estimate composed with the run.
  PrivacyRecord& r = out.summary.privacy;
  if (is_private && !s.composition.empty() && r.is_private()) {
    if (s.composition == "gdp") {
      // Zero-out: the optimizer's releases at mu / 2, a G/M estimate's counts
      // (other records) at theirs, each with the histograms on all records.
      const double estimate_mu = out.summary.estimate ? out.summary.estimate->mu : 0.0;
      const double zero_out_mu = std::max(0.5 * r.mu, estimate_mu);
      r.epsilon_zero_out = privacy::gdp_epsilon(std::sqrt(zero_out_mu * zero_out_mu + s.mu * s.mu), r.delta);
      r.mu = std::sqrt(r.mu * r.mu + s.mu * s.mu);
      r.epsilon = privacy::gdp_epsilon(r.mu, r.delta);
      r.epsilon_replace_one = r.epsilon;
      r.zcdp_rho = 0.5 * r.mu * r.mu;
      r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, r.delta);
    } else if (s.composition == "pld") {
      // Composed in the run's own accounting (PrivacyTarget::prior_mu).
    } else if (s.composition == "zcdp") {
      r.zcdp_rho += s.rho;
      r.epsilon = privacy::zcdp_to_epsilon(r.zcdp_rho, r.delta);
      r.epsilon_rdp = r.epsilon_replace_one = r.epsilon_zero_out = r.epsilon;
    } else {
      // Basic composition under either relation: the histograms' sigma is for
      // their replace-one sensitivity, which bounds the zero-out one.
      r.epsilon += s.epsilon;
      r.delta += s.delta;
      if (r.epsilon_pld > 0) r.epsilon_pld += s.epsilon;
      if (r.epsilon_rdp > 0) r.epsilon_rdp += s.epsilon;
      r.epsilon_replace_one += s.epsilon;
      r.epsilon_zero_out += s.epsilon;
    }
  }
  out.x_user = user_units_point(model, out.summary.x, s);
  for (const std::string& note : notes) out.summary.warnings.push_back(note);
  if (is_private) {
    const std::string w = noise_warning(data.rows(), model.dim(), o, model_info(model.name()).regression);
    if (!w.empty()) out.summary.warnings.push_back(w);
  }
  return out;
}

}  // namespace dpsosp
