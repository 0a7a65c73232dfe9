// dpsosp: seeded, counter-based Gaussian noise.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dpsosp/types.hpp"

namespace dpsosp {

/// Purposes of the independent random streams of one run. Each (seed, purpose,
/// index) triple names its own Philox counter space, so streams never overlap and
/// results do not depend on the order in which threads ask for numbers.
enum class StreamPurpose : std::uint32_t {
  kSampleOrder = 1,   ///< the order in which records are drawn
  kTreeNoise = 2,     ///< tree-mechanism node noise
  kGaussianNoise = 3, ///< Gaussian-mechanism noise (baselines)
  kPerturbation = 4,  ///< saddle perturbation (post-processing)
  kSynthetic = 5,     ///< synthetic data generation
  kPoisson = 6,       ///< Poisson sampling (DP-SGD)
  kTest = 99,
};

/// Standard normal variates from Philox4x32-10 (Random123) with Box-Muller.
/// The k-th number of stream (seed, purpose, index) is a pure function of those
/// four values: reproducible across runs, machines and thread counts.
class GaussianStream {
 public:
  GaussianStream(std::uint64_t seed, StreamPurpose purpose, std::uint32_t index = 0);
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
  /// `first`), without moving the stream. A pure function of (seed, purpose,
  /// index, first): any thread may compute any stretch, ahead of time.
  void normals_at(std::uint64_t first, double* out, std::size_t count) const;
  /// Moves the stream count numbers on, as drawing them would.
  void skip(std::uint64_t count) { position_ += count; }

 private:
  // Numbers come in pairs: block k of the counter space gives numbers 2k, 2k+1.
  void block(std::uint64_t k, std::uint64_t out[2]) const;
  // Makes block k the cached one (its words; normals on demand).
  void load_block(std::uint64_t k);
  std::uint64_t seed_;
  std::uint32_t purpose_;
  std::uint32_t index_;
  std::uint64_t position_ = 0;
  // The last block used one number at a time, so that its second number costs
  // no second Philox call or Box-Muller transform (a cache: values never change).
  std::uint64_t cached_block_ = ~std::uint64_t{0};
  std::uint64_t cached_words_[2] = {0, 0};
  double cached_normals_[2] = {0, 0};
  bool cached_has_normals_ = false;
};

/// A seed from the operating system's secure source (std::random_device reading
/// /dev/urandom); used when the user gives none, and always reported.
std::uint64_t secure_random_seed();

}  // namespace dpsosp
