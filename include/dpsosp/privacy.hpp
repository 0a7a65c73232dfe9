// dpsosp: privacy accounting (SPEC section 3).
#pragma once
#include <cstdint>
#include <vector>

namespace dpsosp::privacy {

/// Standard normal CDF.
double normal_cdf(double x);
/// delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
double gdp_delta(double mu, double epsilon);
/// The smallest eps with gdp_delta(mu, eps) <= delta (exact, by root finding).
double gdp_epsilon(double mu, double delta);
/// The largest mu with gdp_epsilon(mu, delta) <= epsilon.
double gdp_mu(double epsilon, double delta);

/// Tree depth for a phase of L steps: D = ceil(log2(L + 1)), the most nodes one
/// leaf lies in.
int tree_depth(std::uint64_t phase_length);

/// The RDP order grid of dp_accounting: {1.1, ..., 10.9} U {11, ..., 63} U {128, 256, 512, 1024}.
const std::vector<double>& rdp_orders();
/// eps from RDP (Canonne-Kamath-Steinke, Prop. 12 of arXiv 2004.00010), minimised over orders.
double rdp_to_epsilon(const std::vector<double>& orders, const std::vector<double>& rdp, double delta);
/// zCDP rho (RDP(a) = a * rho) to eps on the standard grid.
double zcdp_to_epsilon(double rho, double delta);
/// The largest rho with zcdp_to_epsilon(rho, delta) <= epsilon (bisection on
/// the standard grid; the result never exceeds the target).
double zcdp_rho(double epsilon, double delta);

/// Figures of a run of tree-aggregated Gaussian releases.
struct TreeAccount {
  double mu = 0;           ///< GDP parameter: sqrt(depth) / noise_multiplier
  double rho = 0;          ///< zCDP: depth / (2 z^2)
  double epsilon_gdp = 0;  ///< exact GDP conversion at delta
  double epsilon_rdp = 0;  ///< RDP conversion at delta
  int depth = 0;           ///< largest tree depth over the phases
};
/// noise_multiplier z = sigma / sensitivity; phase_lengths: steps of each tree
/// (disjoint data across trees, so only the longest phase matters).
TreeAccount account_tree(double noise_multiplier, const std::vector<std::uint64_t>& phase_lengths, double delta);

/// sigma such that a run with sensitivity s and phases of at most max_phase_length
/// steps is (epsilon, delta)-DP by the exact GDP conversion.
double calibrate_tree_sigma(double sensitivity, std::uint64_t max_phase_length, double epsilon, double delta);

/// RDP of the Poisson-subsampled Gaussian (sampling rate q, noise multiplier z)
/// at order `order` (integer orders exactly, fractional orders by the series of
/// Mironov et al. 2019, as dp_accounting does), add/remove-one adjacency.
double poisson_gaussian_rdp(double q, double noise_multiplier, double order);
/// eps of `steps` Poisson-subsampled Gaussian steps at delta.
double dpsgd_poisson_epsilon(double q, double noise_multiplier, std::uint64_t steps, double delta);
/// The noise multiplier giving dpsgd_poisson_epsilon(...) <= epsilon.
double calibrate_dpsgd_noise(double q, std::uint64_t steps, double epsilon, double delta);

}  // namespace dpsosp::privacy
