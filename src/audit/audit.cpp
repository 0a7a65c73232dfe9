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

#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/privacy.hpp"
#include "audit/canaries.hpp"
#include "audit/statistics.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::audit {
namespace {

using detail::BoundTable;
using detail::LinearCanaryModel;
using detail::QuadraticCanaryModel;
using detail::Test;
using detail::count_positive;
using detail::run_key;
using detail::run_seed;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_release(const Summary& a, const Summary& b) {
  auto same = [](const Vec& u, const Vec& v) { return u.size() == v.size() && (u.array() == v.array()).all(); };
  if (!same(a.x, b.x) || a.trajectory.size() != b.trajectory.size()) return false;
  for (std::size_t t = 0; t < a.trajectory.size(); ++t)
    if (!same(a.trajectory[t], b.trajectory[t])) return false;
  return true;
}

// Everything one audit's runs share: the model, the configurations, the
// datasets' shape and the attacker's scores.
struct Setup {
  AuditOptions a;  // steps resolved
  bool poisson = false;
  bool tree = false;  // tree noise (spider-tree-adaptive, spider-tree-periodic)
  Index n = 0;
  Index canary_position = 0;  // in the sample order (single pass); row 0 for Poisson
  double M = 1.0;             // the honest O2 smoothness constant
  double max_step = kInf;     // spider-tree-periodic's O2 step bound 2G/M
  std::unique_ptr<Model> model;
  RunOptions honest, audited;
  Summary reference;  // the honest configuration on all-zero records: the claim
  std::vector<std::string> names;

  explicit Setup(const AuditOptions& options);
  // D (with_canary = false) or D' for a run whose public seed is `seed`;
  // null = every record zero (the reference).
  Dataset data(bool with_canary, std::uint64_t seed, bool null = false) const;
  Summary run(bool with_canary, const RunRandomness& r) const;
  std::vector<double> scores(const Summary& s) const;
};

Index resolved_steps(const AuditOptions& a) {
  if (a.steps > 0) return a.steps;
  if (a.canary == Canary::kQuadraticO2) return 2;
  if (a.epochs > 0) return 10;
  return 1;
}

// The linear canary's configuration, from the algorithm's row: one O1 per
// step on its own batch (or phases of one O1 and q - 1 O2 steps where the
// algorithm reads a period), every node's sensitivity 2G/b.
void configure_linear(const AuditOptions& a, RunOptions& o, double G) {
  ::dpsosp::detail::algorithm_row(a.algorithm).audit.linear(o, a.batch, G, a.phase_length);
}

Setup::Setup(const AuditOptions& options) : a(options) {
  a.Validate();
  a.steps = resolved_steps(options);
  const AlgorithmInfo& info = algorithm_info(a.algorithm);
  const ::dpsosp::detail::AuditHooks& hooks = ::dpsosp::detail::algorithm_row(a.algorithm).audit;
  poisson = a.epochs > 0;
  tree = info.mechanism == MechanismKind::kTree;
  const Index d = a.dim, b = a.batch;
  const double G = a.G, c = a.canary_norm;
  const bool quadratic = a.canary == Canary::kQuadraticO2;
  if (quadratic) {
    model = std::make_unique<QuadraticCanaryModel>(d, G);
  } else {
    model = std::make_unique<LinearCanaryModel>(d, a.canary == Canary::kExtreme ? std::ldexp(1.0, 1000) : 1.0,
                                                a.tampering == Tampering::kExtremeFails);
  }
  honest.algorithm = a.algorithm;
  honest.privacy = a.privacy;
  honest.constants = {G, M, 1.0, 1.0};
  honest.seed = 0;
  honest.noise_key = run_key(a.seed, a.algorithm, 0, ~Index{0});
  honest.threads = 1;
  honest.record_trajectory = true;
  // quadratic-o2: the factor by which unclipped-o2 raises M (just above the canary's c).
  const ::dpsosp::detail::QuadraticAudit quadratic_audit{b, d, G, M, 1.01 * c, a.privacy};
  ::dpsosp::detail::QuadraticAuditSetup quadratic_setup;
  if (poisson) {
    // Poisson sampling reads no order: the canary is any row.
    n = b * a.steps;
    honest.batch_size = b;
    honest.epochs = a.epochs;
  } else if (!quadratic) {
    // The canary sits in the row the run draws first, i.e. in the first O1
    // batch: the sample order is a function of (n, seed) alone, independent
    // of the noise, and the privacy analysis holds for every order.
    const Index q = a.phase_length;
    const Index phases = (a.steps + q - 1) / q;
    n = phases * (b + 2 * b * (q - 1));
    honest.max_steps = a.steps;
    configure_linear(a, honest, G);
  } else {
    // Step 1 is an O1 at x0 = 0, where every record's gradient is the drift
    // w = G e1 (unclipped, the same in D and D'); step 2 is an O2 whose batch
    // starts at the canary (position b of the order).
    canary_position = b;
    honest.max_steps = 2;
    if (info.knobs & kKnobMaxPhaseLength) honest.max_phase_length = 2;
    honest.overrides.b = b;
    quadratic_setup = hooks.quadratic(honest, quadratic_audit);
    n = quadratic_setup.n;
    max_step = quadratic_setup.max_step;
  }
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(d));
  reference = minimize(*model, data(false, 0, true), x0, honest);
  // The noise knob of every private algorithm: its z (the tree's node sigma is z s).
  const double honest_z = reference.privacy.noise_multiplier;

