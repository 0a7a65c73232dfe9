// Internal: the secure noise mode's mechanisms (secure.cpp); the makers in
// include/dpsosp/mechanism.hpp choose them when target.noise is kSecure.
#pragma once
#include <memory>
#include <optional>

#include "dpsosp/mechanism.hpp"

namespace dpsosp {

/// out = clamp(round(value / grid)) + noise, all integers (grid units): values
/// rounded to the nearest integer, ties to even, NaN to 0, clamped to
/// +-2^50 (a clamp is 1-Lipschitz per coordinate, so it adds nothing to the
/// sensitivity); noise holds integers.
void round_and_add(const Vec& value, double grid, const Vec& noise, Vec& out);

std::unique_ptr<Mechanism> make_secure_tree_mechanism(Index dim, const NoiseKey& key, double sensitivity_bound,
                                                      Index max_phase_length, const PrivacyTarget& target,
                                                      std::optional<double> sigma);
std::unique_ptr<Mechanism> make_secure_gaussian_mechanism(Index dim, const NoiseKey& key, const PrivacyTarget& target,
                                                          double reported_sensitivity,
                                                          std::optional<double> noise_multiplier);

}  // namespace dpsosp
