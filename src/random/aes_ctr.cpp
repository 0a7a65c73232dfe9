// AES-128 in counter mode: dispatch between AES-NI and OpenSSL (src/random/aes_ctr.hpp).
#include "random/aes_ctr.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "dpsosp/error.hpp"

namespace dpsosp::detail {
namespace {

std::atomic<bool> g_ni_off_for_tests{false};

bool cpu_has_aes_ni() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("aes") != 0;
  }();
  return has;
}

struct CipherContextDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

// An AES-128-ECB context for `key` (ECB of the counter blocks is counter mode).
std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter> openssl_context(const std::array<std::uint8_t, 16>& key) {
  std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter> ctx(EVP_CIPHER_CTX_new());
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_128_ecb(), nullptr, key.data(), nullptr) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    throw Error("noise: OpenSSL could not set up AES-128");
  }
  return ctx;
}

void openssl_encrypt(EVP_CIPHER_CTX* ctx, const std::uint8_t* in, std::uint8_t* out, std::size_t count) {
  constexpr std::size_t kMaxBlocks = std::size_t{1} << 20;  // keeps the byte count an int
  for (std::size_t done = 0; done < count;) {
    const std::size_t blocks = std::min(kMaxBlocks, count - done);
    int written = 0;
    if (EVP_EncryptUpdate(ctx, out + 16 * done, &written, in + 16 * done, static_cast<int>(16 * blocks)) != 1 ||
        written != static_cast<int>(16 * blocks)) {
      throw Error("noise: OpenSSL AES-128 failed");
    }
    done += blocks;
  }
}

}  // namespace

bool aes_ni_enabled() { return cpu_has_aes_ni() && !g_ni_off_for_tests.load(std::memory_order_relaxed); }

void aes_ni_turn_off_for_tests(bool off) { g_ni_off_for_tests.store(off); }

std::array<std::uint64_t, 22> aes_round_keys(const std::array<std::uint8_t, 16>& key) {
  std::array<std::uint64_t, 22> round_keys{};
  if (cpu_has_aes_ni()) aes_ni_expand_key(key, round_keys);
  return round_keys;
}

void aes_counter_blocks(const std::array<std::uint8_t, 16>& key, const std::array<std::uint64_t, 22>& round_keys,
                        std::uint32_t purpose, std::uint32_t index, std::uint64_t first, std::size_t count,
                        std::uint64_t* out) {
  if (count == 0) return;
  if (aes_ni_enabled()) {
    aes_ni_counter_blocks(round_keys, purpose, index, first, count, out);
    return;
  }
  // OpenSSL: the counter blocks, then ECB over them, a chunk at a time.
  const auto ctx = openssl_context(key);
  constexpr std::size_t kChunk = 256;
  std::uint8_t counters[16 * kChunk];
  for (std::size_t j = 0; j < count; j += kChunk) {
    const std::size_t blocks = std::min(kChunk, count - j);
    for (std::size_t l = 0; l < blocks; ++l) {
      const std::uint64_t k = first + j + l;
      const std::uint32_t words[4] = {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), purpose,
                                      index};
      for (int w = 0; w < 4; ++w) {
        for (int b = 0; b < 4; ++b) counters[16 * l + 4 * w + b] = static_cast<std::uint8_t>(words[w] >> (8 * b));
      }
    }
    std::uint8_t* bytes = reinterpret_cast<std::uint8_t*>(out + 2 * j);
    openssl_encrypt(ctx.get(), counters, bytes, blocks);
    // The output bytes as two little-endian words.
    for (std::size_t l = 0; l < 2 * blocks; ++l) {
      std::uint64_t w = 0;
      for (int b = 7; b >= 0; --b) w = (w << 8) | bytes[8 * l + static_cast<std::size_t>(b)];
      out[2 * j + l] = w;
    }
  }
}

void aes_encrypt_blocks_openssl(const std::array<std::uint8_t, 16>& key, const std::uint8_t* in, std::uint8_t* out,
                                std::size_t count) {
  const auto ctx = openssl_context(key);
  openssl_encrypt(ctx.get(), in, out, count);
}

void aes_encrypt_blocks_ni(const std::array<std::uint64_t, 22>& round_keys, const std::uint8_t* in, std::uint8_t* out,
                           std::size_t count) {
  if (!cpu_has_aes_ni()) throw Error("aes_encrypt_blocks_ni: this processor has no AES-NI");
  aes_ni_encrypt_blocks(round_keys, in, out, count);
}

}  // namespace dpsosp::detail