  audited = honest;
  // Poisson dpsgd calibrates its noise multiplier by a search over the RDP
  // accountant (tens of milliseconds a run); every run would find the same
  // number, so the runs take the reference's.
  if (poisson) audited.overrides.noise_multiplier = honest_z;
  switch (a.tampering) {
    case Tampering::kNone:
    case Tampering::kPublishedKey:  // the mechanism is honest; its key is not secret
    case Tampering::kExtremeFails:  // the model gives up on an overflow
      break;
    case Tampering::kNoiseDividedBy10:
      audited.overrides.noise_multiplier = honest_z / 10.0;
      audited.overrides.sigma.reset();
      break;
    case Tampering::kClippingOff: {
      // Clip above the canary's norm; keep the noise the honest clip G calls
      // for (every release's sensitivity scales with G, so z G / G_off).
      const double G_off = c * G * 1.01;
      audited.constants.G = G_off;
      if (!poisson) configure_linear(a, audited, G_off);
      audited.overrides.noise_multiplier = honest_z * G / G_off;
      break;
    }
    case Tampering::kUnclippedO2:
      hooks.unclipped_o2(audited, quadratic_audit, quadratic_setup, reference.privacy.sigma);
      break;
  }

  names = {"trajectory"};
  if (quadratic && tree) names.emplace_back("trajectory-lr");
  names.emplace_back("x");
  if (a.tampering == Tampering::kPublishedKey) names.emplace_back("replay");
  for (const char* field : {"steps", "o1_calls", "perturbations", "samples_used", "gradient_evaluations", "phases",
                            "termination", "epsilon"})
    names.emplace_back(field);
}

Dataset Setup::data(bool with_canary, std::uint64_t seed, bool null) const {
  const Index d = a.dim;
  RowMatrix z = RowMatrix::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
  if (!null) {
    const double c = a.canary_norm, G = a.G;
    double value = 0;
    switch (a.canary) {
      case Canary::kLinear: value = with_canary ? c * G : (poisson ? 0.0 : -c * G); break;
      case Canary::kQuadraticO2: value = (with_canary ? c : -c) * M; break;
      // Stored divided by the model's 2^1000: c G exactly, or 2^1030 = inf.
      case Canary::kExtreme: value = with_canary ? std::ldexp(c * G, -1000) : std::ldexp(1.0, 30); break;
    }
    Index row = 0;
    if (!poisson) row = SamplePool(n, seed).draw(canary_position + 1)[static_cast<std::size_t>(canary_position)];
    z(static_cast<Eigen::Index>(row), 0) = value;
  }
  return Dataset(std::move(z), Vec());
}

