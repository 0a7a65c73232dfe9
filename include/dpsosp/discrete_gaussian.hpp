// dpsosp: exact samplers of the discrete Gaussian and its helpers (Canonne,
// Kamath, Steinke 2020, arXiv 2004.00010, Algorithms 1-3), on integers and
// rationals only: no floating-point number is involved in a draw, so a
// released value on a grid carries no low-order bits that depend on the data
// (the attacks of Mironov 2012 and Jin et al. 2022). docs/noise.md.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dpsosp/noise.hpp"

namespace dpsosp {

/// Unsigned 128-bit integers (GCC and Clang): the rationals of the samplers.
using UInt128 = unsigned __int128;

/// The random words of the exact samplers: 64-bit words of a stream, a batch
/// at a time, and single bits from them. Deterministic: the same stream
/// position gives the same draws.
class RandomWords {
 public:
  explicit RandomWords(GaussianStream& stream) : stream_(stream) {}
  std::uint64_t word();
  /// k fresh random bits (1 <= k <= 64) in the low bits; the samplers take
  /// only the bits they need, so a small range costs a few bits, not a word.
  std::uint64_t bits(int k);
  bool bit();
  /// Uniform in [0, n), n >= 1: rejection on bit_length(n - 1) fresh bits,
  /// so exactly uniform.
  UInt128 uniform_below(UInt128 n);
  /// Words taken from the stream so far.
  std::uint64_t words_used() const { return taken_; }

 private:
  static constexpr std::size_t kBatch = 32;
  GaussianStream& stream_;
  std::uint64_t buffer_[kBatch] = {};
  std::size_t next_ = kBatch;
  std::uint64_t bits_ = 0;
  int bits_left_ = 0;
  std::uint64_t taken_ = 0;
};

/// Exact samplers on integers. Each throws Error for an argument out of its
/// range (never for anything a draw produces).
namespace exact {

/// True with probability num / den exactly (0 <= num <= den, den >= 1).
bool bernoulli(RandomWords& w, UInt128 num, UInt128 den);
/// True with probability exp(-num / den) exactly (den >= 1, num / den < 2^20;
/// CKS Algorithm 1). num / den above 2^20 (a probability below e^-1000000)
/// is refused.
bool bernoulli_exp(RandomWords& w, UInt128 num, UInt128 den);
/// The discrete Laplace on Z with P(y) proportional to exp(-|y| / t), t >= 1
/// (CKS Algorithm 2 with s = 1).
std::int64_t discrete_laplace(RandomWords& w, std::uint64_t t);
/// The largest integer scale a discrete Gaussian draw accepts: s^2 t^2 and the
/// acceptance test's numerator stay inside 128 bits.
constexpr std::uint64_t kMaxDiscreteSigma = std::uint64_t{1} << 28;
/// The discrete Gaussian N_Z(0, s^2) on Z, P(y) proportional to
/// exp(-y^2 / (2 s^2)), for an integer 1 <= s <= kMaxDiscreteSigma (CKS
/// Algorithm 3 with sigma^2 = s^2, t = s + 1). Exact, but for one event: a
/// discrete Laplace proposal beyond 64 t (probability below e^-64 per
/// proposal) is rejected without its test, which removes the discrete
/// Gaussian's mass beyond about 64 s (below e^-2000, docs/noise.md).
std::int64_t discrete_gaussian(RandomWords& w, std::uint64_t s);

}  // namespace exact

/// out[j] = N_Z(0, s^2) draws, j < count, from the secret stream (key,
/// purpose, release): coordinates in blocks of kDiscreteBlock, block b from
/// its own stretch of the stream (position b * 2^32), so any number of
/// threads draws the same numbers. Values are exact integers (|y| < 2^53).
constexpr std::size_t kDiscreteBlock = 32;
void fill_discrete_gaussian(const NoiseKey& key, StreamPurpose purpose, std::uint32_t release, std::uint64_t s,
                            double* out, std::size_t count, int threads);

}  // namespace dpsosp
