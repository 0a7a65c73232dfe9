// A privacy budget shared by runs (budget.hpp, docs/budget.md): each run's
// curve, planned before it reads a record, and the ledger's exact composition.
#include "dpsosp/budget.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

#include "dpsosp/error.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

using privacy::PrivacyLossDistribution;

// A figure to 4 significant digits.
std::string shown(double v) {
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

// The covering Gaussian of a Poisson curve whose estimate's records need one:
// the smallest nu (bisection to a relative 1e-3, the feasible end kept) with
// B o N(nu) dominating both B and A = N(estimate_mu), B the run's records'
// curve. nu = estimate_mu always dominates A (B o N(a) dominates N(a)), so the
// bracket holds a feasible end from the start.
double find_cover(const PrivacyLossDistribution& run, double estimate_mu) {
  const PrivacyLossDistribution estimate = privacy::gaussian_pld(1.0, estimate_mu);
  if (run.dominates(estimate)) return 0;
  double lo = 0, hi = estimate_mu;
  while (hi - lo > 1e-3 * hi) {
    const double mid = 0.5 * (lo + hi);
    (run.compose(privacy::gaussian_pld(1.0, mid)).dominates(estimate) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double PrivacyCurve::cover_mu() const {
  if (form != "poisson" || estimate_mu <= 0) return 0;
  static std::mutex mutex;
  static std::map<std::tuple<double, double, std::uint64_t, double, double>, double> memo;
  const auto key = std::make_tuple(sampling_rate, noise_multiplier, steps, prior_mu, estimate_mu);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
  }
  const double cover = find_cover(
      privacy::dpsgd_pld(sampling_rate, noise_multiplier / 2, steps, privacy::Neighbouring::kReplaceOne, {}, prior_mu),
      estimate_mu);
  std::lock_guard<std::mutex> lock(mutex);
  return memo.emplace(key, cover).first->second;
}

PrivacyLossDistribution PrivacyCurve::pld() const {
  if (form == "gdp") return privacy::gaussian_pld(1.0, mu);
  // replace-one: the multiplier of the 2C-sensitive release is z / 2 (poisson.cpp).
  PrivacyLossDistribution run =
      privacy::dpsgd_pld(sampling_rate, noise_multiplier / 2, steps, privacy::Neighbouring::kReplaceOne, {}, prior_mu);
  const double cover = cover_mu();
  return cover > 0 ? run.compose(privacy::gaussian_pld(1.0, cover)) : run;
}

nlohmann::json PrivacyCurve::to_json() const {
  if (form == "gdp") return {{"form", form}, {"mu", mu}};
  return {{"form", form},   {"sampling_rate", sampling_rate}, {"noise_multiplier", noise_multiplier},
          {"steps", steps}, {"prior_mu", prior_mu},           {"estimate_mu", estimate_mu}};
}

PrivacyCurve PrivacyCurve::from_json(const nlohmann::json& j, const std::string& where) {
  auto fail = [&](const std::string& why) -> PrivacyCurve { throw Error(where + ": " + why); };
  if (!j.is_object() || !j.contains("form") || !j["form"].is_string())
    return fail("a privacy curve is an object with a \"form\" (\"gdp\" or \"poisson\")");
  auto number = [&](const char* key, bool positive) {
    if (!j.contains(key) || !j[key].is_number()) fail(std::string("the curve has no number \"") + key + "\"");
    const double v = j[key].get<double>();
    if (!std::isfinite(v) || v < 0 || (positive && v == 0))
      fail(std::string("the curve's ") + key + " = " + shown(v) + " must be finite and " + (positive ? "> 0" : ">= 0"));
    return v;
  };
  PrivacyCurve c;
  c.form = j["form"].get<std::string>();
  if (c.form == "gdp") {
    c.mu = number("mu", true);
  } else if (c.form == "poisson") {
    c.sampling_rate = number("sampling_rate", true);
    if (c.sampling_rate > 1) fail("the curve's sampling_rate must be at most 1");
    c.noise_multiplier = number("noise_multiplier", true);
    const double steps = number("steps", true);
    if (steps != std::floor(steps) || steps > 1e15) fail("the curve's steps must be a whole number");
    c.steps = static_cast<std::uint64_t>(steps);
    c.prior_mu = number("prior_mu", false);
    c.estimate_mu = number("estimate_mu", false);
  } else {
    fail("unknown curve form \"" + c.form + "\" (expected \"gdp\" or \"poisson\")");
  }
  return c;
}

std::optional<PrivacyCurve> run_privacy_curve(const ScaledSummary& run) {
  const PrivacyRecord& p = run.summary.privacy;
  if (!p.is_private()) return std::nullopt;
  if (p.noise == NoiseMode::kSecure)
    throw Error(
        "budget: secure noise is accounted by zCDP, which has no privacy curve to compose; give such runs their own "
        "target, or use float noise");
  const Scaling& s = run.scaling;
  // A shared G/M estimate is in the run's prior (p.prior_mu); a reserved one
  // saw other records.
  const double estimate = run.summary.estimate && !run.summary.estimate->shared ? run.summary.estimate->mu : 0.0;
  PrivacyCurve c;
  if (mechanism_info(p.mechanism).poisson) {
    c.form = "poisson";
    c.sampling_rate = p.sampling_rate;
    c.noise_multiplier = p.noise_multiplier;
    c.steps = p.cycles;
    // The scale estimate: composed by PLD (the record's prior) or, under RDP,
    // by basic composition in the report; here exactly, either way.
    c.prior_mu = std::max(p.prior_mu, s.composition == "pld" || s.composition == "basic" ? s.mu : 0.0);
    if (estimate > 0) c.estimate_mu = std::hypot(estimate, c.prior_mu);
    return c;
  }
  // GDP: the stated replace-one figure is a GDP figure (the run's mu, its
  // scale estimate composed in); a G/M estimate's records saw its counts and
  // the scale estimate's histograms.
  c.form = "gdp";
  c.mu = p.adjacency == Adjacency::kReplaceOne ? p.mu : privacy::gdp_mu(p.epsilon_replace_one, p.delta) * (1 + 1e-9);
  if (estimate > 0) c.mu = std::max(c.mu, std::hypot(estimate, s.composition == "gdp" ? s.mu : 0.0));
  return c;
}

std::optional<PrivacyCurve> planned_privacy_curve(const Model& model, const Dataset& records, const Vec& x0,
                                                  const RunOptions& options, const ScalingOptions& scaling) {
  if (!options.is_private_run()) return std::nullopt;
  if (options.process_group) throw Error("budget: a run of several processes is not charged to a budget");
  const Index n = records.rows(), p = records.cols();
  const Vec labels = records.has_labels() ? Vec::Zero(n) : Vec();
  const Dataset zeros =
      records.is_sparse() ? Dataset(SparseRowMatrix(n, p), labels) : Dataset(RowMatrix::Zero(n, p), labels);
  RunOptions o = options;
  static const std::atomic<bool> stop{true};
  o.stop_flag = &stop;
  o.on_step = nullptr;
  o.noise_key.reset();  // a fresh key: nothing of the user's key meets the zeros
  return run_privacy_curve(minimize_scaled(model, zeros, x0, o, scaling));
}

Budget::Budget(double epsilon, double delta) : epsilon_(epsilon), delta_(delta) {
  if (!(epsilon > 0) || !std::isfinite(epsilon))
    throw Error("budget: epsilon = " + shown(epsilon) + ": must be finite and > 0");
  if (!(delta > 0 && delta < 1)) throw Error("budget: delta = " + shown(delta) + ": must be in (0, 1)");
}

double Budget::spent() const { return total_ ? total_->epsilon(delta_) : 0.0; }

double Budget::spent_with(const PrivacyCurve& curve) const {
  const PrivacyLossDistribution c = curve.pld();
  return (total_ ? total_->compose(c) : c).epsilon(delta_);
}

double Budget::remaining() const {
  const double top = privacy::gdp_mu(epsilon_, delta_);
  auto fits = [&](double mu) {
    const PrivacyLossDistribution g = privacy::gaussian_pld(1.0, mu);
    return (total_ ? total_->compose(g) : g).epsilon(delta_) <= epsilon_;
  };
  if (!fits(1e-3 * top)) return 0;
  double lo = 1e-3 * top, hi = top;
  if (fits(hi)) return privacy::gdp_epsilon(hi, delta_);
  while (hi - lo > 1e-4 * hi) {
    const double mid = 0.5 * (lo + hi);
    (fits(mid) ? lo : hi) = mid;
  }
  return privacy::gdp_epsilon(lo, delta_);
}

void Budget::check(const PrivacyCurve& curve, const std::string& label) const {
  const double with = spent_with(curve);
  if (with <= epsilon_) return;
  std::ostringstream os;
  os << "budget: " << label << " would take the budget's spending to epsilon " << shown(with) << " at delta "
     << shown(delta_) << ", past its epsilon " << shown(epsilon_) << " (" << ledger_.size()
     << (ledger_.size() == 1 ? " run" : " runs") << " charged so far, epsilon " << shown(spent())
     << "); it was not run";
  throw Error(os.str());
}

void Budget::charge(const PrivacyCurve& curve, const std::string& label) {
  const PrivacyLossDistribution c = curve.pld();
  total_ = total_ ? total_->compose(c) : c;
  ledger_.push_back({label, curve, c.epsilon(delta_)});
}

nlohmann::json Budget::to_json() const {
  nlohmann::json ledger = nlohmann::json::array();
  for (const Charge& c : ledger_) {
    nlohmann::json curve = c.curve.to_json();
    if (c.curve.cover_mu() > 0) curve["cover_mu"] = c.curve.cover_mu();
    ledger.push_back({{"label", c.label}, {"curve", curve}, {"epsilon", c.epsilon}});
  }
  return {{"format", "dpsosp-budget"},  {"epsilon", epsilon_}, {"delta", delta_},
          {"adjacency", "replace-one"}, {"spent", spent()},    {"ledger", ledger}};
}

Budget Budget::from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || j.value("format", "") != "dpsosp-budget")
    throw Error(where +
                ": not a budget (a JSON object with \"format\": \"dpsosp-budget\"; dpsosp budget --new makes one)");
  if (!j.contains("epsilon") || !j["epsilon"].is_number() || !j.contains("delta") || !j["delta"].is_number())
    throw Error(where + ": the budget has no numbers \"epsilon\" and \"delta\"");
  Budget b(j["epsilon"].get<double>(), j["delta"].get<double>());
  const nlohmann::json ledger = j.value("ledger", nlohmann::json::array());
  if (!ledger.is_array()) throw Error(where + ": the budget's \"ledger\" is not a list");
  for (std::size_t i = 0; i < ledger.size(); ++i) {
    const std::string at = where + ": ledger entry " + std::to_string(i + 1);
    if (!ledger[i].is_object() || !ledger[i].contains("curve"))
      throw Error(at + ": an entry is an object with a \"curve\"");
    b.charge(PrivacyCurve::from_json(ledger[i]["curve"], at), ledger[i].value("label", std::string()));
  }
  return b;
}

ScaledSummary minimize_charged(Budget& budget, const std::string& label, const Model& model, const Dataset& data,
                               const Vec& x0, const RunOptions& options, const ScalingOptions& scaling) {
  if (!options.is_private_run()) throw Error("budget: " + label + " is not private; a budget charges private runs");
  const std::optional<PrivacyCurve> planned = planned_privacy_curve(model, data, x0, options, scaling);
  budget.check(*planned, label);
  ScaledSummary run;
  try {
    run = minimize_scaled(model, data, x0, options, scaling);
  } catch (...) {
    budget.charge(*planned, label + " (failed)");  // its estimates may have read the records
    throw;
  }
  const std::optional<PrivacyCurve> curve = run_privacy_curve(run);
  budget.charge(curve ? *curve : *planned, label);
  return run;
}

}  // namespace dpsosp
