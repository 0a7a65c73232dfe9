// Parameters of spider-mf-adaptive (include/dpsosp/params.hpp,
// docs/parameters.md "spider-mf-adaptive"). Every rule reads public
// quantities only: n, d, the target, the constants and the options, never the
// data, so the parameters, the noise and the guarantee are fixed before the
// run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"
#include "dpsosp/mechanism.hpp"
#include "dpsosp/params.hpp"
#include "dpsosp/pld.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp {
namespace {

constexpr Index kMinBatch = 16;
constexpr double kBatchScale = 0.25;
constexpr double kPoissonBatch = 16;
constexpr Index kDefaultPhaseCap = 4;
constexpr double kDefaultTail = 0.25;

Index ceil_count(double v) {
  if (!std::isfinite(v) || v > 9.0e18) throw Error("spider-mf-adaptive: a batch size overflowed");
  return std::max<Index>(1, static_cast<Index>(std::ceil(v)));
}

// The releases a run can make: every O1 takes b1 records, every O2 at least
// b2_min; passes over the order (O1 steps only) n / b1 each.
Index horizon_for(Index n, Index b1, bool o2, Index b2_min, Index epochs) {
  if (!o2) return epochs * (n / b1);
  return 1 + (n - b1) / b2_min;
}

// Poisson-sampled passes (sampling = poisson): the records in `bands` groups,
// step t an O1 on a Poisson sample of group t mod bands at rate q = b1 / m
// (expected batch b1), the noise the banded square root's; z for the cycles
// (each record's ceil(epochs / q) Poisson steps) by the accountant.
struct BandsPlan {
  Index bands = 0, group_size = 0, cycles = 0;
  double q = 0, z = 0;
  BandedFactorization f;
};

// coarse: a PLD of value discretization 4e-3 instead of 1e-4 (pessimistic
// still, so z is a little larger, for every b alike), for ranking the
// candidates: the same bands and, after the exact calibration, the same z
// to 1e-8 as at 1e-3 on 33 runs (n 2000, 8000, 60000; eps 1, 3, 8; 1, 3, 5
// passes and the default's, the scale estimate's prior included), 1e-2
// changed two choices.
// `start`: the coarse calibration's z of these bands, where the ranking made one.
BandsPlan plan_bands(Index bands, Index n, Index b1, double epochs, const PrivacyTarget& privacy, Accountant accountant,
                     std::optional<double> z, bool coarse = false, double start = 0, double* clt = nullptr,
                     double correction = 1) {
  BandsPlan b;
  b.bands = bands;
  b.group_size = n / bands;
  b.q = static_cast<double>(b1) / static_cast<double>(b.group_size);
  const double cycles = std::ceil(epochs / b.q);
  if (!(cycles <= 1e9))
    throw Error("spider-mf-adaptive: epochs = " + std::to_string(epochs) + " at sampling rate " + std::to_string(b.q) +
                " means more than 1e9 cycles");
  b.cycles = static_cast<Index>(cycles);
  privacy::PldOptions pld;
  if (coarse) {  // ranking the candidates only: the chosen bands are calibrated exactly
    pld.discretization = 4e-3;
    pld.calibration_tolerance = 1e-3;
  }
  // A replace-one target: the replaced record's release moves by 2G, so the
  // multiplier of that sensitivity, sigma / (2G), is calibrated (the PLD of
  // Neighbouring::kReplaceOne) and z (of G) is twice it.
  const bool replace_one = privacy.adjacency == Adjacency::kReplaceOne;
  if (coarse && !z && start == 0 && std::isfinite(privacy.epsilon)) {
    // The ranking's start: the central-limit approximation of Poisson-sampled
    // Gaussian steps (Dong, Roth and Su 2022), mu = q sqrt(T (e^{1/z^2} - 1)),
    // at the run's share of the target; the calibration brackets from it (in
    // b.z's units: a replace-one z is twice the calibrated one).
    const double mu = privacy.run_gdp_mu();
    start = 1 / std::sqrt(std::log1p(mu * mu / (b.q * b.q * static_cast<double>(b.cycles))));
    if (replace_one) start *= 2;
    if (clt) *clt = start;
    start *= correction;
  }
  if (!z && replace_one && accountant != Accountant::kPld)
    throw Error(
        "spider-mf-adaptive: adjacency = replace-one with sampling = poisson is accounted by PLD "
        "only; use accountant = pld, or adjacency = zero-out");
  if (!z && privacy.prior_mu > 0 && accountant != Accountant::kPld)
    throw Error(
        "spider-mf-adaptive: a prior release (the private scale estimate) is composed by PLD "
        "only; use accountant = pld");
  b.z = z             ? *z
        : replace_one ? 2 * privacy::calibrate_dpsgd_noise_pld(b.q, b.cycles, privacy.epsilon, privacy.delta,
                                                               privacy::Neighbouring::kReplaceOne, pld,
                                                               privacy.prior_mu, start / 2)
        : accountant == Accountant::kPld
            ? privacy::calibrate_dpsgd_noise_pld(b.q, b.cycles, privacy.epsilon, privacy.delta,
                                                 privacy::Neighbouring::kAddRemove, pld, privacy.prior_mu, start)
            : privacy::calibrate_dpsgd_noise(b.q, b.cycles, privacy.epsilon, privacy.delta);
  b.f = BandedFactorization::square_root(bands);
  return b;
}

// The automatic bands: among 1, 2, 4, ..., kMaxBands (groups of at least b1
// records), the one whose iterates carry the least noise: the prefix sums'
// noise variance averaged over the run, (z ||C e|| / b1)^2 times
// mean_prefix_variance (docs/parameters.md), z ranked by the coarse PLD, the
// chosen bands then calibrated exactly. More bands weaken the amplification
// (q grows with them, z with q) but let the steps' noise cancel in the
// iterates' sum; privacy decides which wins, before the run.
constexpr Index kMaxBands = 128;

BandsPlan choose_bands(Index n, Index b1, double epochs, const PrivacyTarget& privacy, Accountant accountant,
                       std::optional<double> z) {
  Index best = 1;
  double best_noise = std::numeric_limits<double>::infinity(), best_z = 0;
  // The approximation's error changes slowly with the bands: each candidate
  // starts from its approximation times the previous candidate's answer over
  // its approximation (a start changes the answer within the tolerance only).
  double correction = 1;
  for (Index bands = 1; bands <= kMaxBands && n / bands >= b1; bands *= 2) {
    double clt = 0;
    const BandsPlan b =
        plan_bands(bands, n, b1, epochs, privacy, accountant, z, /*coarse=*/true, 0.0, &clt, correction);
    if (clt > 0 && b.z > 0) correction = b.z / clt;
    const double col = b.f.column_norm();
    const double noise = b.z * b.z * col * col * b.f.mean_prefix_variance(b.bands * b.cycles);
    if (noise < best_noise) {
      best_noise = noise;
      best = bands;
      best_z = b.z;
    }
  }
  return plan_bands(best, n, b1, epochs, privacy, accountant, z, /*coarse=*/false, z ? 0.0 : best_z);
}

void poisson_passes(MfParameters& p, Index n, const PrivacyTarget& privacy, const ProblemConstants& c,
                    const MfChoices& ch, const ParameterOverrides& o) {
  const char* who = "spider-mf-adaptive";
  if (privacy.noise == NoiseMode::kSecure)
    throw Error(std::string(who) +
                ": sampling = poisson is accounted for continuous Gaussian noise only (PLD, "
                "RDP); use noise = float, or sampling = order");
  if (o.sigma)
    throw Error(std::string(who) +
                ": overrides.sigma: sampling = poisson calibrates a noise multiplier "
                "(overrides.noise_multiplier), not sigma");
  if (ch.bands && n / *ch.bands < p.b1) {
    std::ostringstream os;
    os << who << ": bands = " << *ch.bands << ": groups of " << n / *ch.bands << " records cannot hold the expected "
       << "batch of b1 = " << p.b1 << " (at most " << n / p.b1 << " bands)";
    throw Error(os.str());
  }
  const BandsPlan b = ch.bands ? plan_bands(*ch.bands, n, p.b1, p.epochs, privacy, ch.accountant, o.noise_multiplier)
                               : choose_bands(n, p.b1, p.epochs, privacy, ch.accountant, o.noise_multiplier);
  p.accountant = ch.accountant;
  p.bands = b.bands;
  p.group_size = b.group_size;
  p.sampling_rate = b.q;
  p.cycles = b.cycles;
  p.noise_multiplier = b.z;
  p.horizon = b.bands * b.cycles;
  p.steps_per_epoch = 0;
  p.sensitivity = c.G / static_cast<double>(p.b1);
  p.column_norm = b.f.column_norm();
  p.sigma = b.z * p.sensitivity * p.column_norm;
  const std::vector<double> w = b.f.inverse_coefficients(std::min<Index>(p.horizon, 4096));
  double row2 = 0;
  for (double v : w) row2 += v * v;
  p.step_noise = p.sigma * std::sqrt(row2);
}

}  // namespace

