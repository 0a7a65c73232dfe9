// Tests: fixed noise keys, so that private runs are reproducible (SPEC section
// 8: the same seed and the same key give the same bits). These keys are public
// by construction; no run with them is private against a reader of this file.
#pragma once
#include "dpsosp/noise.hpp"

namespace dpsosp::testing {

inline NoiseKey test_noise_key() { return NoiseKey::from_hex("000102030405060708090a0b0c0d0e0f"); }
inline NoiseKey other_test_noise_key() { return NoiseKey::from_hex("f0e1d2c3b4a5968778695a4b3c2d1e0f"); }

}  // namespace dpsosp::testing
