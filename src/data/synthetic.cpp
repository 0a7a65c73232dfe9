// Synthetic problems (SPEC section 5): the spec's parsing and the generators.
// Their closed-form populations are population.cpp's.
//
// Record layout. Record i of a problem with seed s is generated from its own
// stream GaussianStream(s, kSynthetic, i): first d standard normals (the
// features' Gaussian part), then one more number (label noise or the class
// label). Each record is therefore a pure function of (seed, i, keys): the
// same spec gives the same bits with any thread count, and the first m
// records do not depend on n.
#include "dpsosp/synthetic.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "data/sample_order.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"

namespace dpsosp {
namespace {

// ---------------------------------------------------------------------------
// Spec parsing.

enum class Rule { kPositiveInteger, kSeed, kNonNegative, kPositive, kAboveOne };

struct KeyRule {
  const char* key;
  double default_value;
  Rule rule;
};

struct ProblemRules {
  const char* name;
  std::vector<KeyRule> keys;
};

// A problem's keys: the common n, d and seed, then its own.
std::vector<KeyRule> keys_after_common(std::initializer_list<KeyRule> own) {
  std::vector<KeyRule> keys = {
      {"n", 10000, Rule::kPositiveInteger}, {"d", 10, Rule::kPositiveInteger}, {"seed", 1, Rule::kSeed}};
  keys.insert(keys.end(), own);
  return keys;
}

const std::vector<ProblemRules>& problem_rules() {
  static const std::vector<ProblemRules> rules = {
      {"phase-retrieval", keys_after_common({{"noise", 0, Rule::kNonNegative}, {"xnorm", 1, Rule::kPositive}})},
      {"pca", keys_after_common(
                  {{"top", 1, Rule::kPositive}, {"gap", 2, Rule::kAboveOne}, {"rank", 1, Rule::kPositiveInteger}})},
      {"gaussian-mixture", keys_after_common({{"mu", 1, Rule::kNonNegative}})},
  };
  return rules;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

[[noreturn]] void bad_value(const std::string& key, const std::string& text, const char* rule) {
  throw Error("synthetic: key '" + key + "' must be " + rule + ", got '" + text + "'");
}

double parse_value(const std::string& key, const std::string& text, Rule rule) {
  if (rule == Rule::kSeed) {
    // Digits only: strtoull would silently accept a sign and wrap "-1" around.
    if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos) {
      bad_value(key, text, "an integer in [0, 2^64)");
    }
    errno = 0;
    const unsigned long long seed = std::strtoull(text.c_str(), nullptr, 10);
    if (errno == ERANGE) bad_value(key, text, "an integer in [0, 2^64)");
    return static_cast<double>(seed);
  }
  char* end = nullptr;
  const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  const bool numeric = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
  switch (rule) {
    case Rule::kPositiveInteger:
      // The record index names a 32-bit stream, hence the upper bound.
      if (!numeric || value < 1 || value > 4294967295.0 || value != std::floor(value)) {
        bad_value(key, text, "a positive integer (at most 2^32 - 1)");
      }
      break;
    case Rule::kNonNegative:
      if (!numeric || value < 0) bad_value(key, text, "a finite number >= 0");
      break;
    case Rule::kPositive:
      if (!numeric || value <= 0) bad_value(key, text, "a finite number > 0");
      break;
    case Rule::kAboveOne:
      if (!numeric || value <= 1) bad_value(key, text, "a finite number > 1");
      break;
    case Rule::kSeed: break;
  }
  return value;
}

struct ParsedSpec {
  std::string name;
  std::map<std::string, double> params;
  std::uint64_t seed = 1;
};

ParsedSpec parse_spec(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  ParsedSpec parsed;
  parsed.name = spec.substr(0, colon);
  const ProblemRules* rules = nullptr;
  std::vector<std::string> names;
  for (const auto& candidate : problem_rules()) {
    names.emplace_back(candidate.name);
    if (parsed.name == candidate.name) rules = &candidate;
  }
  if (rules == nullptr) {
    throw Error("synthetic: unknown problem '" + parsed.name + "' in '" + spec + "' (expected one of " +
                join_names(names) + ")");
  }
  std::vector<std::string> valid_keys;
  for (const auto& rule : rules->keys) valid_keys.emplace_back(rule.key);

  std::map<std::string, std::string> given;
  if (colon != std::string::npos) {
    std::stringstream body(spec.substr(colon + 1));
    std::string item;
    bool any = false;
    while (std::getline(body, item, ',')) {
      any = true;
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw Error("synthetic: expected key=value, got '" + item + "' in '" + spec + "'");
      }
      const std::string key = item.substr(0, eq);
      if (std::find(valid_keys.begin(), valid_keys.end(), key) == valid_keys.end()) {
        throw Error("synthetic: unknown key '" + key + "' for " + parsed.name +
                    " (valid keys: " + join_names(valid_keys) + ")");
      }
      if (!given.emplace(key, item.substr(eq + 1)).second) {
        throw Error("synthetic: duplicate key '" + key + "' in '" + spec + "'");
      }
    }
    // getline drops a trailing empty item: "pca:n=5," and "pca:" must not pass silently.
    if (!any || spec.back() == ',') {
      throw Error("synthetic: empty key=value entry in '" + spec + "'");
    }
  }
  for (const auto& rule : rules->keys) {
    const auto it = given.find(rule.key);
    parsed.params[rule.key] = it == given.end() ? rule.default_value : parse_value(rule.key, it->second, rule.rule);
    if (rule.rule == Rule::kSeed && it != given.end()) {
      parsed.seed = std::strtoull(it->second.c_str(), nullptr, 10);  // exact, unlike the double
    }
  }
  return parsed;
}

Index as_index(double value) { return static_cast<Index>(value); }

/// Fills the dense rows of `features` (n x d), record i from its own stream, and
/// calls finish(i, k, stream, row) to draw whatever follows the d normals.
/// Record i goes to row k = i, or, given a sample order, to the row k with
/// order[k] = i: every record is the same either way, only its place differs.
template <typename Finish>
void generate_rows(std::uint64_t seed, RowMatrix& features, const std::vector<std::uint32_t>* order, Finish finish) {
  const std::int64_t n = features.rows();
  const Eigen::Index d = features.cols();
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t i = order != nullptr ? static_cast<std::int64_t>((*order)[static_cast<std::size_t>(k)]) : k;
    GaussianStream stream(seed, StreamPurpose::kSynthetic, static_cast<std::uint32_t>(i));
    Eigen::Map<Vec> row(features.data() + k * d, d);
    stream.fill(row);
    finish(i, k, stream, row);
  }
}

