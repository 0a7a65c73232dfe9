// Internal: one audit's setup (src/audit/setup.cpp): the model, the honest and
// audited configurations from the algorithm table's audit hooks, the
// neighbouring datasets and the attacker's scores (docs/privacy.md).
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dpsosp/audit.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/model.hpp"
#include "optimizers/registry.hpp"

namespace dpsosp::audit::detail {

/// Whether two runs released the same iterates, bit for bit.
bool same_release(const Summary& a, const Summary& b);

/// AuditOptions::steps with the mode's default for 0.
Index resolved_steps(const AuditOptions& a);
/// Poisson dpsgd, or spider-mf-adaptive's Poisson passes: claims from the PLD.
bool poisson_path(const AuditOptions& a);
/// AuditOptions::canaries with the mode's default for 0.
Index resolved_canaries(const AuditOptions& a);

/// The attacker's statistic against the matrix-factorization mechanism
/// (docs/privacy.md): the mechanism releases B (C u + z); from the releases
/// and what it knows of the increments u (every record but the canary), the
/// attacker recovers y = (u - known part) + C^{-1} z, so that C y = shift * a
/// + z with a the sum of C's columns at the canary's steps. <a, C y> / ||a||
/// is then the likelihood-ratio statistic, N(+-shift ||a||, sigma^2).
class MfScore {
 public:
  MfScore() = default;
  /// `canary_steps`: the steps (from 1) whose increment holds the canary.
  MfScore(Index horizon, const std::vector<Index>& canary_steps);
  /// y over the first y.size() steps (at most the horizon); 0 when a is zero there.
  double operator()(const std::vector<double>& y) const;

 private:
  BltFactorization factorization_;
  std::vector<double> direction_;  // a, over the horizon
};

/// Everything one audit's runs share: the model, the configurations, the
/// datasets' shape and the attacker's scores.
struct Setup {
  AuditOptions a;  // steps resolved
  bool poisson = false;
  bool tree = false;                // the algorithm's mechanism is the tree
  bool mf = false;                  // the matrix-factorization mechanism (single pass, or passes over the order)
  bool banded = false;              // spider-mf-adaptive's Poisson passes: the banded factorization
  std::vector<Index> canary_steps;  // the steps (from 1) whose releases hold the canary
  MfScore mf_score;
  Index n = 0;
  Index canary_position = 0;  // in the sample order (single pass, banded); row 0 for Poisson dpsgd
  double M = 1.0;             // the honest O2 smoothness constant
  double max_step = std::numeric_limits<double>::infinity();  // spider-tree-periodic's O2 step bound 2G/M
  std::unique_ptr<Model> model;
  RunOptions honest, audited;
  Summary reference;  // the honest configuration on all-zero records: the claim
  std::vector<std::string> names;
  // The claim's shape: GDP mu (0 on the Poisson paths), or the Poisson
  // paths' (q, z, compositions) and the canary's shift per participation
  // in the units of opportunities() (measured on the honest configuration).
  double claim_mu = 0;
  double claim_q = 0, claim_z = 0, signal = 0;
  std::uint64_t claim_steps = 0;
  double claim_epsilon = 0;

  explicit Setup(const AuditOptions& options);
  // D (with_canary = false) or D' for a run whose public seed is `seed`;
  // null = every record zero (the reference).
  RowMatrix records(bool with_canary, std::uint64_t seed, bool null = false) const;
  // One run on those records: the audit's model, or the caller's (AuditOptions::caller).
  Summary train(RowMatrix records, const Vec& x0, const RunOptions& config) const;
  Summary run(bool with_canary, const RunRandomness& r) const { return run_with(audited, with_canary, r); }
  Summary run_with(const RunOptions& config, bool with_canary, const RunRandomness& r) const;
  std::vector<double> scores(const Summary& s) const;
  // Poisson paths: canary j's value at each of its opportunities (dpsgd:
  // the release of every step along e_j; Poisson passes: the window of C's
  // column at each of its group's steps), the shift `signal` where sampled.
  std::vector<double> opportunities(const Summary& s, Index j) const;
  // Poisson paths: the likelihood-ratio statistic of each canary (tradeoff.hpp).
  std::vector<double> lr_statistics(const Summary& s) const;

 private:
  void tamper(const dpsosp::detail::QuadraticAudit& quadratic_audit,
              const dpsosp::detail::QuadraticAuditSetup& quadratic_setup);
  void measure_signal();
};

}  // namespace dpsosp::audit::detail
