// The empirical privacy audit (include/dpsosp/audit.hpp, docs/privacy.md).
//
// Method. D and D' differ in one record, the canary. Each run of the algorithm
// on D or D' (own seed and key) gives a report; the attacker computes scores
// from everything the report releases (the final iterate, the trajectory, the
// counts and the epsilon outside `diagnostics`, and whether the run failed at
// all). A test "D' iff score > t" (or "<= t", or naming D instead) has a false
// positive rate FPR on one dataset and a true positive rate TPR on the other.
// (eps, delta)-DP forces TPR <= e^eps FPR + delta for every test and both
// orderings of the pair, so eps >= log((TPR - delta) / FPR). With finite runs
// we use a Clopper-Pearson lower bound on TPR and upper bound on FPR, each at
// level (1 - confidence)/2, so the bound holds with probability >= confidence
// (union bound). The test (score, threshold, direction) is chosen on the first
// half of the runs and measured on the second, so choosing it costs nothing.
#include "dpsosp/audit.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "audit/canaries.hpp"
#include "audit/setup.hpp"
#include "audit/statistics.hpp"
#include "audit/tradeoff.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/privacy.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::audit {
namespace {

using detail::BoundTable;
using detail::count_positive;
using detail::resolved_steps;
using detail::run_key;
using detail::run_seed;
using detail::same_release;
using detail::Setup;
using detail::Test;

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

void AuditOptions::Validate() const {
  std::ostringstream os;
  const bool quadratic = canary == Canary::kQuadraticO2;
  const Index s = resolved_steps(*this);
  const double records = static_cast<double>(batch) * static_cast<double>(s) *
                         static_cast<double>(std::max(dim, canaries)) * (phase_length > 1 ? 2.0 : 1.0);
  const AlgorithmInfo& info = algorithm_info(algorithm);
  const ::dpsosp::detail::AuditHooks& hooks = ::dpsosp::detail::algorithm_row(algorithm).audit;
  // Which algorithms a canary or tampering applies to, from the table.
  const auto having = [](auto member) {
    std::string list;
    for (const AlgorithmInfo& i : algorithm_table())
      if (::dpsosp::detail::algorithm_row(i.id).audit.*member) list += (list.empty() ? "" : ", ") + i.name;
    return list;
  };
  const auto mf_list = [] {
    std::string list;
    for (const AlgorithmInfo& i : algorithm_table())
      if (i.mechanism == MechanismKind::kMatrixFactorization) list += (list.empty() ? "" : ", ") + i.name;
    return list;
  };
  if (!info.is_private)
    os << "algorithm " << info.name << " is not private";
  else if (hooks.linear == nullptr)
    os << "algorithm " << info.name << " has no audit configuration";
  else if (!privacy.is_private())
    os << "epsilon must be finite";
  else if (runs < 4)
    os << "runs must be at least 4, got " << runs;
  else if (runs > 100000000)
    os << "runs must be at most 1e8, got " << runs;
  else if (batch < 1 || batch > 1000000)
    os << "batch must be in [1, 1e6], got " << batch;
  else if (steps > 1000000)
    os << "steps must be in [0, 1e6] (0 = the mode's default), got " << steps;
  else if (dim < 1 || dim > 1000000)
    os << "dim must be in [1, 1e6], got " << dim;
  else if (!(G > 0) || !std::isfinite(G))
    os << "G must be positive and finite, got " << G;
  else if (!(canary_norm >= 1) || !std::isfinite(canary_norm))
    os << "canary_norm must be >= 1 and finite, got " << canary_norm;
  else if (!(confidence > 0 && confidence < 1))
    os << "confidence must lie in (0, 1), got " << confidence;
  else if (threads < 0)
    os << "threads must be >= 0, got " << threads;
  else if (phase_length < 1 || phase_length > 1000000)
    os << "phase_length must be in [1, 1e6], got " << phase_length;
  else if (!(epochs >= 0) || !std::isfinite(epochs))
    os << "epochs must be >= 0 and finite, got " << epochs;
  else if (epochs > 0 && !(info.knobs & kKnobEpochs))
    os << "epochs > 0 applies to " << algorithms_reading(kKnobEpochs) << " only, got " << algorithm_name(algorithm);
  else if ((sampling || bands) && !(info.knobs & kKnobSampling))
    os << (sampling ? "sampling" : "bands") << " applies to " << algorithms_reading(kKnobSampling) << " only, got "
       << info.name;
  else if (bands && sampling_or_default(sampling, epochs) != Sampling::kPoisson)
    os << "bands applies to sampling poisson (the default with epochs > 1), got " << *bands << " with epochs " << epochs
       << (sampling ? " and sampling order" : "");
  else if (bands && *bands < 1)
    os << "bands must be at least 1, got 0";
  else if (epochs > 0 && info.mechanism == MechanismKind::kMatrixFactorization && quadratic)
    os << "epochs for " << info.name << " take O1 steps only (linear or extreme canary), got canary "
       << canary_name(canary);
  else if (epochs > 0 && info.mechanism == MechanismKind::kMatrixFactorization &&
           sampling_or_default(sampling, epochs) == Sampling::kOrder && epochs != std::floor(epochs))
    os << "epochs for " << info.name << " with sampling order are whole passes over the sample order, got " << epochs;
  else if (epochs > 0 && std::ceil(epochs * static_cast<double>(s)) > 1e6)
    os << "epochs * steps (the planned Poisson steps) must be at most 1e6, got " << epochs << " * " << s;
  else if (phase_length > 1 && (!(info.knobs & kKnobPeriod) || quadratic))
    os << "phase_length > 1 applies to " << algorithms_reading(kKnobPeriod)
       << " with a linear or extreme canary only (its O2 batch is "
          "fixed), got "
       << phase_length << " for " << algorithm_name(algorithm) << " with canary " << canary_name(canary);
  else if (quadratic && hooks.quadratic == nullptr)
    os << "canary quadratic-o2 needs an O2 step (" << having(&::dpsosp::detail::AuditHooks::quadratic) << "); "
       << info.name << " has none";
  else if (quadratic && steps != 0 && steps != 2)
    os << "canary quadratic-o2 runs exactly 2 steps (one O1, one O2): steps must be 0 (default) or 2, got " << steps;
  else if (quadratic && !(canary_norm > 1))
    os << "canary quadratic-o2 needs canary_norm > 1 (else its O2 clip never binds), got " << canary_norm;
  else if (canary == Canary::kExtreme && !(canary_norm * G >= 0x1p-20 && canary_norm * G <= 0x1p20))
    os << "canary extreme needs canary_norm * G in [2^-20, 2^20] (the model scales records by 2^1000), got "
       << canary_norm * G;
  else if (tampering == Tampering::kUnclippedO2 && (!quadratic || hooks.unclipped_o2 == nullptr))
    os << "tampering unclipped-o2 applies to " << having(&::dpsosp::detail::AuditHooks::unclipped_o2)
       << " with canary quadratic-o2 only (the other algorithms tie the O2 noise or sensitivity to M), got "
       << algorithm_name(algorithm) << " with canary " << canary_name(canary);
  else if (tampering == Tampering::kClippingOff && quadratic)
    os << "tampering clip-off raises the O1 clip G, which the quadratic-o2 canary never meets (use unclipped-o2)";
  else if (tampering == Tampering::kExtremeFails && canary != Canary::kExtreme)
    os << "tampering extreme-fails needs canary extreme, got " << canary_name(canary);
  else if (!(test_level > 0 && test_level < 1))
    os << "test_level must lie in (0, 1), got " << test_level;
  else if (canaries > 4096)
    os << "canaries must be in [0, 4096] (0 = the mode's default), got " << canaries;
  else if (canaries > 1 && !detail::poisson_path(*this))
    os << "canaries > 1 applies to the Poisson paths only (dpsgd or spider-mf-adaptive with epochs and Poisson "
          "sampling), got "
       << canaries;
  else if (tampering == Tampering::kRateHalved && !detail::poisson_path(*this))
    os << "tampering rate-half applies to the Poisson paths only (dpsgd or spider-mf-adaptive with epochs and "
          "Poisson sampling)";
  else if (tampering == Tampering::kColumnNormHalved && info.mechanism != MechanismKind::kMatrixFactorization)
    os << "tampering column-norm-half applies to the matrix-factorization mechanism only (" << mf_list() << "), got "
       << info.name;
  else if (tampering == Tampering::kDepthUnderstated &&
           (info.mechanism != MechanismKind::kTree || quadratic || !(info.knobs & kKnobPeriod) || phase_length < 2))
    os << "tampering depth-understated needs a tree of depth >= 2: " << algorithms_reading(kKnobPeriod)
       << " with phase_length >= 2 and a linear or extreme canary, got " << info.name << " with phase_length "
       << phase_length << " and canary " << canary_name(canary);
  else if (tampering == Tampering::kSensitivityHalved && (quadratic || canary_norm < 2))
    os << "tampering sensitivity-half raises the O1 clip to 2G: it needs a linear or extreme canary with "
          "canary_norm >= 2, got canary "
       << canary_name(canary) << " with canary_norm " << canary_norm;
  else if (caller && canary != Canary::kLinear)
    os << "caller: the caller's model is audited with the linear canary only (its loss <z, x>), got canary "
       << canary_name(canary);
  else if (records > 1e8)
    os << "batch * steps * dim must be at most 1e8 (the records are stored densely), got " << batch << " * " << s
       << " * " << dim;
  if (!os.str().empty()) throw Error("AuditOptions: " + os.str());
  privacy.Validate();
}

RunRandomness run_randomness(const AuditOptions& options, int dataset, Index run) {
  return {run_seed(options.seed, options.algorithm, dataset, run),
          run_key(options.seed, options.algorithm, dataset, run)};
}

Summary run_once(const AuditOptions& options, bool with_canary, const RunRandomness& randomness) {
  const Setup setup(options);
  return setup.run(with_canary, randomness);
}

AuditResult run_audit(const AuditOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Setup setup(options);
  const AuditOptions& a = setup.a;
  const std::size_t k = setup.names.size();
  const std::size_t replay =
      static_cast<std::size_t>(std::find(setup.names.begin(), setup.names.end(), "replay") - setup.names.begin());
  const bool published = a.tampering == Tampering::kPublishedKey;

  const Index runs = a.runs;
  // scores[ds][i * k + j]: score j of run i on D (ds = 0) or D' (ds = 1).
  std::vector<double> scores[2] = {std::vector<double>(runs * k), std::vector<double>(runs * k)};
  std::vector<double> reported[2] = {std::vector<double>(runs, 0.0), std::vector<double>(runs, 0.0)};
  std::vector<char> failed[2] = {std::vector<char>(runs, 0), std::vector<char>(runs, 0)};
  // Poisson paths: lr[ds][i * m + j], the likelihood-ratio statistic of canary j in run i.
  const bool curve = setup.poisson || setup.banded;
  const std::size_t m = curve ? static_cast<std::size_t>(a.canaries) : 0;
  std::vector<double> lr[2] = {std::vector<double>(runs * m), std::vector<double>(runs * m)};
  // A caller's callbacks are never called by two threads at once.
  const int threads = a.caller ? 1 : a.threads > 0 ? a.threads : omp_get_max_threads();
  // The failure message of the smallest (run, dataset), whatever the thread count.
  std::string first_failure;
  Index first_failure_at = std::numeric_limits<Index>::max();
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(runs); ++i) {
    const std::size_t run = static_cast<std::size_t>(i);
    for (int ds = 0; ds < 2; ++ds) {
      double* out = scores[ds].data() + run * k;
      const RunRandomness randomness = run_randomness(a, ds, static_cast<Index>(i));
      std::string message;
      try {
        const Summary s = setup.run(ds == 1, randomness);
        const std::vector<double> v = setup.scores(s);
        std::copy(v.begin(), v.end(), out);
        if (curve) {
          const std::vector<double> l = setup.lr_statistics(s);
          std::copy(l.begin(), l.end(), lr[ds].data() + run * m);
        }
        reported[ds][run] = s.privacy.epsilon;
        if (published) {
          // The attacker holds the seed and the key: it replays the run on D
          // and on D' and sees which reproduces the release bit for bit.
          int match[2] = {0, 0};
          for (int w = 0; w < 2; ++w) {
            try {
              match[w] = same_release(setup.run(w == 1, randomness), s) ? 1 : 0;
            } catch (...) {
              match[w] = 0;
            }
          }
          out[replay] = match[1] - match[0];
        }
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
        message = "a non-standard exception";
      }
      if (!message.empty()) {
        // A failed run is an outcome the attacker sees: every score +inf.
        std::fill(out, out + k, kInf);
        std::fill(lr[ds].data() + run * m, lr[ds].data() + (run + 1) * m, kInf);
        failed[ds][run] = 1;
        const Index at = 2 * static_cast<Index>(i) + static_cast<Index>(ds);
#pragma omp critical(dpsosp_audit_failure)
        if (at < first_failure_at) {
          first_failure_at = at;
          first_failure = message;
        }
      }
    }
  }

