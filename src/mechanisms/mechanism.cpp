// The mechanisms (include/dpsosp/mechanism.hpp): calibration, releases and
// the guarantee, one class each. Formulas: docs/privacy-accounting.md.
#include "dpsosp/mechanism.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"
#include "dpsosp/tree.hpp"
#include "mechanisms/checks.hpp"
#include "mechanisms/mechanism_rows.hpp"
#include "mechanisms/relations.hpp"
#include "mechanisms/secure.hpp"

namespace dpsosp {
namespace {

using detail::check_sensitivity;
using detail::check_target;
using detail::kInf;

class NoMechanism final : public Mechanism {
 public:
  MechanismKind kind() const override { return MechanismKind::kNone; }
  void release(const Vec& exact, bool, double, Vec& released) override { released = exact; }
  PrivacyRecord account() const override {
    PrivacyRecord r;
    r.epsilon = r.mu = r.epsilon_rdp = r.zcdp_rho = kInf;
    return r;
  }
};

// Tree: a fresh tree per phase; a record's leaf lies in depth(L_max) released
// nodes, each with sensitivity <= bound; trees see disjoint records.
class TreeMechanism final : public Mechanism {
 public:
  TreeMechanism(Index dim, const NoiseKey& key, double bound, Index max_phase_length, const PrivacyTarget& target,
                std::optional<double> sigma)
      : bound_(bound),
        max_phase_length_(max_phase_length),
        delta_(target.delta),
        sigma_(sigma ? *sigma : tree_noise_sigma(bound, max_phase_length, target, dim)),
        tree_(dim, sigma_, GaussianStream(key, StreamPurpose::kTreeNoise)) {
    if (!(sigma_ > 0) || !std::isfinite(sigma_)) throw Error("tree mechanism: sigma must be finite and > 0");
  }
  MechanismKind kind() const override { return MechanismKind::kTree; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    check_sensitivity("tree mechanism", sensitivity, bound_);
    if (restart) tree_.restart();
    if (tree_.step() >= max_phase_length_)
      throw Error("tree mechanism: a phase longer than the " + std::to_string(max_phase_length_) +
                  " steps the noise was calibrated for");
    released = exact + tree_.next();
  }
  PrivacyRecord account() const override {
    const privacy::TreeAccount a =
        privacy::account_tree(sigma_ / bound_, {static_cast<std::uint64_t>(max_phase_length_)}, delta_);
    PrivacyRecord r;
    r.mechanism = MechanismKind::kTree;
    r.adjacency = Adjacency::kReplaceOne;
    r.delta = delta_;
    r.epsilon = a.epsilon_gdp;
    r.epsilon_rdp = a.epsilon_rdp;
    r.mu = a.mu;
    r.zcdp_rho = a.rho;
    r.depth = a.depth;
    r.sigma = sigma_;
    r.sensitivity = bound_;
    r.noise_multiplier = sigma_ / bound_;
    detail::state_relations_of_replace_one(r);
    return r;
  }
  bool draws_ahead() const override { return true; }
  void draw_ahead(std::size_t count, std::size_t refill, int threads) override {
    tree_.draw_ahead(count, refill, threads);
  }

 private:
  double bound_;
  Index max_phase_length_;
  double delta_;
  double sigma_;
  TreeNoise tree_;
};

// Gaussian: each release N(0, (z s_t)^2 I), accumulated within a phase; each
// record in one release: (1/z)-GDP.
class GaussianMechanism final : public Mechanism {
 public:
  GaussianMechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target, double reported_sensitivity,
                    std::optional<double> z)
      : z_(z ? *z : gaussian_noise_multiplier(target)),
        delta_(target.delta),
        reported_(reported_sensitivity),
        stream_(key, StreamPurpose::kGaussianNoise),
        accumulated_(Vec::Zero(static_cast<Eigen::Index>(dim))),
        draw_(static_cast<Eigen::Index>(dim)) {
    if (!(z_ > 0) || !std::isfinite(z_)) throw Error("Gaussian mechanism: the noise multiplier must be finite and > 0");
  }
  MechanismKind kind() const override { return MechanismKind::kGaussian; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    // The noise scales with each release's sensitivity: any finite one is covered.
    check_sensitivity("Gaussian mechanism", sensitivity, std::numeric_limits<double>::max());
    if (restart) accumulated_.setZero();
    stream_.fill(draw_, z_ * sensitivity);
    accumulated_ += draw_;
    released = exact + accumulated_;
  }
  PrivacyRecord account() const override {
    PrivacyRecord r;
    r.mechanism = MechanismKind::kGaussian;
    r.adjacency = Adjacency::kReplaceOne;
    r.delta = delta_;
    r.noise_multiplier = z_;
    r.mu = 1.0 / z_;
    r.zcdp_rho = r.mu * r.mu / 2.0;
    r.epsilon = privacy::gdp_epsilon(r.mu, delta_);
    r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, delta_);
    r.depth = 1;
    r.sensitivity = reported_;
    r.sigma = z_ * reported_;
    detail::state_relations_of_replace_one(r);
    return r;
  }

