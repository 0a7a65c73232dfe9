// AES-128 with AES-NI through Random123's AESNI4x32 (src/random/aes_ctr.hpp). This
// file alone is built with -maes (CMakeLists.txt); aes_ctr.cpp calls it only
// where the processor has AES-NI.
#include <immintrin.h>

#include <cstring>

#include "random/aes_ctr.hpp"

#ifndef R123_USE_AES_NI
#define R123_USE_AES_NI 1
#endif
#include <Random123/aes.h>

#if !R123_USE_AES_NI
#error "aes_ctr_ni.cpp must be built with -maes"
#endif

namespace dpsosp::detail {
namespace {

r123::AESNI4x32::key_type load_key(const std::array<std::uint64_t, 22>& round_keys) {
  r123::AESNI4x32::key_type key;
  for (int r = 0; r < 11; ++r) key.k[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(round_keys.data() + 2 * r));
  return key;
}

// Blocks in flight together: AES-NI rounds have a latency of several cycles
// and a throughput of one or two a cycle, so independent blocks overlap.
constexpr std::size_t kLanes = 8;

}  // namespace

void aes_ni_expand_key(const std::array<std::uint8_t, 16>& key, std::array<std::uint64_t, 22>& round_keys) {
  r123::AESNI4x32::ukey_type user_key;
  std::memcpy(user_key.v, key.data(), 16);  // little-endian words: the bytes in order
  const r123::AESNI4x32::key_type expanded(user_key);
  for (int r = 0; r < 11; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(round_keys.data() + 2 * r), expanded.k[r]);
}

void aes_ni_counter_blocks(const std::array<std::uint64_t, 22>& round_keys, std::uint32_t purpose, std::uint32_t index,
                           std::uint64_t first, std::size_t count, std::uint64_t* out) {
  const r123::AESNI4x32::key_type key = load_key(round_keys);
  const r123::AESNI4x32 aes;
  std::size_t j = 0;
  for (; j < count; j += kLanes) {
    const std::size_t lanes = count - j < kLanes ? count - j : kLanes;
    r123::AESNI4x32::ctr_type block[kLanes];
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::uint64_t k = first + j + l;
      block[l] = {{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), purpose, index}};
    }
    for (std::size_t l = 0; l < lanes; ++l) block[l] = aes(block[l], key);
    std::memcpy(out + 2 * j, block, 16 * lanes);  // the output bytes as two little-endian words
  }
}

void aes_ni_encrypt_blocks(const std::array<std::uint64_t, 22>& round_keys, const std::uint8_t* in, std::uint8_t* out,
                           std::size_t count) {
  const r123::AESNI4x32::key_type key = load_key(round_keys);
  const r123::AESNI4x32 aes;
  for (std::size_t j = 0; j < count; ++j) {
    r123::AESNI4x32::ctr_type block;
    std::memcpy(block.v, in + 16 * j, 16);
    block = aes(block, key);
    std::memcpy(out + 16 * j, block.v, 16);
  }
}

}  // namespace dpsosp::detail
