// dpsosp: counter-based random streams: public ones keyed by the seed, and the
// privacy noise keyed by a secret key (SPEC section 8).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "dpsosp/types.hpp"

namespace dpsosp {

/// Purposes of the independent random streams of one run. Each (key, purpose,
/// index) triple names its own counter space, so streams never overlap and
/// results do not depend on the order in which threads ask for numbers.
/// The privacy noise and everything whose secrecy a guarantee relies on are
/// secret streams, keyed by a NoiseKey; the rest are public, keyed by the seed.
enum class StreamPurpose : std::uint32_t {
  kSampleOrder = 1,    ///< public: the order in which records are drawn
  kTreeNoise = 2,      ///< secret: tree-mechanism node noise
  kGaussianNoise = 3,  ///< secret: Gaussian-mechanism noise (baselines, DP-SGD)
  kPerturbation = 4,   ///< public: saddle perturbation (post-processing)
  kSynthetic = 5,      ///< public: synthetic data generation
  kPoisson = 6,        ///< secret: Poisson sampling (DP-SGD; amplification needs it secret)
  kDiscreteNoise = 7,  ///< secret: the secure mode's discrete Gaussian noise (index = release)
  kMatrixNoise = 8,    ///< secret: the matrix-factorization mechanism's noise
  kClipEstimate = 9,   ///< secret: the noise of the private clip-norm estimates (--G auto)
  kScaling = 10,       ///< secret: the noise of the private feature and target scales (scaling.hpp)
  kTest = 99,          ///< either: tests and benchmarks
};

/// Whether a purpose's numbers must come from a secret NoiseKey (true for the
/// privacy noise and Poisson sampling).
bool is_secret_purpose(StreamPurpose purpose);

/// The secret key of a run's privacy noise: 128 bits for AES-128 (SPEC section
/// 8). The library never prints, logs or writes it; a report says only where
/// it came from. Keep a key file as secret as the data: whoever holds the key
/// (and the seed) can subtract the noise from a released result.
class NoiseKey {
 public:
  /// 128 fresh bits from the operating system (getrandom). Throws Error if the
  /// system cannot give them.
  static NoiseKey generate();
  /// From 32 hexadecimal digits (either case), surrounding whitespace ignored.
  /// The error message never repeats the text (it may be a key).
  static NoiseKey from_hex(const std::string& text);
  /// Reads a key file: 32 hexadecimal digits, as `dpsosp keygen` writes them.
  static NoiseKey from_file(const std::string& path);
  /// From 16 raw bytes (the AES-128 key, first byte first).
  static NoiseKey from_bytes(const std::array<std::uint8_t, 16>& bytes);
  /// The 32 lowercase hexadecimal digits of a key file (for `dpsosp keygen`).
  std::string to_hex() const;
  const std::array<std::uint8_t, 16>& bytes() const { return bytes_; }
  bool operator==(const NoiseKey& other) const { return bytes_ == other.bytes_; }
  bool operator!=(const NoiseKey& other) const { return !(*this == other); }

 private:
  NoiseKey() = default;
  std::array<std::uint8_t, 16> bytes_{};
};

/// Standard normal variates, uniforms and bits from a counter-based generator
/// with Box-Muller. A public stream is Philox4x32-10 (Random123) keyed by the
/// 64-bit seed: fast, statistically strong, not cryptographic, so fine for
/// what may be public. A secret stream is AES-128 in counter mode keyed by a
/// NoiseKey: without the key its numbers cannot be told from random. Number
/// k of stream (key or seed, purpose, index) is a pure function of those
/// values: reproducible across runs and thread counts.
class GaussianStream {
 public:
  /// A public stream keyed by the seed. Throws Error for a secret purpose
  /// (is_secret_purpose): privacy noise is never keyed by the public seed.
  GaussianStream(std::uint64_t seed, StreamPurpose purpose, std::uint32_t index = 0);
  /// A secret stream: AES-128 of the counters under `key`.
  GaussianStream(const NoiseKey& key, StreamPurpose purpose, std::uint32_t index = 0);
  /// Whether this stream is keyed by a NoiseKey.
  bool is_secret() const { return secret_; }
  /// out[j] = sigma * N(0,1), consuming out.size() numbers of the stream.
  void fill(Eigen::Ref<Vec> out, double sigma = 1.0);
  double next();
  /// A uniform in (0,1] from the same stream (consumes one number).
  double uniform();
  /// 64 uniform random bits (consumes one number).
  std::uint64_t next_u64();
  /// A uniform integer in [0, n), unbiased (rejection; consumes one or more numbers).
  std::uint64_t uniform_index(std::uint64_t n);
  /// out[0..count) = the next count results of next_u64(), computed a batch of
  /// blocks at a time (the same numbers, faster).
  void next_u64s(std::uint64_t* out, std::size_t count);
  /// uniform_index's rule for one word u and n >= 1: true and *index = the
  /// index when u is accepted, false when it is rejected (then the next word
  /// is tried).
  static bool index_from_word(std::uint64_t u, std::uint64_t n, std::uint64_t* index) {
    // Rejection sampling on the largest multiple of n below 2^64: unbiased.
    // The accepted words are u <= limit = 2^64 - 1 - (2^64 mod n); every u
    // below 2^64 - n is accepted, so the division that finds limit (and the
    // rejection test) are needed only for the top n words.
    constexpr std::uint64_t kMax = ~std::uint64_t{0};
    if (u > kMax - n && u > kMax - (kMax % n + 1) % n) return false;
    *index = u % n;
    return true;
  }
  /// Numbers consumed so far.
  std::uint64_t position() const { return position_; }
  /// out[0..count) = the standard normals this stream gives as its numbers
  /// first, first + 1, ... (what fill with sigma = 1 would write from position
  /// `first`), without moving the stream. A pure function of (key, purpose,
  /// index, first): any thread may compute any stretch, ahead of time.
  void normals_at(std::uint64_t first, double* out, std::size_t count) const;
  /// Moves the stream count numbers on, as drawing them would.
  void skip(std::uint64_t count) { position_ += count; }
  /// out[2j], out[2j+1] = the two 64-bit words of block first + j, j < count
  /// (block k gives numbers 2k and 2k+1).
  void blocks(std::uint64_t first, std::size_t count, std::uint64_t* out) const;

 private:
  // Makes the blocks from k on the cached ones (their words; normals on demand).
  void load_block(std::uint64_t k);
  bool secret_ = false;
  std::uint64_t seed_ = 0;  // public streams
  std::uint32_t purpose_;
  std::uint32_t index_;
  // Secret streams: the key and, where the processor has AES-NI, its
  // expanded round keys (11 x 128 bits).
  std::array<std::uint8_t, 16> key_{};
  std::array<std::uint64_t, 22> round_keys_{};
  std::uint64_t position_ = 0;
  // The blocks last used one number at a time, so that the numbers after the
  // first cost no generator call, and a pair's second normal no second
  // Box-Muller transform (a cache: values never change).
  static constexpr std::size_t kCachedBlocks = 8;
  bool cached_ = false;
  std::uint64_t cached_first_ = 0;
  std::uint64_t cached_words_[2 * kCachedBlocks] = {};
  bool has_normals_ = false;
  std::uint64_t normals_block_ = 0;
  double cached_normals_[2] = {0, 0};
};

/// A seed from the operating system's secure source (std::random_device reading
/// /dev/urandom); used when the user gives none, and always reported (the seed
/// keys only public streams).
std::uint64_t secure_random_seed();

}  // namespace dpsosp