 private:
  double z_, delta_, reported_;
  GaussianStream stream_;
  Vec accumulated_, draw_;
};

}  // namespace

namespace {

MechanismInfo no_mechanism_row() {
  MechanismInfo r;
  r.kind = MechanismKind::kNone;
  r.name = "none";
  r.summary = "no noise: the non-private references, no guarantee";
  r.accounting = [](const PrivacyRecord&) { return std::string("none (non-private)"); };
  return r;
}

MechanismInfo tree_mechanism_row() {
  MechanismInfo r;
  r.kind = MechanismKind::kTree;
  r.name = "tree";
  r.summary = "the binary tree mechanism, a fresh tree per phase (exact GDP; zCDP with secure noise)";
  r.accounting = [](const PrivacyRecord& p) {
    return std::string(p.noise == NoiseMode::kSecure ? "zcdp-tree-discrete" : "gdp-tree");
  };
  r.privacy_form = "tree";
  return r;
}

MechanismInfo gaussian_mechanism_row() {
  MechanismInfo r;
  r.kind = MechanismKind::kGaussian;
  r.name = "gaussian";
  r.summary = "Gaussian noise on every release, one release per record (exact GDP; zCDP with secure noise)";
  r.accounting = [](const PrivacyRecord& p) {
    return std::string(p.noise == NoiseMode::kSecure ? "zcdp-gaussian-discrete" : "gdp-gaussian");
  };
  r.privacy_form = "tree";  // phases of one release each: depth 1
  return r;
}

}  // namespace

const std::vector<MechanismInfo>& mechanism_table() {
  static const std::vector<MechanismInfo> table = [] {
    std::vector<MechanismInfo> rows = {no_mechanism_row(), tree_mechanism_row(), gaussian_mechanism_row()};
    for (MechanismInfo& r : poisson_mechanism_rows()) rows.push_back(std::move(r));
    rows.push_back(mf_mechanism_row());
    return rows;
  }();
  return table;
}

const MechanismInfo& mechanism_info(MechanismKind kind) {
  for (const MechanismInfo& r : mechanism_table())
    if (r.kind == kind) return r;
  throw Error("unknown mechanism");
}

std::string mechanism_name(MechanismKind kind) { return mechanism_info(kind).name; }

std::string PrivacyRecord::accounting() const { return mechanism_info(mechanism).accounting(*this); }

double tree_noise_sigma(double sensitivity_bound, Index max_phase_length, const PrivacyTarget& target, Index dim) {
  check_target("tree mechanism", target);
  if (target.noise == NoiseMode::kSecure) {
    const double depth = privacy::tree_depth(static_cast<std::uint64_t>(max_phase_length));
    const DiscreteNoise n = discrete_noise(sensitivity_bound, dim,
                                           std::sqrt(depth / (2 * privacy::zcdp_rho(target.epsilon, target.delta))));
    return n.grid * static_cast<double>(n.scale);
  }
  return privacy::calibrate_tree_sigma(sensitivity_bound, max_phase_length, target.epsilon, target.delta);
}

double gaussian_noise_multiplier(const PrivacyTarget& target) {
  check_target("Gaussian mechanism", target);
  // (1 + 1e-12: 1 / (2 z^2) stays below the calibrated rho through the roundings.)
  if (target.noise == NoiseMode::kSecure)
    return (1 + 1e-12) / std::sqrt(2 * privacy::zcdp_rho(target.epsilon, target.delta));
  return 1.0 / privacy::gdp_mu(target.epsilon, target.delta);
}

std::unique_ptr<Mechanism> make_no_mechanism() { return std::make_unique<NoMechanism>(); }

std::unique_ptr<Mechanism> make_tree_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound,
                                               Index max_phase_length, const PrivacyTarget& target,
                                               std::optional<double> sigma) {
  check_target("tree mechanism", target);
  if (!(sensitivity_bound > 0) || !std::isfinite(sensitivity_bound))
    throw Error("tree mechanism: the sensitivity bound must be finite and > 0");
  if (max_phase_length < 1) throw Error("tree mechanism: the phase length must be at least 1");
  if (target.noise == NoiseMode::kSecure)
    return make_secure_tree_mechanism(dim, key, sensitivity_bound, max_phase_length, target, sigma);
  return std::make_unique<TreeMechanism>(dim, key, sensitivity_bound, max_phase_length, target, sigma);
}

std::unique_ptr<Mechanism> make_gaussian_mechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target,
                                                   double reported_sensitivity,
                                                   std::optional<double> noise_multiplier) {
  check_target("Gaussian mechanism", target);
  if (target.noise == NoiseMode::kSecure)
    return make_secure_gaussian_mechanism(dim, key, target, reported_sensitivity, noise_multiplier);
  return std::make_unique<GaussianMechanism>(dim, key, target, reported_sensitivity, noise_multiplier);
}

}  // namespace dpsosp
