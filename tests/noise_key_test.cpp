// Tests of the secret streams and the noise key (include/dpsosp/noise.hpp,
// src/random/aes_ctr*.cpp; SPEC section 8): AES-128 on every path against
// FIPS-197 and against each other, the counter layout, the refusal of a public
// seed for privacy noise, key files. (The stream contract and statistics of
// secret streams: noise_test.cpp, GaussianStreamKinds/Secret.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "random/aes_ctr.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

constexpr std::uint64_t kSeed = 20241009;

std::vector<double> draw(GaussianStream& stream, std::size_t n) {
  std::vector<double> out(n);
  for (double& x : out) x = stream.next();
  return out;
}

// SPEC section 8: the privacy noise and Poisson sampling never come from the
// public seed.
TEST(SecretStreamTest, PublicSeedCannotKeyPrivacyNoise) {
  for (StreamPurpose p : {StreamPurpose::kTreeNoise, StreamPurpose::kGaussianNoise, StreamPurpose::kPoisson,
                          StreamPurpose::kDiscreteNoise}) {
    EXPECT_TRUE(is_secret_purpose(p));
    try {
      GaussianStream s(kSeed, p);
      FAIL() << "a seed keyed purpose " << static_cast<int>(p);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("secret NoiseKey"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(GaussianStream(testing::test_noise_key(), p).is_secret());
  }
  for (StreamPurpose p : {StreamPurpose::kSampleOrder, StreamPurpose::kPerturbation, StreamPurpose::kSynthetic}) {
    EXPECT_FALSE(is_secret_purpose(p));
    EXPECT_FALSE(GaussianStream(kSeed, p).is_secret());
  }
}

std::array<std::uint8_t, 16> bytes_of_hex(const std::string& hex) { return NoiseKey::from_hex(hex).bytes(); }

// FIPS-197 Appendix C.1: AES-128 of 00112233...ff under 000102...0f.
TEST(SecretStreamTest, AesMatchesFips197KnownAnswer) {
  const auto key = bytes_of_hex("000102030405060708090a0b0c0d0e0f");
  const auto plain = bytes_of_hex("00112233445566778899aabbccddeeff");
  const auto expect = bytes_of_hex("69c4e0d86a7b0430d8cdb78070b4c55a");
  std::array<std::uint8_t, 16> out{};
  detail::aes_encrypt_blocks_openssl(key, plain.data(), out.data(), 1);
  EXPECT_EQ(out, expect);
  if (!detail::aes_ni_enabled()) GTEST_SKIP() << "no AES-NI on this processor: the OpenSSL path alone is checked";
  out.fill(0);
  detail::aes_encrypt_blocks_ni(detail::aes_round_keys(key), plain.data(), out.data(), 1);
  EXPECT_EQ(out, expect);
}

// Block k of stream (key, purpose, index) is AES(key, LE32 k_lo | LE32 k_hi |
// LE32 purpose | LE32 index) read as two little-endian words (docs/noise.md),
// whichever path computes it; and the GaussianStream gives those words.
TEST(SecretStreamTest, CounterBlocksAreAesOfTheCounterLayoutOnEveryPath) {
  const NoiseKey key = testing::other_test_noise_key();
  const std::uint32_t purpose = 2, index = 0xfffffffeu;
  for (std::uint64_t first : {std::uint64_t{0}, std::uint64_t{5}, (std::uint64_t{1} << 32) - 3}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9}, std::size_t{300}}) {
      std::vector<std::uint8_t> counters(16 * count), cipher(16 * count);
      for (std::size_t j = 0; j < count; ++j) {
        const std::uint64_t k = first + j;
        const std::uint32_t words[4] = {static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), purpose,
                                        index};
        for (int w = 0; w < 4; ++w)
          for (int b = 0; b < 4; ++b) counters[16 * j + 4 * w + b] = static_cast<std::uint8_t>(words[w] >> (8 * b));
      }
      detail::aes_encrypt_blocks_openssl(key.bytes(), counters.data(), cipher.data(), count);
      std::vector<std::uint64_t> expect(2 * count);
      for (std::size_t l = 0; l < 2 * count; ++l)
        for (int b = 7; b >= 0; --b) expect[l] = (expect[l] << 8) | cipher[8 * l + static_cast<std::size_t>(b)];
      for (bool ni_off : {false, true}) {
        detail::aes_ni_turn_off_for_tests(ni_off);
        std::vector<std::uint64_t> got(2 * count);
        detail::aes_counter_blocks(key.bytes(), detail::aes_round_keys(key.bytes()), purpose, index, first, count,
                                   got.data());
        EXPECT_EQ(got, expect) << "first " << first << " count " << count << " AES-NI off " << ni_off;
      }
      detail::aes_ni_turn_off_for_tests(false);
    }
  }
  GaussianStream stream(key, StreamPurpose::kTest, 9);
  std::vector<std::uint64_t> words(40);
  detail::aes_counter_blocks(key.bytes(), detail::aes_round_keys(key.bytes()),
                             static_cast<std::uint32_t>(StreamPurpose::kTest), 9, 0, 20, words.data());
  for (std::uint64_t w : words) EXPECT_EQ(w, stream.next_u64());
}

