// RunOptions' rules that need the data's size, the defaults that depend on it,
// and the numeric rules the front ends check options by (optimizer.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "dpsosp/algorithm.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/options.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {

Index RunOptions::sgd_batch_size(Index n) const { return batch_size ? *batch_size : std::clamp<Index>(n / 10, 1, 256); }

void RunOptions::Validate(Index records) const {
  Validate();
  const std::string n = std::to_string(records);
  if (batch_size && *batch_size > records)
    refuse_option("batch_size", " = " + std::to_string(*batch_size) + ": more than the " + n + " records");
  // delta is the chance that the guarantee fails outright; at 1/n a mechanism
  // that publishes one whole record at random meets it (SPEC section 9).
  if (privacy && privacy->is_private() && records > 0 && privacy->delta >= 1.0 / static_cast<double>(records)) {
    char text[240];
    std::snprintf(text, sizeof text,
                  " = %.4g: not below 1/n = %.4g for the %s records; delta must be well "
                  "below 1/n (at 1/n, publishing one whole record at random meets the guarantee): take %.2g or less",
                  privacy->delta, 1.0 / static_cast<double>(records), n.c_str(), 0.1 / static_cast<double>(records));
    refuse_option("delta", text);
  }
  if (overrides.b && *overrides.b > records)
    refuse_option("overrides.b", " = " + std::to_string(*overrides.b) + ": more than the " + n + " records");
  if (poisson() && records > 0) {
    const double steps =
        epochs.value_or(1.0) * static_cast<double>(records) / static_cast<double>(sgd_batch_size(records));
    if (!(steps <= 1e10))
      refuse_option("epochs", " = " + std::to_string(*epochs) + ": more than 1e10 Poisson steps at batch size " +
                                  std::to_string(sgd_batch_size(records)) + " of " + n + " records");
  }
}

bool choose_default_sampling(RunOptions& o, bool streamed) {
  const AlgorithmInfo& info = algorithm_info(o.algorithm);
  if (!(info.knobs & kKnobSampling) || !o.is_private_run() || o.sampling == Sampling::kOrder) return false;
  const PrivacyTarget& t = *o.privacy;
  // Bands given keep the default: they are the banded Poisson pass's (its
  // report states them). So do epochs, sampling = poisson and the PLD
  // accountant written out: they are the default's own.
  const bool needs_order = t.noise != NoiseMode::kFloat || streamed || o.sample_order || o.overrides.sigma ||
                           o.overrides.noise_multiplier || o.o2.value_or(false) || o.max_phase_length;
  const bool chosen = !o.sampling && !needs_order;
  if (chosen) o.sampling = Sampling::kPoisson;
  if (o.sampling == Sampling::kPoisson) o.default_passes = !o.epochs;
  // Poisson passes of spider-mf-adaptive, chosen or written out, at any number
  // of passes: a replace-one target unless a relation is named (zero-out:
  // Opacus's, to compare like with like). Writing a default out never
  // weakens the guarantee.
  if (o.poisson() && !o.privacy->adjacency) o.privacy->adjacency = Adjacency::kReplaceOne;
  return chosen;
}

Index default_passes(Index n) {
  constexpr Index kPasses = 3, kRecords = 300000;
  return std::clamp<Index>(n > 0 ? kRecords / n : kPasses, 1, kPasses);
}

Index classifier_passes(Index n, Index d, double mu) {
  constexpr double kQuiet = 0.1, kMaxPasses = 30, kSteps = 1000;
  const Index base = default_passes(n);
  if (n <= 0 || d <= 0 || !(mu > 0)) return base;
  const double r = noise_to_signal(n, d, mu);  // the noise warning's ratio
  if (!(r < kQuiet)) return base;
  const double passes = static_cast<double>(base);
  const double steps = passes * static_cast<double>(n) / static_cast<double>(default_o1_batch(n, mu, passes, true));
  const double want = std::min({passes * kQuiet / r, kMaxPasses, passes * kSteps / steps});
  return std::max(base, static_cast<Index>(std::lround(want)));
}

std::string value_rule_text(ValueRule rule) {
  switch (rule) {
    case ValueRule::kFinite: return "a finite number";
    case ValueRule::kPositive: return "a finite number > 0";
    case ValueRule::kNonNegative: return "a finite number >= 0";
    case ValueRule::kPositiveOrInf: return "a number > 0 (or inf)";
    case ValueRule::kOpenUnit: return "a number in (0, 1)";
    case ValueRule::kHalfOpenUnit: return "a number in (0, 1]";
  }
  return "a number";
}

bool satisfies(double v, ValueRule rule) {
  switch (rule) {
    case ValueRule::kFinite: return std::isfinite(v);
    case ValueRule::kPositive: return std::isfinite(v) && v > 0;
    case ValueRule::kNonNegative: return std::isfinite(v) && v >= 0;
    case ValueRule::kPositiveOrInf: return v > 0;  // +inf allowed, NaN refused
    case ValueRule::kOpenUnit: return v > 0 && v < 1;
    case ValueRule::kHalfOpenUnit: return v > 0 && v <= 1;
  }
  return false;
}

std::string count_rule_text(std::uint64_t min, std::uint64_t max) {
  if (max == std::numeric_limits<std::uint64_t>::max()) return "an integer >= " + std::to_string(min);
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string guarantee_text(const PrivacyRecord& p) {
  if (!p.is_private()) return "";
  char text[240];
  std::snprintf(text, sizeof text, "(%.4g, %.3g)-DP for %s adjacency, fixed before the run", p.epsilon, p.delta,
                adjacency_name(p.adjacency).c_str());
  std::string out = text;
  // The other relation's figure, so that runs of either kind compare like with like.
  const bool zero_out = p.adjacency == Adjacency::kZeroOut;
  const double other = zero_out ? p.epsilon_replace_one : p.epsilon_zero_out;
  if (!std::isnan(other)) {
    std::snprintf(text, sizeof text, "; %s: epsilon %.4g", zero_out ? "replace-one" : "zero-out", other);
    out += text;
  }
  return out;
}

std::vector<std::string> privacy_caveats(const PrivacyRecord& p) {
  if (!p.is_private()) return {};
  if (p.noise == NoiseMode::kSecure)
    return {
        "secure noise: every release is a grid multiple with exact discrete Gaussian noise; the sensitivity bound "
        "holds for the clipped sums in exact arithmetic (their floating-point evaluation errs by about 1e-16 "
        "relative, far below the grid), and the run's timing, which depends on the noise, is not covered; see "
        "docs/privacy.md"};
  return {
      "floating-point noise: the Gaussian noise is computed in double precision, and the low-order bits of "
      "floating-point samples can leak information beyond the stated guarantee (Mironov 2012); see "
      "docs/privacy.md; --noise secure closes this"};
}

void check_value(const std::string& option, double value, ValueRule rule, const std::string& shown) {
  if (!satisfies(value, rule)) throw Error(option + ": expected " + value_rule_text(rule) + ", got " + shown);
}

}  // namespace dpsosp