/// The sample order to generate the records in (none: record order), drawn
/// when first asked for: after the records' memory, whose allocation fails
/// first when n x d is too large.
struct Layout {
  std::optional<std::uint64_t> seed;
  Index n = 0;
  std::vector<std::uint32_t> order;
  const std::vector<std::uint32_t>* rows() {
    if (!seed) return nullptr;
    if (order.empty()) detail::shuffle_order(order, n, *seed);
    return &order;
  }
  /// Records on `data` that its rows hold the order's records (a no-op without one).
  void adopt(Dataset& data) {
    if (seed) detail::DatasetLayout::adopt_sample_order(data, std::move(order), *seed);
  }
};

Layout make_layout(Index n, std::optional<std::uint64_t> seed) {
  Layout layout;
  if (!seed || n > std::numeric_limits<std::uint32_t>::max()) return layout;  // record order (see the header)
  layout.seed = seed;
  layout.n = n;
  return layout;
}

SyntheticProblem make_phase_retrieval(const ParsedSpec& spec, Layout layout) {
  const Index n = as_index(spec.params.at("n"));
  const Index d = as_index(spec.params.at("d"));
  if (d < 2) throw Error("synthetic: phase-retrieval needs d >= 2 (its saddle is orthogonal to x*), got d=1");
  const double noise = spec.params.at("noise");
  const double xnorm = spec.params.at("xnorm");
  SyntheticProblem problem;
  problem.name = "phase-retrieval";
  problem.model = "phase-retrieval";
  problem.x_star = Vec::Zero(static_cast<Eigen::Index>(d));
  problem.x_star[0] = xnorm;
  problem.saddle = Vec::Zero(static_cast<Eigen::Index>(d));
  problem.saddle[1] = xnorm / std::sqrt(3.0);

  RowMatrix features = allocate_records(n, d);
  Vec labels = allocate_labels(n);
  generate_rows(spec.seed, features, layout.rows(),
                [&](std::int64_t, std::int64_t k, GaussianStream& stream, const Eigen::Map<Vec>& a) {
                  const double ax = xnorm * a[0];  // a . x* with x* = xnorm e_1
                  labels[k] = ax * ax + noise * stream.next();
                });
  problem.data = Dataset(std::move(features), std::move(labels));
  layout.adopt(problem.data);
  problem.population = phase_retrieval_population(problem.x_star, noise);
  problem.params = spec.params;
  return problem;
}

