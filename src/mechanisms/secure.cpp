// The secure noise mode (docs/noise.md, "Secure mode"): every release is a
// multiple of a power-of-two grid, the grid value of a rounded exact value
// plus discrete Gaussian noise drawn on integers. A released double is then
// grid * (an integer below 2^53): exact, with no low-order bits left to the
// data. Accounting: the discrete Gaussian with integer shifts has the
// continuous Gaussian's Renyi divergence bound (docs/privacy-accounting.md,
// "Secure mode"), so a rounded release of L2 sensitivity s + grid sqrt(d)
// with noise scale S (grid units) is ((s/grid + sqrt(d))^2 / (2 S^2))-zCDP.
#include "mechanisms/secure.hpp"
#include "mechanisms/checks.hpp"
#include "mechanisms/relations.hpp"

#include <omp.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

// Rounded values stay within 2^50 grid units (a clamp is 1-Lipschitz in each
// coordinate, so it adds nothing to the sensitivity), noise within 64 * 2^28:
// sums of a phase's nodes stay far below 2^53, exact in doubles.
constexpr double kClamp = 1125899906842624.0;  // 2^50

int team_size() { return omp_in_parallel() ? 1 : std::max(1, omp_get_max_threads()); }

}  // namespace

void round_and_add(const Vec& value, double grid, const Vec& noise, Vec& out) {
  const Eigen::Index d = value.size();
  out.resize(d);
  for (Eigen::Index j = 0; j < d; ++j) {
    double r = std::nearbyint(value[j] / grid);  // ties to even: a fixed rule
    if (!(r <= kClamp)) r = std::isnan(r) ? 0.0 : kClamp;
    if (r < -kClamp) r = -kClamp;
    out[j] = r + noise[j];
  }
}

namespace {

using detail::check_sensitivity;

// The tree on rounded node sums: node (t - 2^k, t] is round((P_t -
// P_{t-2^k}) / grid) + N_Z(0, scale^2), P the exact prefix sums the caller
// releases; TREE(t) = grid * (sum of the popcount(t) nodes of [1, t]), kept
// as running sums per open node as TreeNoise does (tree.cpp). The next
// node's noise is drawn when a release ends (and the first at the start), so
// no draw waits on, or follows, the data of its step.
class SecureTreeMechanism final : public Mechanism {
 public:
  SecureTreeMechanism(Index dim, const NoiseKey& key, double bound, Index max_phase_length, const PrivacyTarget& target,
                      std::optional<double> sigma)
      : dim_(dim),
        key_(key),
        bound_(bound),
        max_phase_length_(max_phase_length),
        delta_(target.delta),
        depth_(privacy::tree_depth(static_cast<std::uint64_t>(max_phase_length))) {
    const double z =
        sigma ? *sigma / bound : std::sqrt(depth_ / (2.0 * privacy::zcdp_rho(target.epsilon, target.delta)));
    noise_ = discrete_noise(bound, dim, z);
    next_noise_.resize(static_cast<Eigen::Index>(dim));
    draw_next();
  }
  MechanismKind kind() const override { return MechanismKind::kTree; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    check_sensitivity("tree mechanism", sensitivity, bound_);
    if (restart) {
      live_ = 0;
      t_ = 0;
    }
    if (t_ >= static_cast<std::uint64_t>(max_phase_length_))
      throw Error("tree mechanism: a phase longer than the " + std::to_string(max_phase_length_) +
                  " steps the noise was calibrated for");
    ++t_;
    live_ -= static_cast<std::size_t>(__builtin_ctzll(t_));
    if (live_ == end_prefix_.size()) {
      end_prefix_.emplace_back(static_cast<Eigen::Index>(dim_));
      sums_.emplace_back(static_cast<Eigen::Index>(dim_));
    }
    const Vec node_exact = live_ > 0 ? Vec(exact - end_prefix_[live_ - 1]) : exact;
    Vec& sum = sums_[live_];
    round_and_add(node_exact, noise_.grid, next_noise_, sum);
    if (live_ > 0) sum += sums_[live_ - 1];
    end_prefix_[live_] = exact;
    ++live_;
    released = noise_.grid * sum;
    draw_next();
  }
  PrivacyRecord account() const override {
    PrivacyRecord r;
    r.mechanism = MechanismKind::kTree;
    r.adjacency = Adjacency::kReplaceOne;
    r.noise = NoiseMode::kSecure;
    r.delta = delta_;
    r.depth = depth_;
    const double scale = static_cast<double>(noise_.scale);
    r.zcdp_rho = depth_ * noise_.integer_sensitivity * noise_.integer_sensitivity / (2 * scale * scale);
    r.epsilon = r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, delta_);
    r.grid = noise_.grid;
    r.sigma = noise_.grid * scale;
    r.sensitivity = bound_;
    detail::state_relations_of_replace_one(r);
    r.noise_multiplier = scale / noise_.integer_sensitivity;
    return r;
  }

 private:
  void draw_next() {
    if (nodes_drawn_ == std::numeric_limits<std::uint32_t>::max())
      throw Error("tree mechanism: more than 2^32 - 1 nodes in one run");
    fill_discrete_gaussian(key_, StreamPurpose::kDiscreteNoise, nodes_drawn_++, noise_.scale, next_noise_.data(), dim_,
                           team_size());
  }
  Index dim_;
  NoiseKey key_;
  double bound_;
  Index max_phase_length_;
  double delta_;
  int depth_;
  DiscreteNoise noise_;
  Vec next_noise_;
  std::vector<Vec> end_prefix_, sums_;  // per open node: P at its end; the running sum of nodes 0..i
  std::size_t live_ = 0;
  std::uint64_t t_ = 0;
  std::uint32_t nodes_drawn_ = 0;
};

