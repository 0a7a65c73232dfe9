// The empirical privacy audit (include/dpsosp/audit.hpp, docs/privacy.md).
//
// Method. D and D' differ in one record, the canary. Each run of the algorithm
// on D or D' (own seed) gives a score; a test "canary present iff score >
// t" (or "<= t") has a false positive rate FPR on D and a true positive rate
// TPR on D'. (eps, delta)-DP forces TPR <= e^eps FPR + delta for every test and
// both orderings of the pair, so eps >= log((TPR - delta) / FPR). With finite
// runs we use a Clopper-Pearson lower bound on TPR and upper bound on FPR, each
// at level (1 - confidence)/2, so the bound holds with probability >= confidence
// (union bound). The test (threshold and direction) is chosen on the first
// half of the runs and measured on the second, so choosing it costs nothing.
#include "dpsosp/audit.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "dpsosp/error.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp::audit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// f(x; z) = <z, x>: the gradient z does not depend on x, so zero records carry
// no signal at any iterate and O2 differences vanish; only the canary's clipped
// gradient reaches the output.
class LinearCanaryModel final : public Model {
 public:
  explicit LinearCanaryModel(Index d) : d_(d) {}
  std::string name() const override { return "audit-linear"; }
  Index dim() const override { return d_; }
  Index features() const override { return d_; }
  void validate(const Dataset& data) const override {
    if (data.cols() != d_) throw Error("audit-linear: the data have " + std::to_string(data.cols()) + " features, expected " + std::to_string(d_));
  }
  double loss(const Vec& x, const Dataset& data, Index i) const override { return data.row_dot(i, x); }
  void gradient(const Vec&, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override { data.row_dense(i, out); }
  void hvp(const Vec&, const Dataset&, Index, const Vec&, Eigen::Ref<Vec> out) const override { out.setZero(); }

 private:
  Index d_;
};

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Distinct for every (base seed, algorithm, dataset, run).
std::uint64_t run_seed(std::uint64_t base, Algorithm algorithm, int dataset, Index run) {
  const std::uint64_t stream = splitmix64(base) ^ splitmix64(0x5eedULL + static_cast<std::uint64_t>(algorithm));
  return splitmix64(stream ^ splitmix64((static_cast<std::uint64_t>(run) << 1) | static_cast<std::uint64_t>(dataset)));
}

// The noise key of run `run` on dataset `dataset`: a function of the audit's
// seed, so that an audit is reproducible. The audit's scores never read it
// (the attacker does not hold the key), except where a tampering publishes it.
NoiseKey run_key(std::uint64_t base, Algorithm algorithm, int dataset, Index run) {
  const std::uint64_t a = splitmix64(run_seed(base, algorithm, dataset, run) ^ 0x6b6579ULL);
  const std::uint64_t b = splitmix64(a);
  std::array<std::uint8_t, 16> bytes{};
  for (int i = 0; i < 8; ++i) {
    bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a >> (8 * i));
    bytes[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b >> (8 * i));
  }
  return NoiseKey::from_bytes(bytes);
}

// Continued fraction of the incomplete beta function (modified Lentz).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  constexpr double kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::abs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::abs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::abs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < kEps) return h;
  }
  throw Error("incomplete_beta: the continued fraction did not converge (a = " + std::to_string(a) +
              ", b = " + std::to_string(b) + ", x = " + std::to_string(x) + ")");
}

// The p with I_p(a, b) = target, by bisection (I is increasing in p).
double beta_quantile(double a, double b, double target) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 1e-16; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (incomplete_beta(a, b, mid) < target) lo = mid; else hi = mid;
  }
  return 0.5 * (lo + hi);
}

struct Test {
  double threshold = 0;
  bool reject_high = true;
  double bound = 0;
};

// Positives of a test among sorted scores.
Index count_positive(const std::vector<double>& sorted, double t, bool reject_high) {
  const auto above = static_cast<Index>(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), t));
  return reject_high ? above : static_cast<Index>(sorted.size()) - above;
}