Summary Setup::run(bool with_canary, const RunRandomness& r) const {
  RunOptions o = audited;
  o.seed = r.seed;
  o.noise_key = r.key;
  return minimize(*model, data(with_canary, r.seed), Vec::Zero(static_cast<Eigen::Index>(a.dim)), o);
}

// The attacker's scores of one report (docs/privacy.md), in the order of
// `names`; "replay" is left 0 here (run_audit fills it).
std::vector<double> Setup::scores(const Summary& s) const {
  const std::vector<Vec>& tr = s.trajectory;
  const Index T = tr.empty() ? 0 : static_cast<Index>(tr.size()) - 1;
  // r(t) = x_{t-1} - x_t along e1: the release of step t times the step size.
  auto r = [&](Index t) { return tr[static_cast<std::size_t>(t - 1)][0] - tr[static_cast<std::size_t>(t)][0]; };
  double trajectory = 0, lr = 0;
  if (poisson) {
    // The canary is in a secret subset of the steps: the largest release.
    if (T > 0) {
      trajectory = -kInf;
      for (Index t = 1; t <= T; ++t) trajectory = std::max(trajectory, r(t));
    }
  } else if (a.canary == Canary::kQuadraticO2) {
    if (T >= 2) {
      const double step = (tr[1] - tr[0]).norm();
      const double sign = tr[1][0] > tr[0][0] ? 1.0 : (tr[1][0] < tr[0][0] ? -1.0 : 0.0);
      if (tree) {
        // released_2 = O1 (= the drift G e1) + Delta + a node noise of its
        // own; Delta's canary term is sign * M |dx| / b_t (clipped). The
        // likelihood ratio weights each run by that shift, with b_t =
        // samples_used - b.
        const auto eta = s.params.find("eta");
        trajectory = sign * (r(2) - (eta == s.params.end() ? 0.0 : eta->second) * a.G);
        const double bt = static_cast<double>(s.samples_used > a.batch ? s.samples_used - a.batch : 1);
        lr = trajectory * M * std::min(step, max_step) / bt;
      } else if (step > 0) {
        // Gaussian noise per release, scaled to M |dx|: released_2 - released_1
        // = Delta + fresh noise, standardised by |dx|.
        trajectory = sign * (r(2) - r(1)) / step;
      }
    }
  } else if (tree) {
    // The canary's O1 lies in the tree nodes [1, t] for t = 1, 2, 4, ... of the
    // first phase; each is released alone as the prefix sum at t.
    const Index first = s.phase_lengths.empty() ? T : std::min<Index>(T, s.phase_lengths[0]);
    for (Index t = 1; t <= first; t *= 2) trajectory += r(t);
  } else if (T > 0) {
    trajectory = r(1);
  }
  std::vector<double> v;
  v.reserve(names.size());
  v.push_back(trajectory);
  if (a.canary == Canary::kQuadraticO2 && tree) v.push_back(lr);
  v.push_back(-s.x[0]);
  if (a.tampering == Tampering::kPublishedKey) v.push_back(0.0);
  v.push_back(static_cast<double>(s.steps));
  v.push_back(static_cast<double>(s.o1_calls));
  v.push_back(static_cast<double>(s.perturbations));
  v.push_back(static_cast<double>(s.samples_used));
  v.push_back(s.gradient_evaluations ? static_cast<double>(*s.gradient_evaluations) : -1.0);
  v.push_back(static_cast<double>(s.phase_lengths.size()));
  v.push_back(static_cast<double>(s.termination));
  v.push_back(s.privacy.epsilon);
  return v;
}

}  // namespace

Tampering parse_tampering(const std::string& name) {
  for (const Tampering t : {Tampering::kNone, Tampering::kNoiseDividedBy10, Tampering::kClippingOff,
                            Tampering::kPublishedKey, Tampering::kUnclippedO2, Tampering::kExtremeFails})
    if (name == tampering_name(t)) return t;
  throw Error("audit: unknown tampering '" + name +
              "', expected none, noise-div-10, clip-off, published-key, unclipped-o2 or extreme-fails");
}