// Gaussian: each release's increment u_t = P_t - P_{t-1} rounded to its own
// grid plus its own discrete Gaussian (multiplier z of the rounded
// sensitivity); every record is in one release, so the run is
// (1/(2 z^2))-zCDP. A release of sensitivity 0 is data-independent: it
// releases a zero increment.
class SecureGaussianMechanism final : public Mechanism {
 public:
  SecureGaussianMechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target, double reported_sensitivity,
                          std::optional<double> z)
      : dim_(dim),
        key_(key),
        delta_(target.delta),
        reported_(reported_sensitivity),
        z_(z ? *z : gaussian_noise_multiplier(target)),
        previous_(Vec::Zero(static_cast<Eigen::Index>(dim))),
        accumulated_(Vec::Zero(static_cast<Eigen::Index>(dim))),
        noise_(static_cast<Eigen::Index>(dim)) {
    if (!(z_ > 0) || !std::isfinite(z_)) throw Error("Gaussian mechanism: the noise multiplier must be finite and > 0");
    if (reported_ > 0) first_ = discrete_noise(reported_, dim, z_);
  }
  MechanismKind kind() const override { return MechanismKind::kGaussian; }
  void release(const Vec& exact, bool restart, double sensitivity, Vec& released) override {
    check_sensitivity("Gaussian mechanism", sensitivity, std::numeric_limits<double>::max());
    if (restart) {
      previous_.setZero();
      accumulated_.setZero();
    }
    if (sensitivity > 0) {
      const DiscreteNoise n = discrete_noise(sensitivity, dim_, z_);
      if (releases_ == std::numeric_limits<std::uint32_t>::max())
        throw Error("Gaussian mechanism: more than 2^32 - 1 releases in one run");
      fill_discrete_gaussian(key_, StreamPurpose::kDiscreteNoise, releases_++, n.scale, noise_.data(), dim_,
                             team_size());
      Vec increment;
      round_and_add(exact - previous_, n.grid, noise_, increment);
      accumulated_ += n.grid * increment;  // post-processing of the exact grid values
    }
    previous_ = exact;
    released = accumulated_;
  }
  PrivacyRecord account() const override {
    PrivacyRecord r;
    r.mechanism = MechanismKind::kGaussian;
    r.adjacency = Adjacency::kReplaceOne;
    r.noise = NoiseMode::kSecure;
    r.delta = delta_;
    r.noise_multiplier = z_;
    r.zcdp_rho = 1.0 / (2 * z_ * z_);
    r.epsilon = r.epsilon_rdp = privacy::zcdp_to_epsilon(r.zcdp_rho, delta_);
    r.depth = 1;
    r.sensitivity = reported_;
    r.grid = first_.grid;
    r.sigma = first_.grid * static_cast<double>(first_.scale);
    detail::state_relations_of_replace_one(r);
    return r;
  }

 private:
  Index dim_;
  NoiseKey key_;
  double delta_, reported_, z_;
  DiscreteNoise first_;
  Vec previous_, accumulated_, noise_;
  std::uint32_t releases_ = 0;
};

}  // namespace

DiscreteNoise discrete_noise(double sensitivity, Index dim, double noise_multiplier, Index rounded_releases) {
  if (!(sensitivity > 0) || !std::isfinite(sensitivity))
    throw Error("secure noise: the sensitivity must be finite and > 0");
  if (!(noise_multiplier > 0) || !std::isfinite(noise_multiplier))
    throw Error("secure noise: the noise multiplier must be finite and > 0");
  if (dim == 0) throw Error("secure noise: dim must be > 0");
  if (rounded_releases == 0) throw Error("secure noise: at least one rounded release");
  // Rounding moves each rounded d-vector a record reaches by at most grid
  // sqrt(d) more: sqrt(d * rounded_releases) grid units in all (Minkowski).
  const double root_d = std::sqrt(static_cast<double>(dim) * static_cast<double>(rounded_releases));
  DiscreteNoise n;
  // Fine enough that rounding adds 1/1024 of the sensitivity at most ...
  n.grid = std::exp2(std::floor(std::log2(sensitivity / (1024.0 * root_d))));
  // ... unless the scale would pass 2^27 grid units: then coarser.
  const double wanted = noise_multiplier * sensitivity;
  if (wanted / n.grid > 134217728.0) n.grid = std::exp2(std::ceil(std::log2(wanted / 134217728.0)));
  n.integer_sensitivity = sensitivity / n.grid + root_d;
  const double scale = std::ceil(noise_multiplier * n.integer_sensitivity);
  if (!(scale <= static_cast<double>(exact::kMaxDiscreteSigma))) {
    std::ostringstream os;
    os << "secure noise: a noise multiplier of " << noise_multiplier << " in dimension " << dim;
    if (rounded_releases > 1) os << " over " << rounded_releases << " rounded releases";
    os << " needs a discrete Gaussian scale above 2^28 grid units (noise multiplier * sqrt(d"
       << (rounded_releases > 1 ? " * releases" : "") << ") must stay below about 2^27)";
    throw Error(os.str());
  }
  n.scale = static_cast<std::uint64_t>(std::max(scale, 1.0));
  return n;
}

std::unique_ptr<Mechanism> make_secure_tree_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound,
                                                      Index max_phase_length, const PrivacyTarget& target,
                                                      std::optional<double> sigma) {
  return std::make_unique<SecureTreeMechanism>(dim, key, sensitivity_bound, max_phase_length, target, sigma);
}

std::unique_ptr<Mechanism> make_secure_gaussian_mechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target,
                                                          double reported_sensitivity,
                                                          std::optional<double> noise_multiplier) {
  return std::make_unique<SecureGaussianMechanism>(dim, key, target, reported_sensitivity, noise_multiplier);
}

}  // namespace dpsosp
