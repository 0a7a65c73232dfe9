// Counter-based Gaussian streams: public ones from Philox4x32-10 (Random123)
// keyed by the seed, secret ones from AES-128 in counter mode keyed by a
// NoiseKey (aes_ctr.hpp).
//
// Layout of the counter space: counter = (block low, block high, purpose,
// index); the key is the seed (Philox: low 32 bits, high 32 bits) or the
// NoiseKey (AES). Block k yields 128 random bits, i.e. two 64-bit words,
// turned into two normals by Box-Muller (the Random123 boxmuller, which never
// takes log(0)). Number j of a stream is therefore a pure function of (key,
// purpose, index, j).
#include "dpsosp/noise.hpp"

#include <Random123/philox.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <Random123/boxmuller.hpp>
#include <Random123/uniform.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>

#include "dpsosp/error.hpp"
#include "random/aes_ctr.hpp"
#include "random/philox_blocks.hpp"

namespace dpsosp {
namespace {
using Philox = r123::Philox4x32;

std::string purpose_name(StreamPurpose p) {
  switch (p) {
    case StreamPurpose::kTreeNoise: return "tree noise";
    case StreamPurpose::kGaussianNoise: return "Gaussian-mechanism noise";
    case StreamPurpose::kPoisson: return "Poisson sampling";
    case StreamPurpose::kDiscreteNoise: return "discrete Gaussian noise";
    case StreamPurpose::kMatrixNoise: return "matrix-factorization noise";
    case StreamPurpose::kClipEstimate: return "clip-estimate noise";
    default: return "purpose " + std::to_string(static_cast<std::uint32_t>(p));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

bool is_secret_purpose(StreamPurpose purpose) {
  return purpose == StreamPurpose::kTreeNoise || purpose == StreamPurpose::kGaussianNoise ||
         purpose == StreamPurpose::kPoisson || purpose == StreamPurpose::kDiscreteNoise ||
         purpose == StreamPurpose::kMatrixNoise || purpose == StreamPurpose::kClipEstimate ||
         purpose == StreamPurpose::kScaling;
}

NoiseKey NoiseKey::generate() {
  NoiseKey key;
  std::size_t got = 0;
  while (got < key.bytes_.size()) {
    const ssize_t r = ::getrandom(key.bytes_.data() + got, key.bytes_.size() - got, 0);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
    } else if (r < 0 && errno != EINTR) {
      throw Error(std::string("NoiseKey::generate: the operating system gave no random bytes (getrandom: ") +
                  std::strerror(errno) + ")");
    }
  }
  return key;
}

NoiseKey NoiseKey::from_hex(const std::string& text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  NoiseKey key;
  bool ok = end - begin == 2 * key.bytes_.size();
  for (std::size_t i = 0; ok && i < key.bytes_.size(); ++i) {
    const int hi = hex_value(text[begin + 2 * i]), lo = hex_value(text[begin + 2 * i + 1]);
    ok = hi >= 0 && lo >= 0;
    if (ok) key.bytes_[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  if (!ok) {
    // The text is not repeated: it may be (most of) a key.
    throw Error("NoiseKey: expected 32 hexadecimal digits (a 128-bit key, as dpsosp keygen writes it), got " +
                std::to_string(end - begin) + " characters that are not that");
  }
  return key;
}

NoiseKey NoiseKey::from_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("noise key file " + path + ": cannot open: " + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  // As ssh refuses a private key that others can read: the key is as secret
  // as the data (checked on the open file, for root too).
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw Error("noise key file " + path + ": cannot stat: " + std::strerror(errno));
  if ((S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw Error("noise key file " + path + " is " + ((st.st_mode & 044) != 0 ? "readable" : "accessible") +
                " by others (mode " + mode + "); chmod 600 " + path);
  }
  std::string text;
  char buffer[4097];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error("noise key file " + path + ": cannot read: " + std::strerror(errno));
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > 4096)
      throw Error("noise key file " + path + ": too large for a key file (32 hexadecimal digits)");
  }
  try {
    return from_hex(text);
  } catch (const Error& e) {
    throw Error("noise key file " + path + ": " + e.what());
  }
}

NoiseKey NoiseKey::from_bytes(const std::array<std::uint8_t, 16>& bytes) {
  NoiseKey key;
  key.bytes_ = bytes;
  return key;
}

std::string NoiseKey::to_hex() const {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes_) {
    s += kDigits[b >> 4];
    s += kDigits[b & 0xf];
  }
  return s;
}

GaussianStream::GaussianStream(std::uint64_t seed, StreamPurpose purpose, std::uint32_t index)
    : seed_(seed), purpose_(static_cast<std::uint32_t>(purpose)), index_(index) {
  if (is_secret_purpose(purpose)) {
    throw Error("GaussianStream: " + purpose_name(purpose) +
                " must come from a secret NoiseKey, not from the public seed (SPEC section 8)");
  }
}

GaussianStream::GaussianStream(const NoiseKey& key, StreamPurpose purpose, std::uint32_t index)
    : secret_(true),
      purpose_(static_cast<std::uint32_t>(purpose)),
      index_(index),
      key_(key.bytes()),
      round_keys_(detail::aes_round_keys(key.bytes())) {}

namespace {

// The two 64-bit words of block k of stream (seed, purpose, index).
inline void philox_words(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t k,
                         std::uint64_t out[2]) {
  Philox rng;
  const Philox::key_type key = {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  const Philox::ctr_type ctr = {{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), purpose, index}};
  const Philox::ctr_type r = rng(ctr, key);
  out[0] = (static_cast<std::uint64_t>(r[1]) << 32) | r[0];
  out[1] = (static_cast<std::uint64_t>(r[3]) << 32) | r[2];
}

#define DPSOSP_AVX2 __attribute__((target("avx2")))

// Four counters in the 64-bit lanes of each of two registers (eight blocks),
// each 32-bit word of the Philox state in the low half of a lane: one
// _mm256_mul_epu32 multiplies four 32-bit words into their 64-bit products,
// whose halves are Random123's mulhilo. Upper halves of lanes may hold
// garbage between rounds: the multiplications read only the lower halves,
// and the words are masked when they are put together.
DPSOSP_AVX2 void philox_blocks_avx2(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t first,
                                    std::size_t count, std::uint64_t* out) {
  const __m256i m0 = _mm256_set1_epi64x(0xD2511F53u), m1 = _mm256_set1_epi64x(0xCD9E8D57u);
  const __m256i low = _mm256_set1_epi64x(0xffffffffu);
  __m256i k0[10], k1[10];
  std::uint32_t key0 = static_cast<std::uint32_t>(seed), key1 = static_cast<std::uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    k0[r] = _mm256_set1_epi64x(key0);
    k1[r] = _mm256_set1_epi64x(key1);
    key0 += 0x9E3779B9u;  // Random123's bumpkey
    key1 += 0xBB67AE85u;
  }
  const __m256i purposes = _mm256_set1_epi64x(purpose), indices = _mm256_set1_epi64x(index);
  std::size_t j = 0;
  for (; j + 8 <= count; j += 8) {
    const std::uint64_t b = first + j;
    __m256i ctr[2] = {_mm256_set_epi64x(static_cast<long long>(b + 3), static_cast<long long>(b + 2),
                                        static_cast<long long>(b + 1), static_cast<long long>(b)),
                      _mm256_set_epi64x(static_cast<long long>(b + 7), static_cast<long long>(b + 6),
                                        static_cast<long long>(b + 5), static_cast<long long>(b + 4))};
    __m256i c0[2], c1[2], c2[2], c3[2];
    for (int h = 0; h < 2; ++h) {
      c0[h] = ctr[h];                         // block low word (upper half ignored)
      c1[h] = _mm256_srli_epi64(ctr[h], 32);  // block high word
      c2[h] = purposes;
      c3[h] = indices;
    }
    for (int r = 0; r < 10; ++r) {
      for (int h = 0; h < 2; ++h) {
        const __m256i p0 = _mm256_mul_epu32(c0[h], m0);  // hi0:lo0
        const __m256i p1 = _mm256_mul_epu32(c2[h], m1);  // hi1:lo1
        c0[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), c1[h]), k0[r]);
        c1[h] = p1;  // lo1 (upper half: hi1, ignored)
        c2[h] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), c3[h]), k1[r]);
        c3[h] = p0;  // lo0
      }
    }
    for (int h = 0; h < 2; ++h) {
      // word 0 = r1:r0, word 1 = r3:r2
      const __m256i w0 = _mm256_or_si256(_mm256_slli_epi64(c1[h], 32), _mm256_and_si256(c0[h], low));
      const __m256i w1 = _mm256_or_si256(_mm256_slli_epi64(c3[h], 32), _mm256_and_si256(c2[h], low));
      // Interleave to w0[0], w1[0], w0[1], w1[1] | w0[2], w1[2], w0[3], w1[3].
      const __m256i a = _mm256_unpacklo_epi64(w0, w1);  // w0[0] w1[0] | w0[2] w1[2]
      const __m256i c = _mm256_unpackhi_epi64(w0, w1);  // w0[1] w1[1] | w0[3] w1[3]
      __m256i* dst = reinterpret_cast<__m256i*>(out + 2 * (j + 4 * static_cast<std::size_t>(h)));
      _mm256_storeu_si256(dst, _mm256_permute2x128_si256(a, c, 0x20));
      _mm256_storeu_si256(dst + 1, _mm256_permute2x128_si256(a, c, 0x31));
    }
  }
  detail::philox_blocks_scalar(seed, purpose, index, first + j, count - j, out + 2 * j);
}

}  // namespace