Index default_o1_batch(Index n, double mu, double epochs, bool poisson) {
  double want = kBatchScale * std::sqrt(static_cast<double>(n) / mu);
  if (poisson) want = std::max(want, kPoissonBatch * std::sqrt(epochs) / mu);
  return std::min(std::max<Index>(kMinBatch, ceil_count(want)), std::max<Index>(1, n / 10));
}

MfParameters spider_mf_adaptive_parameters(Index n, Index d, const PrivacyTarget& privacy, const ProblemConstants& c,
                                           const MfChoices& ch, const ParameterOverrides& o) {
  const char* who = "spider-mf-adaptive";
  privacy.Validate();
  c.Validate();
  if (!privacy.is_private()) throw Error(std::string(who) + ": needs a finite epsilon (a private target)");
  if (d == 0) throw Error(std::string(who) + ": dimension d must be at least 1, got 0");
  if (!(ch.alpha_scale > 0) || !std::isfinite(ch.alpha_scale))
    throw Error(std::string(who) + ": alpha_scale must be positive and finite");
  const Sampling sampling = sampling_or_default(ch.sampling, ch.epochs);
  if (!(ch.epochs > 0 && std::isfinite(ch.epochs)) ||
      (sampling == Sampling::kOrder && !(ch.epochs >= 1 && ch.epochs == std::floor(ch.epochs)))) {
    std::ostringstream os;
    os << who << ": epochs = " << ch.epochs
       << (sampling == Sampling::kOrder ? ": passes over the sample order are a whole number >= 1"
                                        : ": expected passes must be a finite number > 0");
    throw Error(os.str());
  }
  if (ch.bands && sampling != Sampling::kPoisson)
    throw Error(std::string(who) + ": bands = " + std::to_string(*ch.bands) +
                ": applies to sampling = poisson (the banded factorization of Poisson-sampled passes)");
  if (ch.bands && *ch.bands < 1) throw Error(std::string(who) + ": bands must be at least 1, got 0");
  if ((ch.epochs > 1 || sampling == Sampling::kPoisson) && ch.o2.value_or(false)) {
    // O2 batch sizes follow the released steps, so a record's place in the
    // later passes, and the releases it enters, would depend on them; the
    // sensitivity of cyclic passes holds for fixed batches (docs/privacy-accounting.md).
    std::ostringstream os;
    os << who << ": o2 = on with " << (sampling == Sampling::kPoisson ? "sampling = poisson" : "epochs = ")
       << (sampling == Sampling::kPoisson ? std::string() : std::to_string(static_cast<Index>(ch.epochs)))
       << ": several passes take O1 steps only (fixed batches or fixed groups, so every record's releases are "
          "planned before the run); set o2 = off";
    throw Error(os.str());
  }
  MfParameters p;
  p.epochs = ch.epochs;
  p.sampling = sampling;
  const double mu = privacy::gdp_mu(privacy.epsilon, privacy.delta);
  p.alpha = o.alpha ? *o.alpha : ch.alpha_scale * theorem_alpha(n, d, privacy.epsilon, c);
  p.M2 = c.M;
  p.eta = ch.learning_rate ? *ch.learning_rate : 1.0 / c.M;
  p.tail = ch.tail.value_or(kDefaultTail);
  p.b2_min = 1;
  // b1 = 0.25 sqrt(n / mu), mu the target's GDP parameter: about 4 sqrt(n mu)
  // steps, more of them at weaker privacy. With the noise of the steps
  // cancelling in the iterates' sum, many noisy steps beat few quiet ones until
  // the iterates' own noise, (2G / (b1 mu)) column_norm^2 sqrt(d) per unit
  // step, takes over. Fitted on phase retrieval (n = 1e4..1e6) and
  // Fashion-MNIST softmax; checked on PCA, the MLP and other data
  // (docs/results.md, experiments/).
  //
  // Poisson sampling: at least kPoissonBatch sqrt(epochs) / mu. At small n the
  // rule's batches are small, the sampling rate low and the noise multiplier
  // at its floor: the amplification buys little and the steps drown in noise.
  // The floor, independent of n, is what the Fashion-MNIST subsets of
  // docs/results-peers.md chose (n = 2000 to 60000, eps 1 to 8, one and five
  // passes); it leaves the rule as it was from about n = 20000 at eps 1.
  if (ch.b1) {
    p.b1 = *ch.b1;
  } else {
    p.b1 = default_o1_batch(n, mu, ch.epochs, sampling == Sampling::kPoisson);
  }
  if (p.b1 == 0) throw Error(std::string(who) + ": the O1 batch must be at least 1");
  if (p.b1 > n) {
    std::ostringstream os;
    os << who << ": n = " << n << " records cannot fill one O1 batch of b1 = " << p.b1 << " records";
    throw Error(os.str());
  }
  p.bt_slope = static_cast<double>(p.b1) / c.G;
  p.sensitivity = 2.0 * c.G / static_cast<double>(p.b1);  // = 2 / bt_slope: O1 and O2 alike
  p.max_phase_length = ch.max_phase_length.value_or(kDefaultPhaseCap);
  // O2 steps only when asked: they break the cancellation of the noise in the
  // iterates' sum (each O2 step's estimate carries the phase's noise into x),
  // and in every configuration measured, eps 0.5 to 1000, O1 steps only did
  // better (docs/parameters.md).
  p.o2 = ch.o2.value_or(false) && p.epochs == 1 && sampling == Sampling::kOrder;
  p.kappa = o.kappa ? *o.kappa : c.G / (p.M2 * p.eta);
  if (sampling == Sampling::kPoisson) {
    poisson_passes(p, n, privacy, c, ch, o);
  } else {
    const Index epochs = static_cast<Index>(p.epochs);
    p.horizon = std::max<Index>(1, horizon_for(n, p.b1, p.o2, p.b2_min, epochs));
    p.steps_per_epoch = p.o2 ? p.horizon : n / p.b1;
    const Index period = epochs > 1 ? p.steps_per_epoch : 0;
    const BltFactorization f = BltFactorization::square_root(p.horizon);
    p.column_norm = period > 0 ? f.cyclic_participation_norm(p.horizon, period) : f.max_column_norm(p.horizon);
    p.sigma = o.sigma              ? *o.sigma
              : o.noise_multiplier ? *o.noise_multiplier * p.sensitivity
                                   : mf_noise_sigma(p.sensitivity, p.horizon, privacy, d, period);
    const std::vector<double> r = f.inverse_coefficients(std::min<Index>(p.horizon, 4096));
    double row2 = 0;
    for (double v : r) row2 += v * v;
    p.step_noise = p.sigma * std::sqrt(row2);
  }
  if (!p.o2) {
    if (ch.max_phase_length && *ch.max_phase_length > 1) {
      std::ostringstream os;
      os << who << ": max_phase_length = " << *ch.max_phase_length << " needs O2 steps, and O2 is off ("
         << (p.epochs > 1 || sampling == Sampling::kPoisson ? "several passes take O1 steps only"
                                                            : "o2 is off unless set on")
         << (p.epochs > 1 || sampling == Sampling::kPoisson ? ")" : "); set o2 = on");
      throw Error(os.str());
    }
    p.max_phase_length = 1;
  }
  // The saddle perturbation (Algorithm 2 lines 9-11) at the theory's scale.
  p.threshold = o.threshold ? *o.threshold : p.alpha;
  p.zeta = o.zeta ? *o.zeta : p.alpha;
  p.Gamma = o.Gamma ? *o.Gamma : std::max<Index>(1, ceil_count(c.M / std::sqrt(c.rho * p.alpha)));
  return p;
}

}  // namespace dpsosp
