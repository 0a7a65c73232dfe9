// dpsosp: the privacy target of a run (epsilon, delta, the relation it is
// for, how its noise is drawn, a prior release it composes with). The
// mechanisms calibrate to it and the optimizers run for it; it depends on
// nothing above the accountant (privacy.hpp).
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dpsosp {

/// How a private run draws its noise (SPEC section 8, docs/noise.md).
enum class NoiseMode {
  /// Continuous Gaussian noise in floating point (Box-Muller on the secret
  /// stream); exact GDP accounting. The released doubles' low-order bits are
  /// not covered by the guarantee (Mironov 2012).
  kFloat,
  /// Every release rounded to a power-of-two grid plus discrete Gaussian noise
  /// drawn exactly on integers (Canonne, Kamath, Steinke 2020); zCDP
  /// accounting with the rounding in the sensitivity.
  kSecure,
};
std::string noise_mode_name(NoiseMode mode);  ///< "float", "secure"

/// How a Poisson-subsampled run is calibrated and accounted
/// (docs/privacy-accounting.md); the other mechanisms are accounted exactly by GDP.
enum class Accountant {
  kPld,  ///< privacy-loss distribution, pessimistic rounding (the default: the tighter guarantee)
  kRdp,  ///< Renyi DP on dp_accounting's order grid
};
std::string accountant_name(Accountant a);  ///< "pld", "rdp"

/// An accountant's row in the accountant table: what `dpsosp privacy` (and
/// dpsosp.privacy) can ask of it, and what a Poisson run's --accountant
/// selects. Adding one: its row here (target.cpp), its figures in each form it
/// applies to (src/report/privacy_forms.cpp), a line in docs/privacy-accounting.md.
struct AccountantInfo {
  std::string name;                ///< "pld", "rdp", "gdp"
  std::string summary;             ///< one line for the docs and help
  std::optional<Accountant> run;   ///< what a Poisson run's accountant option selects; none: figures only
  std::vector<std::string> forms;  ///< the privacy forms it states figures for ("tree", "mf", "poisson")
};
const std::vector<AccountantInfo>& accountant_table();
/// The row of `name`; throws Error naming the choices.
const AccountantInfo& accountant_info(const std::string& name);

/// The neighbouring relation a guarantee holds for.
enum class Adjacency {
  kNone,        ///< no guarantee (non-private)
  kReplaceOne,  ///< one record replaced by another (the single-pass methods; n public)
  kZeroOut,     ///< one record replaced by a null record (Poisson sampling: accounted as add/remove, n public)
};
std::string adjacency_name(Adjacency a);  ///< "none", "replace-one", "zero-out"

/// The privacy target. epsilon = +infinity means non-private (no noise, no clipping).
struct PrivacyTarget {
  double epsilon = 1.0;
  double delta = 1e-6;
  /// How the noise meets the target (the secure mode adds about 6-8 % noise
  /// for the same epsilon).
  NoiseMode noise = NoiseMode::kFloat;
  /// The relation (epsilon, delta) is for. Unset: the run's own, replace-one
  /// for the single-pass methods and zero-out for Poisson-sampled runs.
  /// Poisson-sampled runs take either (replace-one: the PLD of the replaced
  /// record's Poisson-subsampled Gaussian, sensitivity 2C; PLD accountant
  /// only); the single-pass methods hold for replace-one only.
  std::optional<Adjacency> adjacency = std::nullopt;
  /// A Gaussian release of the same records made before the run (the private
  /// scale estimate of scaling.hpp), as its mu-GDP figure under replace-one,
  /// which bounds its zero-out figure; 0: none. Poisson-sampled runs under the
  /// PLD accountant compose its PLD with theirs, exactly, in their calibration
  /// and guarantee; a G/M estimate takes what GDP composition leaves
  /// (run_gdp_mu). Other runs refuse it (scaling.cpp composes theirs).
  double prior_mu = 0;
  bool is_private() const { return epsilon < std::numeric_limits<double>::infinity(); }
  /// The mu-GDP of the target less the prior's: sqrt(mu(eps, delta)^2 - prior_mu^2).
  double run_gdp_mu() const;
  void Validate() const;
};

}  // namespace dpsosp