// The test with the largest bound on the selection half. Only thresholds at a
// score of the null side can be optimal (the FPR changes only there).
Test choose_test(std::vector<double> without, std::vector<double> with, double delta, double alpha) {
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  const Index m0 = without.size(), m1 = with.size();
  Test best;
  best.bound = -kInf;
  best.threshold = without.empty() ? 0 : without.back();
  for (const bool high : {true, false}) {
    // "high": positive = score > t, null = D (without). "low": positive = score <= t, null = D'.
    const std::vector<double>& null_scores = high ? without : with;
    const std::vector<double>& alt_scores = high ? with : without;
    for (const double t : null_scores) {
      // high: t in D's scores; low: t just below a D' score (positives <= t exclude it).
      const double threshold = high ? t : std::nextafter(t, -kInf);
      const Index fp = count_positive(null_scores, threshold, high);
      const Index tp = count_positive(alt_scores, threshold, high);
      const double b = epsilon_lower_bound(tp, high ? m1 : m0, fp, high ? m0 : m1, delta, alpha);
      if (b > best.bound) best = {threshold, high, b};
    }
  }
  return best;
}

double score_of(const Vec& x) { return -x[0]; }

}  // namespace

Tampering parse_tampering(const std::string& name) {
  if (name == "none") return Tampering::kNone;
  if (name == "noise-div-10") return Tampering::kNoiseDividedBy10;
  if (name == "clip-off") return Tampering::kClippingOff;
  throw Error("audit: unknown tampering '" + name + "', expected none, noise-div-10 or clip-off");
}

std::string tampering_name(Tampering t) {
  switch (t) {
    case Tampering::kNone: return "none";
    case Tampering::kNoiseDividedBy10: return "noise-div-10";
    case Tampering::kClippingOff: return "clip-off";
  }
  return "unknown";
}

void AuditOptions::Validate() const {
  std::ostringstream os;
  if (!is_private_algorithm(algorithm)) os << "algorithm " << algorithm_name(algorithm) << " is not private";
  else if (!privacy.is_private()) os << "epsilon must be finite";
  else if (runs < 4) os << "runs must be at least 4, got " << runs;
  else if (runs > 100000000) os << "runs must be at most 1e8, got " << runs;
  else if (batch < 1 || batch > 1000000) os << "batch must be in [1, 1e6], got " << batch;
  else if (steps < 1 || steps > 1000000) os << "steps must be in [1, 1e6], got " << steps;
  else if (dim < 1 || dim > 1000000) os << "dim must be in [1, 1e6], got " << dim;
  else if (!(G > 0) || !std::isfinite(G)) os << "G must be positive and finite, got " << G;
  else if (!(canary_norm >= 1) || !std::isfinite(canary_norm)) os << "canary_norm must be >= 1 and finite, got " << canary_norm;
  else if (!(confidence > 0 && confidence < 1)) os << "confidence must lie in (0, 1), got " << confidence;
  else if (threads < 0) os << "threads must be >= 0, got " << threads;
  else if (phase_length < 1 || phase_length > 1000000) os << "phase_length must be in [1, 1e6], got " << phase_length;
  else if (phase_length > 1 && algorithm != Algorithm::kSpiderTreePeriodic)
    os << "phase_length > 1 applies to spider-tree-periodic only (its O2 batch is fixed), got " << phase_length
       << " for " << algorithm_name(algorithm);
  else if (static_cast<double>(batch) * static_cast<double>(steps) * static_cast<double>(dim) *
               (phase_length > 1 ? 2.0 : 1.0) > 1e8)
    os << "batch * steps * dim must be at most 1e8 (the records are stored densely), got " << batch << " * " << steps
       << " * " << dim;
  if (!os.str().empty()) throw Error("AuditOptions: " + os.str());
  privacy.Validate();
}

double incomplete_beta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || !(x >= 0 && x <= 1))
    throw Error("incomplete_beta: expected a > 0, b > 0, x in [0, 1], got a = " + std::to_string(a) +
                ", b = " + std::to_string(b) + ", x = " + std::to_string(x));
  if (x == 0) return 0;
  if (x == 1) return 1;
  const double front =
      std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double clopper_pearson_lower(Index k, Index n, double alpha) {
  if (n == 0 || k > n || !(alpha > 0 && alpha < 1))
    throw Error("clopper_pearson_lower: expected 0 <= k <= n, n >= 1, alpha in (0, 1)");
  if (k == 0) return 0;
  return beta_quantile(static_cast<double>(k), static_cast<double>(n - k + 1), alpha);
}

