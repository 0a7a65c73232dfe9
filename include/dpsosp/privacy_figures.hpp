// dpsosp: the privacy figures of a mechanism for a given noise multiplier and
// schedule, what `dpsosp privacy` prints and dpsosp.privacy returns, built
// once here from the privacy forms (one per way a run's guarantee is
// reproduced: the tree, the matrix factorization, Poisson sampling; each
// mechanism's MechanismInfo::privacy_form names its own) and the accountant
// table (target.hpp). docs/privacy-accounting.md has the formulas.
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "dpsosp/options.hpp"

namespace dpsosp {

/// A privacy form's row: its name (the value of "mechanism" that selects it,
/// or "poisson", selected by a sampling rate), a line of help, the accountants
/// it states figures for (AccountantInfo::forms), its default relation.
struct PrivacyFormInfo {
  std::string name;
  std::string summary;
  std::string default_adjacency;  ///< "replace-one" or "add-remove"
};
const std::vector<PrivacyFormInfo>& privacy_form_table();

/// The keys a question takes, as the front ends name them (CLI --noise-multiplier,
/// Python noise_multiplier): noise_multiplier, steps, delta, sampling_rate,
/// mechanism, period, accountant, adjacency, prior_mu, epsilon, discretization,
/// target_epsilon (instead of noise_multiplier: the multiplier for that target,
/// calibrated by the accountant asked for or the form's own: gdp for the tree
/// and mf forms, pld for the Poisson form; then the figures at it).
const std::vector<std::string>& privacy_question_keys();

/// The figures for the options given (text by key, as typed; steps as
/// "L1,L2,..."): epsilon by every accountant that applies (or the one asked
/// for, then also "epsilon"), the form's constants, delta at "epsilon" if
/// given. A bad or inapplicable option throws Error in `front_end`'s words.
nlohmann::json privacy_figures(const std::map<std::string, std::string>& values, FrontEnd front_end);

}  // namespace dpsosp