  AuditResult r;
  r.algorithm = algorithm_name(a.algorithm);
  r.tampering = tampering_name(a.tampering);
  r.canary = canary_name(a.canary);
  r.adjacency = adjacency_name(setup.reference.privacy.adjacency);
  r.claimed_epsilon = setup.claim_epsilon;
  r.delta = a.privacy.delta;
  r.claimed_mu = setup.claim_mu;
  r.confidence = a.confidence;
  r.scores = setup.names;
  r.n = setup.n;
  r.dim = a.dim;
  r.steps = a.steps;
  r.phase_length = a.phase_length;
  r.epochs = a.epochs;
  r.first_failure = first_failure;
  for (Index i = 0; i < runs; ++i) {
    for (int ds = 0; ds < 2; ++ds) {
      if (failed[ds][i]) {
        ++(ds == 0 ? r.failures_without : r.failures_with);
      } else {
        r.reported_epsilon = std::max(r.reported_epsilon, reported[ds][i]);
      }
    }
  }
  const double alpha = (1 - a.confidence) / 2;  // two Clopper-Pearson bounds, union bound
  BoundTable table(a.privacy.delta, alpha);

  const Index half = runs / 2;
  auto column = [&](int ds, std::size_t j, Index from, Index to) {
    std::vector<double> v;
    v.reserve(to - from);
    for (Index i = from; i < to; ++i) v.push_back(scores[ds][i * k + j]);
    return v;
  };
  Test test;
  for (std::size_t j = 0; j < k; ++j) detail::choose_test(j, column(0, j, 0, half), column(1, j, 0, half), table, test);
  std::vector<double> measure0 = column(0, test.score, half, runs), measure1 = column(1, test.score, half, runs);
  std::sort(measure0.begin(), measure0.end());
  std::sort(measure1.begin(), measure1.end());
  r.score = setup.names[test.score];
  r.threshold = test.threshold;
  r.reject_high = test.reject_high;
  r.positive_is_canary = test.positive_is_with;
  r.measure_runs = measure0.size();
  const std::vector<double>& alt_scores = test.positive_is_with ? measure1 : measure0;
  const std::vector<double>& null_scores = test.positive_is_with ? measure0 : measure1;
  r.true_positives = count_positive(alt_scores, test.threshold, test.reject_high);
  r.false_positives = count_positive(null_scores, test.threshold, test.reject_high);
  r.tpr_lower = clopper_pearson_lower(r.true_positives, alt_scores.size(), alpha);
  r.fpr_upper = clopper_pearson_upper(r.false_positives, null_scores.size(), alpha);
  r.epsilon_lower_bound = epsilon_lower_bound(r.true_positives, alt_scores.size(), r.false_positives,
                                              null_scores.size(), a.privacy.delta, alpha);

