// The privacy forms (privacy_figures.hpp): the question read once in the
// front end's words, then the figures of the tree, matrix-factorization and
// Poisson forms by the accountants of the accountant table that apply.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "dpsosp/privacy_figures.hpp"
#include "dpsosp/report.hpp"
#include "dpsosp/target.hpp"
#include "dpsosp/text.hpp"

namespace dpsosp {
namespace {

// What was asked, read and checked: the form, the accountants that apply.
struct Question {
  FrontEnd front_end = FrontEnd::kCli;
  std::map<std::string, std::string> values;
  std::string form;
  double z = 0, delta = 0;
  std::vector<std::uint64_t> steps;
  std::string adjacency;
  bool replace = false;
  std::string chosen;  // the accountant asked for; empty: every one that applies
  std::optional<double> at_epsilon;
  privacy::PldOptions pld;

  std::string word(const std::string& key) const {
    if (front_end == FrontEnd::kPython) return key;
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    return flag;
  }
  bool given(const std::string& key) const { return values.count(key) > 0; }
  double real(const std::string& key, ValueRule rule) const {
    return parse_option_real(values.at(key), word(key), rule, front_end);
  }
  // Whether the accountant's figures are stated: asked for, or (none asked
  // for) every accountant that applies to the form.
  bool uses(const std::string& accountant) const { return chosen.empty() || chosen == accountant; }
  // The single-pass forms' z is relative to the replace-one bound; a record
  // replaced by a null record moves each release by half of it.
  double single_pass_z() const { return replace ? z : 2 * z; }
};

std::vector<std::uint64_t> parse_steps(const std::string& text, const std::string& word) {
  std::vector<std::uint64_t> steps;
  if (text.empty()) throw Error(word + ": no step counts given");
  std::size_t pos = 0;
  for (;;) {
    const std::size_t comma = text.find(',', pos);
    const std::string token = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::uint64_t v = 0;
    if (!parse_strict_uint(token, v) || v == 0)
      throw Error(word + ": expected positive integers separated by commas, got " + quote_token(token) +
                  (token.empty() ? " (an empty entry)" : ""));
    steps.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return steps;
}

// The mf form's factorization over its horizon T, the period P of a record's
// releases (0: one each) and the largest sensitivity of C u per unit of a
// release's (the column norm, or the norm of columns P apart moved together).
struct MfShape {
  BltFactorization f;
  Index period = 0;
  double column = 0;
};
MfShape mf_shape(const Question& a) {
  if (a.steps.size() != 1)
    throw Error(a.word("steps") + ": the mf form takes one horizon T, got " + std::to_string(a.steps.size()));
  MfShape m{BltFactorization::square_root(a.steps[0])};
  if (a.given("period"))
    m.period =
        static_cast<Index>(parse_option_count(a.values.at("period"), a.word("period"), 0, a.steps[0], a.front_end));
  m.column = m.period > 0 && m.period < a.steps[0] ? m.f.cyclic_participation_norm(a.steps[0], m.period)
                                                   : m.f.max_column_norm(a.steps[0]);
  return m;
}

// The Poisson form's sampling rate (its one step count checked).
double poisson_rate(const Question& a) {
  const double q = a.real("sampling_rate", ValueRule::kHalfOpenUnit);
  if (a.steps.size() != 1)
    throw Error(a.word("steps") + ": the Poisson form takes one step count T, got " + std::to_string(a.steps.size()));
  return q;
}

nlohmann::json poisson_figures(const Question& a) {
  const double q = poisson_rate(a);
  if (a.chosen == "rdp" && a.replace)
    throw Error(a.word("accountant") + " rdp: the RDP figure is for add/remove adjacency; use pld with " +
                a.word("adjacency") + " replace-one");
  const auto relation = a.replace ? privacy::Neighbouring::kReplaceOne : privacy::Neighbouring::kAddRemove;
  const double prior = a.given("prior_mu") ? a.real("prior_mu", ValueRule::kPositive) : 0.0;
  if (prior > 0 && a.chosen == "rdp") throw Error(a.word("prior_mu") + ": composed by PLD only; use pld");
  nlohmann::json j;
  double epsilon = 0;
  if (prior > 0) j["prior_mu"] = report_number(prior);
  const bool use_rdp = a.uses("rdp") && !a.replace;
  if (use_rdp && prior == 0)
    j["epsilon_rdp"] = report_number(epsilon = privacy::dpsgd_poisson_epsilon(q, a.z, a.steps[0], a.delta));
  if (a.uses("pld")) {
    try {
      j["epsilon_pld"] =
          report_number(epsilon = privacy::dpsgd_pld_epsilon(q, a.z, a.steps[0], a.delta, relation, a.pld, prior));
      j["epsilon_pld_optimistic"] =
          report_number(privacy::dpsgd_pld_epsilon_optimistic(q, a.z, a.steps[0], a.delta, relation, a.pld, prior));
      if (a.at_epsilon)
        j["delta_pld"] = privacy::dpsgd_pld_delta(q, a.z, a.steps[0], *a.at_epsilon, relation, a.pld, prior);
    } catch (const Error& e) {
      // Asked for, the PLD's failure (too many bins) is the answer; by
      // default the other accountants' figures still stand.
      if (!a.chosen.empty() || !use_rdp || prior > 0) throw;
      j["epsilon_pld"] = nullptr;
      j["pld_error"] = e.what();
    }
    j["discretization"] = a.pld.discretization;
  }
  j["form"] = "poisson-subsampled-gaussian";
  j["adjacency"] = a.replace ? "replace-one" : a.adjacency == "zero-out" ? "zero-out" : "add/remove-one";
  if (!a.chosen.empty()) j["epsilon"] = report_number(epsilon);
  return j;
}

nlohmann::json mf_figures(const Question& a) {
  const MfShape m = mf_shape(a);
  const double mu = m.column / a.single_pass_z();
  nlohmann::json j;
  j["epsilon_gdp"] = report_number(privacy::gdp_epsilon(mu, a.delta));
  j["mu"] = report_number(mu);
  j["rho"] = report_number(mu * mu / 2);
  j["epsilon_rdp"] = report_number(privacy::zcdp_to_epsilon(mu * mu / 2, a.delta));
  if (a.at_epsilon) j["delta_gdp"] = privacy::gdp_delta(mu, *a.at_epsilon);
  j["column_norm"] = m.column;
  j["buffers"] = m.f.buffers();
  j["horizon"] = a.steps[0];
  if (m.period > 0) j["period"] = m.period;
  j["form"] = "matrix-factorization";
  j["adjacency"] = a.replace ? "replace-one" : "zero-out";
  if (!a.chosen.empty()) j["epsilon"] = j["epsilon_gdp"];
  return j;
}

nlohmann::json tree_figures(const Question& a) {
  const double z = a.single_pass_z();
  const privacy::TreeAccount t = privacy::account_tree(z, a.steps, a.delta);
  nlohmann::json j;
  double epsilon = 0;
  if (a.uses("gdp")) {
    j["epsilon_gdp"] = report_number(epsilon = t.epsilon_gdp);
    j["mu"] = report_number(t.mu);
    if (a.at_epsilon) j["delta_gdp"] = privacy::gdp_delta(t.mu, *a.at_epsilon);
  }
  if (a.uses("rdp")) {
    j["epsilon_rdp"] = report_number(epsilon = t.epsilon_rdp);
    j["rho"] = report_number(t.rho);
  }
  if (a.uses("pld")) {
    try {
      j["epsilon_pld"] = report_number(epsilon = privacy::tree_pld_epsilon(z, t.depth, a.delta, a.pld));
      if (a.at_epsilon && t.depth > 0)
        j["delta_pld"] = privacy::gaussian_pld(z, std::sqrt(static_cast<double>(t.depth)), a.pld).delta(*a.at_epsilon);
    } catch (const Error& e) {
      if (!a.chosen.empty()) throw;  // as in the Poisson form
      j["epsilon_pld"] = nullptr;
      j["pld_error"] = e.what();
    }
    j["discretization"] = a.pld.discretization;
  }
  j["depth"] = t.depth;
  j["form"] = "tree";
  j["adjacency"] = a.replace ? "replace-one" : "zero-out";
  if (!a.chosen.empty()) j["epsilon"] = report_number(epsilon);
  return j;
}

// The single-pass forms calibrate a release's multiplier at the replace-one
// bound; a zero-out question's z is relative to half of it (single_pass_z).
double from_single_pass_z(const Question& a, double z) { return a.replace ? z : z / 2; }

// Tree: mu = sqrt(depth) / z by exact GDP (the PLD of a Gaussian is the same
// curve), or rho = depth / (2 z^2) by zCDP for rdp.
double tree_calibrate(const Question& a, double epsilon, std::string& accountant) {
  const double depth = privacy::tree_depth(*std::max_element(a.steps.begin(), a.steps.end()));
  accountant = a.chosen == "rdp" ? "rdp" : "gdp";
  const double mu =
      accountant == "rdp" ? std::sqrt(2 * privacy::zcdp_rho(epsilon, a.delta)) : privacy::gdp_mu(epsilon, a.delta);
  return from_single_pass_z(a, std::sqrt(depth) / mu);
}

// mf: mu = column / z by exact GDP.
double mf_calibrate(const Question& a, double epsilon, std::string& accountant) {
  accountant = "gdp";
  return from_single_pass_z(a, mf_shape(a).column / privacy::gdp_mu(epsilon, a.delta));
}

// Poisson: by PLD (the default, either relation, with a prior) or RDP (add/remove).
double poisson_calibrate(const Question& a, double epsilon, std::string& accountant) {
  const double q = poisson_rate(a);
  const double prior = a.given("prior_mu") ? a.real("prior_mu", ValueRule::kPositive) : 0.0;
  accountant = a.chosen == "rdp" ? "rdp" : "pld";
  if (accountant == "rdp") {
    if (a.replace || prior > 0)
      throw Error(a.word("accountant") + " rdp: calibrates add/remove runs without a prior only; use pld");
    return privacy::calibrate_dpsgd_noise(q, a.steps[0], epsilon, a.delta);
  }
  const auto relation = a.replace ? privacy::Neighbouring::kReplaceOne : privacy::Neighbouring::kAddRemove;
  return privacy::calibrate_dpsgd_noise_pld(q, a.steps[0], epsilon, a.delta, relation, a.pld, prior);
}

struct Form {
  PrivacyFormInfo info;
  nlohmann::json (*figures)(const Question&);
  /// The noise multiplier (in the question's terms) for which the form's
  /// guarantee at delta is `epsilon` by `accountant`; the accountant's name.
  double (*calibrate)(const Question&, double epsilon, std::string& accountant);
};

const std::vector<Form>& forms() {
  static const std::vector<Form> table = {
      {{"tree", "the tree mechanism's phases (phase lengths in steps; phases of 1: the Gaussian mechanism)",
        "replace-one"},
       tree_figures,
       tree_calibrate},
      {{"mf", "the square-root matrix factorization over steps T releases (period P: every record P apart)",
        "replace-one"},
       mf_figures,
       mf_calibrate},
      {{"poisson", "T Poisson-subsampled Gaussian steps at sampling_rate q (also the banded mechanism's cycles)",
        "add-remove"},
       poisson_figures,
       poisson_calibrate},
  };
  return table;
}

const Form& form_named(const Question& a, const std::string& name) {
  std::string names;
  for (const Form& f : forms()) {
    if (f.info.name == name) return f;
    if (f.info.name != "poisson") names += (names.empty() ? "" : " or ") + f.info.name;
  }
  throw Error(a.word("mechanism") + ": expected " + names + ", got " + quote_token(name));
}

}  // namespace

const std::vector<PrivacyFormInfo>& privacy_form_table() {
  static const std::vector<PrivacyFormInfo> table = [] {
    std::vector<PrivacyFormInfo> rows;
    for (const Form& f : forms()) rows.push_back(f.info);
    return rows;
  }();
  return table;
}

const std::vector<std::string>& privacy_question_keys() {
  static const std::vector<std::string> keys = {"noise_multiplier", "steps",   "delta",          "sampling_rate",
                                                "mechanism",        "period",  "accountant",     "adjacency",
                                                "prior_mu",         "epsilon", "discretization", "target_epsilon"};
  return keys;
}

nlohmann::json privacy_figures(const std::map<std::string, std::string>& values, FrontEnd front_end) {
  Question a;
  a.front_end = front_end;
  a.values = values;
  const std::vector<std::string>& keys = privacy_question_keys();
  for (const auto& [key, text] : values)
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) throw Error("unknown privacy option " + a.word(key));
  for (const char* key : {"steps", "delta"})
    if (!a.given(key)) throw Error(a.word(key) + ": required");
  const bool calibrating = a.given("target_epsilon");
  if (calibrating == a.given("noise_multiplier"))
    throw Error(a.word("noise_multiplier") + ": give it or " + a.word("target_epsilon") +
                " (the noise multiplier for a target), one of the two");
  if (!calibrating) a.z = a.real("noise_multiplier", ValueRule::kPositive);
  a.delta = a.real("delta", ValueRule::kOpenUnit);
  a.steps = parse_steps(values.at("steps"), a.word("steps"));
  const bool poisson = a.given("sampling_rate");
  if (poisson && a.given("mechanism"))
    throw Error(a.word("mechanism") + ": applies to the single-pass form; " + a.word("sampling_rate") +
                " selects the Poisson form");
  a.form = poisson ? "poisson" : a.given("mechanism") ? values.at("mechanism") : "tree";
  const Form& form = form_named(a, a.form);
  if (a.given("accountant")) {
    a.chosen = values.at("accountant");
    if (a.chosen.empty()) throw Error(a.word("accountant") + ": empty");
    const AccountantInfo* info = nullptr;
    try {
      info = &accountant_info(a.chosen);
    } catch (const Error&) {
      std::string names;
      for (const AccountantInfo& r : accountant_table()) names += (names.empty() ? "" : ", ") + r.name;
      throw Error(a.word("accountant") + ": expected one of " + names + ", got " + quote_token(a.chosen));
    }
    if (std::find(info->forms.begin(), info->forms.end(), a.form) == info->forms.end()) {
      std::string names;
      for (const AccountantInfo& r : accountant_table())
        if (std::find(r.forms.begin(), r.forms.end(), a.form) != r.forms.end())
          names += (names.empty() ? "" : " or ") + r.name;
      throw Error(a.word("accountant") + " " + a.chosen + ": the " + a.form + " form has no " + a.chosen +
                  " figures; it is accounted by " + names);
    }
  }
  a.adjacency = a.given("adjacency") ? values.at("adjacency") : form.info.default_adjacency;
  if (a.adjacency != "add-remove" && a.adjacency != "zero-out" && a.adjacency != "replace-one")
    throw Error(a.word("adjacency") + ": expected zero-out, add-remove or replace-one, got " +
                quote_token(a.adjacency));
  a.replace = a.adjacency == "replace-one";
  if (a.given("prior_mu") && !poisson)
    throw Error(a.word("prior_mu") + ": applies to the Poisson form (" + a.word("sampling_rate") + ")");
  if (a.given("period") && a.form != "mf")
    throw Error(a.word("period") + ": applies to the mf form (" + a.word("mechanism") + " mf)");
  if (a.given("epsilon")) a.at_epsilon = a.real("epsilon", ValueRule::kNonNegative);
  a.pld.discretization = a.given("discretization") ? a.real("discretization", ValueRule::kPositive) : 1e-4;
  std::string calibrated_by;
  if (calibrating) a.z = form.calibrate(a, a.real("target_epsilon", ValueRule::kPositive), calibrated_by);
  nlohmann::json j = form.figures(a);
  if (!a.chosen.empty()) j["accountant"] = a.chosen;
  if (calibrating) {
    j["noise_multiplier"] = a.z;
    j["target_epsilon"] = a.real("target_epsilon", ValueRule::kPositive);
    j["calibrated_by"] = calibrated_by;
  }
  return j;
}

}  // namespace dpsosp