namespace detail {

void philox_blocks_scalar(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t first,
                          std::size_t count, std::uint64_t* out) {
  for (std::size_t j = 0; j < count; ++j) philox_words(seed, purpose, index, first + j, out + 2 * j);
}

void philox_blocks(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t first,
                   std::size_t count, std::uint64_t* out) {
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  if (avx2) {
    philox_blocks_avx2(seed, purpose, index, first, count, out);
  } else {
    philox_blocks_scalar(seed, purpose, index, first, count, out);
  }
}

}  // namespace detail

void GaussianStream::blocks(std::uint64_t first, std::size_t count, std::uint64_t* out) const {
  if (secret_) {
    detail::aes_counter_blocks(key_, round_keys_, purpose_, index_, first, count, out);
  } else {
    detail::philox_blocks(seed_, purpose_, index_, first, count, out);
  }
}

void GaussianStream::load_block(std::uint64_t k) {
  if (cached_ && k - cached_first_ < kCachedBlocks) return;  // (unsigned: also false when k < cached_first_)
  blocks(k, kCachedBlocks, cached_words_);
  cached_first_ = k;
  cached_ = true;
}

std::uint64_t GaussianStream::next_u64() {
  const std::uint64_t k = position_ / 2;
  load_block(k);
  return cached_words_[2 * (k - cached_first_) + position_++ % 2];
}