  // mu estimate: the "trajectory" score's mean shift over the pooled standard
  // deviation, from the runs that did not fail.
  double mean[2] = {0, 0}, ss = 0;
  Index count[2] = {0, 0};
  for (int ds = 0; ds < 2; ++ds) {
    for (Index i = 0; i < runs; ++i) {
      if (failed[ds][i]) continue;
      mean[ds] += scores[ds][i * k];
      ++count[ds];
    }
    if (count[ds] > 0) mean[ds] /= static_cast<double>(count[ds]);
  }
  for (int ds = 0; ds < 2; ++ds)
    for (Index i = 0; i < runs; ++i)
      if (!failed[ds][i]) ss += (scores[ds][i * k] - mean[ds]) * (scores[ds][i * k] - mean[ds]);
  if (count[0] > 0 && count[1] > 0 && count[0] + count[1] > 2) {
    const double sd = std::sqrt(ss / static_cast<double>(count[0] + count[1] - 2));
    r.empirical_mu = sd > 0 ? (mean[1] - mean[0]) / sd : kInf;
  } else {
    r.empirical_mu = std::numeric_limits<double>::quiet_NaN();
  }

  // The claim's shape. GDP paths: the lower bound on mu from every run that
  // did not fail. Poisson paths: the trade-off test over (run, canary) pairs,
  // the first half of the runs choosing the threshold.
  if (r.claimed_mu > 0) r.mu_lower_bound = detail::mu_lower_bound(r.empirical_mu, count[0], count[1], a.test_level);
  if (curve) {
    const detail::ClaimedCurve claimed(setup.claim_q, setup.claim_z, setup.claim_steps);
    const auto part = [&](int ds, Index from, Index to) {
      return std::vector<double>(lr[ds].begin() + static_cast<std::ptrdiff_t>(from * m),
                                 lr[ds].begin() + static_cast<std::ptrdiff_t>(to * m));
    };
    r.tradeoff = detail::tradeoff_test(part(0, 0, half), part(1, 0, half), part(0, half, runs), part(1, half, runs),
                                       claimed, a.test_level);
    r.tradeoff->canaries = static_cast<Index>(m);
    r.tradeoff->sampling_rate = setup.claim_q;
    r.tradeoff->noise_multiplier = setup.claim_z;
    r.tradeoff->steps = setup.claim_steps;
  }
  const auto flag = [&](bool fired, const char* by) {
    if (!fired) return;
    r.violation = true;
    r.violation_by += (r.violation_by.empty() ? "" : "+") + std::string(by);
  };
  flag(r.epsilon_lower_bound > r.claimed_epsilon, "epsilon");
  flag(r.claimed_mu > 0 && r.mu_lower_bound > r.claimed_mu, "mu");
  flag(r.tradeoff && r.tradeoff->tpr_lower > r.tradeoff->claimed_tpr_max, "trade-off");
  r.false_alarm = (1 - a.confidence) + a.test_level;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dpsosp::audit
