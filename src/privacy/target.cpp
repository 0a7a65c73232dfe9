// PrivacyTarget and its enums' names (target.hpp).
#include "dpsosp/target.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {

std::string noise_mode_name(NoiseMode mode) { return mode == NoiseMode::kSecure ? "secure" : "float"; }

void PrivacyTarget::Validate() const {
  if (!(epsilon > 0.0)) {
    std::ostringstream os;
    os << "PrivacyTarget: epsilon must be > 0 (or infinity for a non-private run), got " << epsilon;
    throw Error(os.str());
  }
  if (is_private() && !(delta > 0.0 && delta < 1.0)) {
    std::ostringstream os;
    os << "PrivacyTarget: delta must lie in (0, 1), got " << delta;
    throw Error(os.str());
  }
  if (adjacency == Adjacency::kNone)
    throw Error("PrivacyTarget: adjacency must be replace-one or zero-out (or unset: the run's own), got none");
  if (!(prior_mu >= 0) || !std::isfinite(prior_mu)) {
    std::ostringstream os;
    os << "PrivacyTarget: prior_mu must be finite and >= 0, got " << prior_mu;
    throw Error(os.str());
  }
  if (prior_mu > 0 && is_private() && !(run_gdp_mu() > 0)) {
    std::ostringstream os;
    os << "PrivacyTarget: prior_mu = " << prior_mu << " spends the whole target (" << epsilon << ", " << delta << ")";
    throw Error(os.str());
  }
}

double PrivacyTarget::run_gdp_mu() const {
  const double mu = privacy::gdp_mu(epsilon, delta);
  return prior_mu > 0 ? std::sqrt(std::max(0.0, mu * mu - prior_mu * prior_mu)) : mu;
}

const std::vector<AccountantInfo>& accountant_table() {
  static const std::vector<AccountantInfo> table = {
      {"pld",
       "privacy-loss distribution, pessimistic rounding (the tighter guarantee; Poisson runs' default)",
       Accountant::kPld,
       {"tree", "poisson"}},
      {"rdp",
       "Renyi DP on dp_accounting's order grid (add/remove only for Poisson sampling)",
       Accountant::kRdp,
       {"tree", "poisson"}},
      {"gdp", "exact Gaussian DP (the single-pass mechanisms' own accounting)", std::nullopt, {"tree", "mf"}},
  };
  return table;
}

const AccountantInfo& accountant_info(const std::string& name) {
  std::string names;
  for (const AccountantInfo& a : accountant_table()) {
    if (a.name == name) return a;
    names += (names.empty() ? "" : ", ") + a.name;
  }
  throw Error("unknown accountant '" + name + "' (expected one of " + names + ")");
}

std::string accountant_name(Accountant a) {
  for (const AccountantInfo& row : accountant_table())
    if (row.run == a) return row.name;
  throw Error("unknown accountant");
}

std::string adjacency_name(Adjacency a) {
  switch (a) {
    case Adjacency::kNone: return "none";
    case Adjacency::kReplaceOne: return "replace-one";
    case Adjacency::kZeroOut: return "zero-out";
  }
  return "unknown";
}

}  // namespace dpsosp