SyntheticProblem make_pca(const ParsedSpec& spec, Layout layout) {
  const Index n = as_index(spec.params.at("n"));
  const Index d = as_index(spec.params.at("d"));
  const Index rank = as_index(spec.params.at("rank"));
  if (rank >= d) {
    throw Error("synthetic: pca needs rank < d (its saddle uses eigenvector rank+1), got rank=" + std::to_string(rank) +
                ", d=" + std::to_string(d));
  }
  const double top = spec.params.at("top");
  const double gap = spec.params.at("gap");
  const auto p = static_cast<Eigen::Index>(d);
  const auto r = static_cast<Eigen::Index>(rank);
  // Spiked covariance: the top r eigenvalues equal `top`, the other d - r equal
  // top/gap, so `gap` is the eigengap ratio lambda_r / lambda_{r+1} the rank-r
  // problem sees.
  Vec spectrum = Vec::Constant(p, top / gap);
  spectrum.head(r).setConstant(top);

  SyntheticProblem problem;
  problem.name = "pca";
  problem.model = "pca";
  // Minimiser: U = [sqrt(top) e_1, ..., sqrt(top) e_r] (unique up to U -> U R, R orthogonal).
  Eigen::MatrixXd u_star = Eigen::MatrixXd::Zero(p, r);
  for (Eigen::Index k = 0; k < r; ++k) u_star(k, k) = std::sqrt(spectrum[k]);
  problem.x_star = Eigen::Map<const Vec>(u_star.data(), u_star.size());
  // Saddle: the last column moved from e_r to e_{r+1} (scaled sqrt(lambda_{r+1})).
  // Curvature along e_r in that column is lambda_{r+1} - lambda_r = -top (1 - 1/gap) < 0.
  Eigen::MatrixXd u_saddle = u_star;
  u_saddle(r - 1, r - 1) = 0;
  u_saddle(r, r - 1) = std::sqrt(spectrum[r]);
  problem.saddle = Eigen::Map<const Vec>(u_saddle.data(), u_saddle.size());

  RowMatrix features = allocate_records(n, d);
  const Vec scale = spectrum.cwiseSqrt();
  generate_rows(spec.seed, features, layout.rows(),
                [&](std::int64_t, std::int64_t, GaussianStream&, Eigen::Map<Vec>& z) { z.array() *= scale.array(); });
  problem.data = Dataset(std::move(features), Vec());
  layout.adopt(problem.data);
  problem.population = pca_population(spectrum, rank);
  problem.params = spec.params;
  return problem;
}

SyntheticProblem make_gaussian_mixture(const ParsedSpec& spec, Layout layout) {
  const Index n = as_index(spec.params.at("n"));
  const Index d = as_index(spec.params.at("d"));
  const double mu = spec.params.at("mu");
  const auto p = static_cast<Eigen::Index>(d);
  // Class means +-mu u with u = ones/sqrt(d), so |mean| = mu whatever d.
  const Vec mean = Vec::Constant(p, mu / std::sqrt(static_cast<double>(d)));
  SyntheticProblem problem;
  problem.name = "gaussian-mixture";
  problem.model = "logistic";
  // The log-odds of class 1 are exactly 2 mean . z (equal covariances), so the
  // logistic model is well specified and 2 mean minimises its population loss.
  problem.x_star = 2 * mean;
  RowMatrix features = allocate_records(n, d);
  Vec labels = allocate_labels(n);
  generate_rows(spec.seed, features, layout.rows(),
                [&](std::int64_t, std::int64_t k, GaussianStream& stream, Eigen::Map<Vec>& z) {
                  const bool positive = stream.uniform() <= 0.5;
                  labels[k] = positive ? 1.0 : 0.0;
                  if (positive) {
                    z += mean;
                  } else {
                    z -= mean;
                  }
                });
  problem.data = Dataset(std::move(features), std::move(labels));
  layout.adopt(problem.data);
  problem.params = spec.params;
  return problem;
}

}  // namespace

SyntheticProblem make_synthetic(const std::string& spec, std::optional<std::uint64_t> sample_order_seed) {
  const ParsedSpec parsed = parse_spec(spec);
  Layout layout = make_layout(as_index(parsed.params.at("n")), sample_order_seed);
  if (parsed.name == "phase-retrieval") return make_phase_retrieval(parsed, std::move(layout));
  if (parsed.name == "pca") return make_pca(parsed, std::move(layout));
  return make_gaussian_mixture(parsed, std::move(layout));
}

}  // namespace dpsosp
