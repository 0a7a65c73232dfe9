// One direction of a discretized privacy-loss distribution and the operations
// on it (internal; the public face is dpsosp/pld.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dpsosp/error.hpp"

namespace dpsosp::privacy::detail {

/// Losses (lower + i) * interval with masses probs[i], plus a mass at +inf.
struct PldPmf {
  double interval = 1e-4;
  std::int64_t lower = 0;
  std::vector<double> probs;
  double infinity_mass = 0;
  bool pessimistic = true;
  double loss(std::size_t i) const { return static_cast<double>(lower + static_cast<std::int64_t>(i)) * interval; }
};

/// Thrown where a distribution would pass PldOptions::max_bins; the
/// calibration reads it as "infeasible" (more noise is needed), others see an Error.
struct TooManyBins : Error {
  using Error::Error;
};
[[noreturn]] void too_many_bins(std::size_t needed, std::size_t max_bins, double interval);

/// The PMF of the sum of independent losses from a and b; tails of mass up to
/// tail_mass_truncation cut (pessimistic: upper tail to +inf, lower tail onto
/// the lowest kept loss; optimistic: upper tail onto the highest kept loss,
/// lower tail dropped).
PldPmf compose(const PldPmf& a, const PldPmf& b, double tail_mass_truncation, std::size_t max_bins);
/// The PMF of the sum of `times` independent copies. The window is cut by
/// Chernoff bounds to the indices outside of which at most
/// tail_mass_truncation lies, and that mass (which the cyclic FFT wraps onto
/// the window) is added to +inf when pessimistic.
PldPmf self_compose(const PldPmf& p, std::uint64_t times, double tail_mass_truncation, std::size_t max_bins);
/// inf + sum over losses > eps of (1 - e^(eps - loss)) mass.
double delta_for_epsilon(const PldPmf& p, double epsilon);
/// Whether delta_for_epsilon(a, eps) >= delta_for_epsilon(b, eps) * (1 - 1e-9)
/// at every eps = k * interval >= 0 (both on one interval).
bool profile_dominates(const PldPmf& a, const PldPmf& b);
/// The smallest eps >= 0 with delta_for_epsilon(p, eps) <= delta; +inf when
/// the mass at +inf exceeds delta.
double epsilon_for_delta(const PldPmf& p, double delta);

}  // namespace dpsosp::privacy::detail