std::string tampering_name(Tampering t) {
  switch (t) {
    case Tampering::kNone: return "none";
    case Tampering::kNoiseDividedBy10: return "noise-div-10";
    case Tampering::kClippingOff: return "clip-off";
    case Tampering::kPublishedKey: return "published-key";
    case Tampering::kUnclippedO2: return "unclipped-o2";
    case Tampering::kExtremeFails: return "extreme-fails";
  }
  return "unknown";
}

Canary parse_canary(const std::string& name) {
  for (const Canary c : {Canary::kLinear, Canary::kQuadraticO2, Canary::kExtreme})
    if (name == canary_name(c)) return c;
  throw Error("audit: unknown canary '" + name + "', expected linear, quadratic-o2 or extreme");
}

std::string canary_name(Canary c) {
  switch (c) {
    case Canary::kLinear: return "linear";
    case Canary::kQuadraticO2: return "quadratic-o2";
    case Canary::kExtreme: return "extreme";
  }
  return "unknown";
}

void AuditOptions::Validate() const {
  std::ostringstream os;
  const bool quadratic = canary == Canary::kQuadraticO2;
  const Index s = resolved_steps(*this);
  const double records = static_cast<double>(batch) * static_cast<double>(s) * static_cast<double>(dim) *
                         (phase_length > 1 ? 2.0 : 1.0);
  const AlgorithmInfo& info = algorithm_info(algorithm);
  const ::dpsosp::detail::AuditHooks& hooks = ::dpsosp::detail::algorithm_row(algorithm).audit;
  // Which algorithms a canary or tampering applies to, from the table.
  const auto having = [](auto member) {
    std::string list;
    for (const AlgorithmInfo& i : algorithm_table())
      if (::dpsosp::detail::algorithm_row(i.id).audit.*member)
        list += (list.empty() ? "" : ", ") + i.name;
    return list;
  };
  if (!info.is_private) os << "algorithm " << info.name << " is not private";
  else if (hooks.linear == nullptr) os << "algorithm " << info.name << " has no audit configuration";
  else if (!privacy.is_private()) os << "epsilon must be finite";
  else if (runs < 4) os << "runs must be at least 4, got " << runs;
  else if (runs > 100000000) os << "runs must be at most 1e8, got " << runs;
  else if (batch < 1 || batch > 1000000) os << "batch must be in [1, 1e6], got " << batch;
  else if (steps > 1000000) os << "steps must be in [0, 1e6] (0 = the mode's default), got " << steps;
  else if (dim < 1 || dim > 1000000) os << "dim must be in [1, 1e6], got " << dim;
  else if (!(G > 0) || !std::isfinite(G)) os << "G must be positive and finite, got " << G;
  else if (!(canary_norm >= 1) || !std::isfinite(canary_norm)) os << "canary_norm must be >= 1 and finite, got " << canary_norm;
  else if (!(confidence > 0 && confidence < 1)) os << "confidence must lie in (0, 1), got " << confidence;
  else if (threads < 0) os << "threads must be >= 0, got " << threads;
  else if (phase_length < 1 || phase_length > 1000000) os << "phase_length must be in [1, 1e6], got " << phase_length;
  else if (!(epochs >= 0) || !std::isfinite(epochs)) os << "epochs must be >= 0 and finite, got " << epochs;
  else if (epochs > 0 && !(info.knobs & kKnobEpochs))
    os << "epochs > 0 (Poisson sampling) applies to " << algorithms_reading(kKnobEpochs) << " only, got " << algorithm_name(algorithm);
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
  else if (records > 1e8)
    os << "batch * steps * dim must be at most 1e8 (the records are stored densely), got " << batch << " * " << s
       << " * " << dim;
  if (!os.str().empty()) throw Error("AuditOptions: " + os.str());
  privacy.Validate();
}

RunRandomness run_randomness(const AuditOptions& options, int dataset, Index run) {
  return {run_seed(options.seed, options.algorithm, dataset, run), run_key(options.seed, options.algorithm, dataset, run)};
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
  const int threads = a.threads > 0 ? a.threads : omp_get_max_threads();
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
  r.claimed_epsilon = setup.reference.privacy.epsilon;
  r.delta = a.privacy.delta;
  r.claimed_mu = setup.reference.privacy.mu;
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
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dpsosp::audit