// The same normals whether AES-NI or OpenSSL makes the blocks.
TEST(SecretStreamTest, SameNormalsWithAndWithoutAesNi) {
  GaussianStream with(testing::test_noise_key(), StreamPurpose::kTreeNoise);
  Vec a(1001);
  with.fill(a, 1.5);
  detail::aes_ni_turn_off_for_tests(true);
  GaussianStream without(testing::test_noise_key(), StreamPurpose::kTreeNoise);
  Vec b(1001);
  without.fill(b, 1.5);
  const double single = GaussianStream(testing::test_noise_key(), StreamPurpose::kTreeNoise).next();
  detail::aes_ni_turn_off_for_tests(false);
  for (Eigen::Index i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << "i=" << i;
  EXPECT_EQ(1.5 * single, a[0]);
}

TEST(SecretStreamTest, DifferentKeysPurposesOrIndicesGiveDifferentStreams) {
  const NoiseKey key = testing::test_noise_key();
  GaussianStream base(key, StreamPurpose::kTreeNoise, 0);
  GaussianStream other_key(testing::other_test_noise_key(), StreamPurpose::kTreeNoise, 0);
  GaussianStream other_purpose(key, StreamPurpose::kGaussianNoise, 0);
  GaussianStream other_index(key, StreamPurpose::kTreeNoise, 1);
  GaussianStream public_stream(kSeed, StreamPurpose::kTest, 0);
  const std::vector<double> x = draw(base, 64);
  for (GaussianStream* s : {&other_key, &other_purpose, &other_index, &public_stream}) {
    const std::vector<double> y = draw(*s, 64);
    int equal = 0;
    for (std::size_t i = 0; i < x.size(); ++i) equal += (x[i] == y[i]);
    EXPECT_EQ(equal, 0);
  }
}

TEST(NoiseKeyTest, HexRoundTripsAndFilesAreRead) {
  const NoiseKey key = NoiseKey::from_hex("  00112233445566778899AABBCCDDEEFF\n");
  EXPECT_EQ(key.to_hex(), "00112233445566778899aabbccddeeff");
  EXPECT_EQ(key.bytes()[0], 0x00);
  EXPECT_EQ(key.bytes()[15], 0xff);
  EXPECT_EQ(NoiseKey::from_hex(key.to_hex()), key);
  const std::string path = ::testing::TempDir() + "/dpsosp-noise-key-test";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("00112233445566778899aabbccddeeff\n", f);
    std::fclose(f);
  }
  // fopen makes it 0666 less the umask: readable by others, refused as ssh
  // refuses such a private key, with the mode and the fix (for root too).
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  try {
    NoiseKey::from_file(path);
    FAIL() << "accepted a key file that others can read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "noise key file " + path + " is readable by others (mode 0644); chmod 600 " + path);
  }
  ASSERT_EQ(::chmod(path.c_str(), 0620), 0);  // group-writable: refused too
  EXPECT_THROW(NoiseKey::from_file(path), Error);
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  EXPECT_EQ(NoiseKey::from_file(path), key);
  ASSERT_EQ(::chmod(path.c_str(), 0400), 0);
  EXPECT_EQ(NoiseKey::from_file(path), key);
  std::remove(path.c_str());
  EXPECT_THROW(NoiseKey::from_file(path), Error);
}

// A malformed key file is refused, and the message never repeats its text
// (which may be most of a key).
TEST(NoiseKeyTest, MalformedKeysAreRefusedWithoutEchoingThem) {
  for (const std::string bad : {"", "0011", "00112233445566778899aabbccddeeff00", "g0112233445566778899aabbccddeeff",
                                "00112233 445566778899aabbccddeeff", "0x112233445566778899aabbccddeeff"}) {
    try {
      NoiseKey::from_hex(bad);
      FAIL() << "accepted a malformed key";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("32 hexadecimal digits"), std::string::npos) << message;
      if (bad.size() >= 4) EXPECT_EQ(message.find(bad.substr(0, 4)), std::string::npos) << message;
    }
  }
}

// Two keys from the OS coincide with probability 2^-128.
TEST(NoiseKeyTest, GeneratedKeysDiffer) { EXPECT_NE(NoiseKey::generate(), NoiseKey::generate()); }

}  // namespace
}  // namespace dpsosp