double clopper_pearson_upper(Index k, Index n, double alpha) {
  if (n == 0 || k > n || !(alpha > 0 && alpha < 1))
    throw Error("clopper_pearson_upper: expected 0 <= k <= n, n >= 1, alpha in (0, 1)");
  if (k == n) return 1;
  return beta_quantile(static_cast<double>(k + 1), static_cast<double>(n - k), 1 - alpha);
}

double epsilon_lower_bound(Index true_positives, Index positives_trials, Index false_positives,
                           Index negatives_trials, double delta, double alpha) {
  const double tpr = clopper_pearson_lower(true_positives, positives_trials, alpha);
  const double fpr = clopper_pearson_upper(false_positives, negatives_trials, alpha);
  if (!(tpr > delta)) return 0;
  return std::max(0.0, std::log((tpr - delta) / fpr));
}

AuditResult run_audit(const AuditOptions& a) {
  a.Validate();
  const auto start = std::chrono::steady_clock::now();
  // One O1 per step, except spider-tree-periodic with phase_length q > 1: phases
  // of one O1 (b records) and q - 1 O2 steps (2b records each) in one tree.
  const Index q = a.phase_length;
  const Index phases = (a.steps + q - 1) / q;
  const Index n = phases * (a.batch + 2 * a.batch * (q - 1)), d = a.dim;
  const LinearCanaryModel model(d);
  // D (without): canary at -c G e1; D' (with): canary at +c G e1. Everything
  // else is 0. The canary sits in the row the run draws first, i.e. in the first
  // O1 batch: the sample order is a function of (n, seed) alone, independent of
  // the noise, and the privacy analysis holds for every order, so placing the
  // canary by it loses nothing and keeps it out of O2 batches (where a linear
  // loss would hide it).
  auto make_data = [&](double sign, std::uint64_t seed) {
    RowMatrix z = RowMatrix::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d));
    SamplePool order(n, seed);
    z(static_cast<Eigen::Index>(order.draw(1)[0]), 0) = sign * a.canary_norm * a.G;
    return Dataset(std::move(z), Vec());
  };
  const Dataset without = make_data(-1.0, 0);
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(d));

  // The honest configuration: one O1 per step on its own batch, every node's
  // sensitivity 2G/b, depth 1.
  RunOptions honest;
  honest.algorithm = a.algorithm;
  honest.privacy = a.privacy;
  honest.constants = {a.G, 1.0, 1.0, 1.0};
  honest.seed = 0;
  honest.noise_key = run_key(a.seed, a.algorithm, 0, ~Index{0});
  honest.threads = 1;
  honest.max_steps = a.steps;
  honest.max_phase_length = q;
  auto configure = [&](RunOptions& o, double G) {
    const double b = static_cast<double>(a.batch);
    switch (a.algorithm) {
      case Algorithm::kDpsgd: o.batch_size = a.batch; break;
      case Algorithm::kSpiderGaussFixed: o.overrides.b = a.batch; break;
      case Algorithm::kSpiderTreeAdaptive:
        // s = max(2G/b, 2/bt_slope) with bt_slope >= kappa/alpha^2 = 2b/G: s = 2G/b.
        o.overrides.b = a.batch;
        o.overrides.alpha = G;
        o.overrides.kappa = 2.0 * b * G;
        break;
      case Algorithm::kSpiderTreePeriodic:
        // s = max(2G/b1, 4G/b2) = 2G/b1 with b2 = 2 b1; O1 every step.
        o.overrides.b = a.batch;
        o.batch_size = 2 * a.batch;
        o.period = q;
        break;
      default: break;
    }
  };
  configure(honest, a.G);
  const Summary reference = minimize(model, without, x0, honest);
  const bool noise_is_multiplier = a.algorithm == Algorithm::kDpsgd || a.algorithm == Algorithm::kSpiderGaussFixed;
  // overrides.sigma is the noise multiplier for dpsgd and spider-gauss-fixed and
  // the node noise for the tree algorithms.
  const double honest_noise = noise_is_multiplier ? reference.noise_multiplier : reference.sigma;

  RunOptions o = honest;
  switch (a.tampering) {
    case Tampering::kNone: break;
    case Tampering::kNoiseDividedBy10: o.overrides.sigma = honest_noise / 10.0; break;
    case Tampering::kClippingOff: {
      // Clip above the canary's norm; keep the noise the honest clip G calls for.
      const double G = a.canary_norm * a.G * 1.01;
      o.constants.G = G;
      configure(o, G);
      o.overrides.sigma = noise_is_multiplier ? honest_noise * a.G / G : honest_noise;
      break;
    }
  }

  const Index runs = a.runs;
  std::vector<double> scores_without(runs), scores_with(runs);
  std::vector<double> reported(runs);
  const int threads = a.threads > 0 ? a.threads : omp_get_max_threads();
  std::string failure;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(runs); ++i) {
    try {
      RunOptions local = o;
      local.seed = run_seed(a.seed, a.algorithm, 0, static_cast<Index>(i));
      local.noise_key = run_key(a.seed, a.algorithm, 0, static_cast<Index>(i));
      const Summary s0 = minimize(model, make_data(-1.0, *local.seed), x0, local);
      local.seed = run_seed(a.seed, a.algorithm, 1, static_cast<Index>(i));
      local.noise_key = run_key(a.seed, a.algorithm, 1, static_cast<Index>(i));
      const Summary s1 = minimize(model, make_data(+1.0, *local.seed), x0, local);
      scores_without[static_cast<std::size_t>(i)] = score_of(s0.x);
      scores_with[static_cast<std::size_t>(i)] = score_of(s1.x);
      reported[static_cast<std::size_t>(i)] = std::max(s0.epsilon, s1.epsilon);
    } catch (const std::exception& e) {
#pragma omp critical(dpsosp_audit_failure)
      if (failure.empty()) failure = e.what();
    }
  }
  if (!failure.empty()) throw Error("run_audit: a run failed: " + failure);

  AuditResult r;
  r.algorithm = algorithm_name(a.algorithm);
  r.tampering = tampering_name(a.tampering);
  r.claimed_epsilon = reference.epsilon;
  r.reported_epsilon = *std::max_element(reported.begin(), reported.end());
  r.delta = a.privacy.delta;
  r.claimed_mu = reference.mu;
  r.confidence = a.confidence;
  r.n = n;
  r.dim = d;
  r.steps = a.steps;
  r.phase_length = q;
  const double alpha = (1 - a.confidence) / 2;  // two Clopper-Pearson bounds, union bound

  const Index half = runs / 2;
  const std::vector<double> select0(scores_without.begin(), scores_without.begin() + static_cast<std::ptrdiff_t>(half));
  const std::vector<double> select1(scores_with.begin(), scores_with.begin() + static_cast<std::ptrdiff_t>(half));
  std::vector<double> measure0(scores_without.begin() + static_cast<std::ptrdiff_t>(half), scores_without.end());
  std::vector<double> measure1(scores_with.begin() + static_cast<std::ptrdiff_t>(half), scores_with.end());
  const Test test = choose_test(select0, select1, a.privacy.delta, alpha);
  std::sort(measure0.begin(), measure0.end());
  std::sort(measure1.begin(), measure1.end());
  r.threshold = test.threshold;
  r.reject_high = test.reject_high;
  r.measure_runs = measure0.size();
  const std::vector<double>& null_scores = test.reject_high ? measure0 : measure1;
  const std::vector<double>& alt_scores = test.reject_high ? measure1 : measure0;
  r.true_positives = count_positive(alt_scores, test.threshold, test.reject_high);
  r.false_positives = count_positive(null_scores, test.threshold, test.reject_high);
  r.tpr_lower = clopper_pearson_lower(r.true_positives, alt_scores.size(), alpha);
  r.fpr_upper = clopper_pearson_upper(r.false_positives, null_scores.size(), alpha);
  r.epsilon_lower_bound = epsilon_lower_bound(r.true_positives, alt_scores.size(), r.false_positives,
                                              null_scores.size(), a.privacy.delta, alpha);

  // mu estimate: mean shift over the pooled standard deviation, all runs.
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  const double m0 = mean(scores_without), m1 = mean(scores_with);
  double ss = 0;
  for (double x : scores_without) ss += (x - m0) * (x - m0);
  for (double x : scores_with) ss += (x - m1) * (x - m1);
  const double sd = std::sqrt(ss / static_cast<double>(2 * runs - 2));
  r.empirical_mu = sd > 0 ? (m1 - m0) / sd : kInf;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace dpsosp::audit
