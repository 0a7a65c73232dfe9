// The guarantee under both neighbouring relations (SPEC section 9,
// docs/privacy-accounting.md section 10), for the mechanisms whose own
// relation is replace-one.
#pragma once
#include "dpsosp/mechanism.hpp"
#include "dpsosp/privacy.hpp"

namespace dpsosp::detail {

/// A replace-one mechanism's record gains its zero-out figure. Every release's
/// replace-one bound is twice a record's clipped contribution (2C / b), its
/// zero-out bound that contribution (C / b): in float mode each release's
/// sensitivity halves and so does the GDP mu, so zero-out is (mu / 2)-GDP.
/// The secure mode's rounding adds the same grid term under both relations, so
/// its zero-out figure is stated as the replace-one one (an upper bound: a
/// record replaced by a null record is a replace-one neighbour).
inline void state_relations_of_replace_one(PrivacyRecord& r) {
  r.epsilon_replace_one = r.epsilon;
  r.epsilon_zero_out = r.noise == NoiseMode::kFloat && r.mu > 0 ? privacy::gdp_epsilon(r.mu / 2, r.delta) : r.epsilon;
}

}  // namespace dpsosp::detail
