// dpsosp: a privacy budget shared by runs on the same records
// (docs/budget.md). Each run is charged by its privacy curve, a
// privacy-loss distribution under replace-one adjacency that reproduces its
// guarantee, and the charges compose exactly (PLD, pld.hpp): far below what
// basic or advanced composition of the runs' (epsilon, delta) would give. A
// run that would take the composition past the budget is refused before it
// reads a record: its curve is fixed before the run (SPEC section 9), so it is
// planned on a public table of zeros of the records' shape.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "dpsosp/pld.hpp"
#include "dpsosp/scaling.hpp"

namespace dpsosp {

/// A run's privacy curve under replace-one adjacency (the report's "curve").
/// form "gdp": mu-GDP (the tree, Gaussian and matrix-factorization
/// mechanisms, with whatever estimates they compose). form "poisson": `steps`
/// Poisson-subsampled Gaussian steps at rate q and noise multiplier z (sigma
/// / C; replace-one moves a step's sum by 2C), after a prior Gaussian release
/// of prior_mu (the private scale estimate); estimate_mu > 0: records a G/M
/// estimate took instead, with that GDP parameter (its counts and the prior),
/// which the curve covers by composing a Gaussian of cover_mu, the smallest
/// (to 1e-3) whose composition dominates both (PrivacyLossDistribution::dominates).
struct PrivacyCurve {
  std::string form;  ///< "gdp" or "poisson"
  double mu = 0;
  double sampling_rate = 0, noise_multiplier = 0;
  std::uint64_t steps = 0;
  double prior_mu = 0, estimate_mu = 0;

  /// The distribution (pessimistic, dp_accounting's discretization), with the
  /// cover where an estimate needs one. Memoized.
  privacy::PrivacyLossDistribution pld() const;
  /// The Gaussian composed in to cover the estimate's records (0: none needed).
  double cover_mu() const;
  nlohmann::json to_json() const;
  /// Throws Error "WHERE: ..." for a curve that is not one of the forms above.
  static PrivacyCurve from_json(const nlohmann::json& j, const std::string& where);
};

/// The curve of a finished run (its guarantee's, under replace-one); nullopt
/// for a non-private run. Throws Error for a run whose accounting has no
/// curve to compose (secure noise, accounted by zCDP).
std::optional<PrivacyCurve> run_privacy_curve(const ScaledSummary& run);

/// The curve a run of `options` on records of `records`' shape (rows,
/// columns, sparse or dense, labels or not) will state, found before any of
/// them is read: the same run on a public table of zeros of that shape,
/// stopped before its first step, with a fresh noise key. A run's privacy
/// parameters are functions of public quantities only (SPEC section 9); the
/// test Budget.APlanIsTheRunsCurve holds the run to it.
std::optional<PrivacyCurve> planned_privacy_curve(const Model& model, const Dataset& records, const Vec& x0,
                                                  const RunOptions& options, const ScalingOptions& scaling);

/// An (epsilon, delta) budget under replace-one adjacency and the ledger of
/// what was charged to it. Text: to_json / from_json (`dpsosp run --budget FILE`).
class Budget {
 public:
  struct Charge {
    std::string label;   ///< what ran (the front end's words)
    PrivacyCurve curve;  ///< its curve
    double epsilon = 0;  ///< the curve alone at the budget's delta
  };
  /// Throws Error for epsilon not finite and > 0 or delta not in (0, 1).
  Budget(double epsilon, double delta);
  double epsilon() const { return epsilon_; }
  double delta() const { return delta_; }
  const std::vector<Charge>& ledger() const { return ledger_; }
  /// epsilon at delta of every charge composed (0 for none).
  double spent() const;
  /// The same with `curve` charged too.
  double spent_with(const PrivacyCurve& curve) const;
  /// The epsilon, at delta, of the largest Gaussian (mu-GDP) release the
  /// budget still admits (0 when none): a yardstick for the next run, which
  /// is checked by its own curve.
  double remaining() const;
  /// Throws Error (one line, naming `label`) when charging `curve` would take
  /// the spending past epsilon; changes nothing.
  void check(const PrivacyCurve& curve, const std::string& label) const;
  /// Adds the charge (a run that ran is charged whatever the check said).
  void charge(const PrivacyCurve& curve, const std::string& label);
  nlohmann::json to_json() const;
  /// Throws Error "WHERE: ..." for text that is not a budget.
  static Budget from_json(const nlohmann::json& j, const std::string& where);

 private:
  double epsilon_, delta_;
  std::vector<Charge> ledger_;
  std::optional<privacy::PrivacyLossDistribution> total_;
};

/// minimize_scaled charged to `budget`: the run's planned curve is checked
/// (Error, one line, and nothing run or charged, where it would overrun),
/// then the run, then its own curve charged under `label`.
ScaledSummary minimize_charged(Budget& budget, const std::string& label, const Model& model, const Dataset& data,
                               const Vec& x0, const RunOptions& options, const ScalingOptions& scaling);

}  // namespace dpsosp