double GaussianStream::uniform() { return r123::u01<double>(next_u64()); }

std::uint64_t GaussianStream::uniform_index(std::uint64_t n) {
  if (n == 0) throw Error("GaussianStream::uniform_index: n must be at least 1, got 0");
  std::uint64_t index = 0;
  while (!index_from_word(next_u64(), n, &index)) {
  }
  return index;
}

void GaussianStream::next_u64s(std::uint64_t* out, std::size_t count) {
  std::size_t j = 0;
  if (count > 0 && position_ % 2 == 1) out[j++] = next_u64();  // the second word of a started block
  // Whole blocks, all at once (philox_blocks: eight to a loop with AVX2).
  const std::size_t pairs = (count - j) / 2;
  blocks(position_ / 2, pairs, out + j);
  j += 2 * pairs;
  position_ += 2 * static_cast<std::uint64_t>(pairs);
  if (j < count) out[j] = next_u64();
}

double GaussianStream::next() {
  const std::uint64_t k = position_ / 2;
  if (!has_normals_ || k != normals_block_) {
    load_block(k);
    const std::uint64_t* words = cached_words_ + 2 * (k - cached_first_);
    const r123::double2 z = r123::boxmuller(words[0], words[1]);
    cached_normals_[0] = z.x;
    cached_normals_[1] = z.y;
    normals_block_ = k;
    has_normals_ = true;
  }
  return cached_normals_[position_++ % 2];
}

namespace {

// put(j, z) for j < count, z the stream's normal number first + j: Box-Muller
// on the Philox blocks, a batch of blocks at a time (first the words, a tight
// loop of independent integer work the core overlaps, then the transforms,
// whose libm calls set the pace). Number 2k is the first normal of block k's
// pair, 2k + 1 the second, however the numbers are grouped into calls.
template <class Put>
void each_normal(const GaussianStream& stream, std::uint64_t first, std::size_t count, Put put) {
  std::size_t j = 0;
  std::uint64_t block = first / 2;
  if (count > 0 && first % 2 == 1) {  // the second of a started pair
    std::uint64_t words[2];
    stream.blocks(block++, 1, words);
    put(j++, r123::boxmuller(words[0], words[1]).y);
  }
  constexpr std::size_t kBatch = 16;
  std::uint64_t words[kBatch][2];
  while (j + 1 < count) {
    const std::size_t pairs = std::min(kBatch, (count - j) / 2);
    stream.blocks(block, pairs, &words[0][0]);
    for (std::size_t p = 0; p < pairs; ++p, j += 2) {
      const r123::double2 z = r123::boxmuller(words[p][0], words[p][1]);
      put(j, z.x);
      put(j + 1, z.y);
    }
    block += pairs;
  }
  if (j < count) {  // the first of a pair
    stream.blocks(block, 1, &words[0][0]);
    put(j, r123::boxmuller(words[0][0], words[0][1]).x);
  }
}

}  // namespace

void GaussianStream::fill(Eigen::Ref<Vec> out, double sigma) {
  const auto n = static_cast<std::size_t>(out.size());
  each_normal(*this, position_, n,
              [&out, sigma](std::size_t j, double z) { out[static_cast<Eigen::Index>(j)] = sigma * z; });
  position_ += n;
}

void GaussianStream::normals_at(std::uint64_t first, double* out, std::size_t count) const {
  each_normal(*this, first, count, [out](std::size_t j, double z) { out[j] = z; });
}

std::uint64_t secure_random_seed() {
  std::random_device device("/dev/urandom");
  const std::uint64_t hi = device();
  return (hi << 32) | device();
}

}  // namespace dpsosp
