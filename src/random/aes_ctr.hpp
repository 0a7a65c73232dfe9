// Internal: AES-128 in counter mode, the generator of the secret streams
// (GaussianStream with a NoiseKey; SPEC section 8, docs/noise.md).
//
// Block k of stream (key, purpose, index) is AES-128 under the key of the
// 16-byte counter block LE32(k low) LE32(k high) LE32(purpose) LE32(index),
// read as two little-endian 64-bit words: the counter layout of the public
// Philox streams, with AES in place of Philox. Where the processor has AES-NI
// the blocks come from Random123's AESNI4x32 (full AES-128 with its key
// schedule); elsewhere from OpenSSL's AES-128 (the same cipher, the same
// bits; the tests hold the two to each other and to FIPS-197).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace dpsosp::detail {

/// Whether this process uses AES-NI (the processor has it and the tests have
/// not turned it off).
bool aes_ni_enabled();
/// Tests: use OpenSSL even where AES-NI is available, until called with false.
void aes_ni_turn_off_for_tests(bool off);

/// The expanded round keys (11 x 128 bits) of `key` for the AES-NI path;
/// all zero where AES-NI is not enabled.
std::array<std::uint64_t, 22> aes_round_keys(const std::array<std::uint8_t, 16>& key);

/// out[2j], out[2j+1] = the two words of block first + j of the secret stream
/// (key, purpose, index), j < count. round_keys: aes_round_keys(key).
void aes_counter_blocks(const std::array<std::uint8_t, 16>& key, const std::array<std::uint64_t, 22>& round_keys,
                        std::uint32_t purpose, std::uint32_t index, std::uint64_t first, std::size_t count,
                        std::uint64_t* out);

/// AES-128 of count 16-byte blocks (ECB), by OpenSSL and, where available,
/// by AES-NI: for the known-answer and agreement tests.
void aes_encrypt_blocks_openssl(const std::array<std::uint8_t, 16>& key, const std::uint8_t* in, std::uint8_t* out,
                                std::size_t count);
void aes_encrypt_blocks_ni(const std::array<std::uint64_t, 22>& round_keys, const std::uint8_t* in, std::uint8_t* out,
                           std::size_t count);

// The AES-NI forms (aes_ctr_ni.cpp, built with -maes; call only where
// the processor has AES-NI).
void aes_ni_expand_key(const std::array<std::uint8_t, 16>& key, std::array<std::uint64_t, 22>& round_keys);
void aes_ni_counter_blocks(const std::array<std::uint64_t, 22>& round_keys, std::uint32_t purpose, std::uint32_t index,
                           std::uint64_t first, std::size_t count, std::uint64_t* out);
void aes_ni_encrypt_blocks(const std::array<std::uint64_t, 22>& round_keys, const std::uint8_t* in, std::uint8_t* out,
                           std::size_t count);

}  // namespace dpsosp::detail
