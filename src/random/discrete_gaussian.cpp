// Exact discrete Gaussian sampling (include/dpsosp/discrete_gaussian.hpp):
// Canonne, Kamath, Steinke 2020, Algorithms 1 (Bernoulli(exp(-gamma))), 2
// (discrete Laplace) and 3 (discrete Gaussian by rejection from the discrete
// Laplace), with gamma = num / den kept as a ratio of 128-bit integers.
#include "dpsosp/discrete_gaussian.hpp"

#include <omp.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

int bit_length(UInt128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64);
  if (hi != 0) return 128 - __builtin_clzll(hi);
  const auto lo = static_cast<std::uint64_t>(x);
  return lo == 0 ? 0 : 64 - __builtin_clzll(lo);
}

[[noreturn]] void refuse(const char* who, const std::string& rule) {
  throw Error(std::string("exact::") + who + ": " + rule);
}

}  // namespace

std::uint64_t RandomWords::word() {
  if (next_ == kBatch) {
    stream_.next_u64s(buffer_, kBatch);
    next_ = 0;
  }
  ++taken_;
  return buffer_[next_++];
}

std::uint64_t RandomWords::bits(int k) {
  if (k < 1 || k > 64) refuse("bits", "k must be in [1, 64], got " + std::to_string(k));
  const auto low = [](std::uint64_t x, int n) { return n >= 64 ? x : x & ((std::uint64_t{1} << n) - 1); };
  if (k <= bits_left_) {
    const std::uint64_t r = low(bits_, k);
    bits_ = k >= 64 ? 0 : bits_ >> k;
    bits_left_ -= k;
    return r;
  }
  // The reservoir's bits first, then the low bits of a fresh word.
  const int have = bits_left_, need = k - have;
  const std::uint64_t w = word();
  const std::uint64_t r = bits_ | (low(w, need) << have);
  bits_ = need >= 64 ? 0 : w >> need;
  bits_left_ = 64 - need;
  return r;
}

bool RandomWords::bit() { return bits(1) != 0; }

UInt128 RandomWords::uniform_below(UInt128 n) {
  if (n == 0) refuse("uniform_below", "n must be at least 1, got 0");
  if (n == 1) return 0;
  const int b = bit_length(n - 1);
  for (;;) {
    // Exactly b fresh bits a try: accepted with probability > 1/2.
    UInt128 u = bits(std::min(b, 64));
    if (b > 64) u |= static_cast<UInt128>(bits(b - 64)) << 64;
    if (u < n) return u;
  }
}

namespace exact {

bool bernoulli(RandomWords& w, UInt128 num, UInt128 den) {
  if (den == 0 || num > den) refuse("bernoulli", "needs 0 <= num <= den and den >= 1");
  if (num == den) return true;
  if (num == 0) return false;
  return w.uniform_below(den) < num;
}

namespace {

// exp(-num/den) for num <= den: K = 1, 2, ... while Bernoulli(gamma / K)
// succeeds; true when the first failure comes at an odd K. The probability of
// stopping at K is gamma^(K-1)/(K-1)! - gamma^K/K!, so the sum over odd K is
// exp(-gamma). den * K stays in 128 bits: den < 2^113 and K beyond 2^14 has
// probability below 1/(2^14)!.
bool bernoulli_exp_at_most_one(RandomWords& w, UInt128 num, UInt128 den) {
  UInt128 k = 1;
  while (bernoulli(w, num, den * k)) ++k;
  return (k & 1u) != 0;
}

}  // namespace

bool bernoulli_exp(RandomWords& w, UInt128 num, UInt128 den) {
  if (den == 0) refuse("bernoulli_exp", "den must be at least 1");
  if (bit_length(den) > 113) refuse("bernoulli_exp", "den must be below 2^113");
  if (num <= den) {
    if (num < den) return bernoulli_exp_at_most_one(w, num, den);
    return bernoulli_exp_at_most_one(w, 1, 1);
  }
  // exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma))); a
  // 128-bit division only where the ratio is not in 64 bits.
  UInt128 whole;
  if ((num >> 64) == 0 && (den >> 64) == 0) {
    whole = static_cast<std::uint64_t>(num) / static_cast<std::uint64_t>(den);
  } else {
    whole = num / den;
  }
  if (whole > (UInt128{1} << 20)) refuse("bernoulli_exp", "num / den must be at most 2^20");
  for (UInt128 i = 0; i < whole; ++i)
    if (!bernoulli_exp_at_most_one(w, 1, 1)) return false;
  return bernoulli_exp_at_most_one(w, num - whole * den, den);
}

std::int64_t discrete_laplace(RandomWords& w, std::uint64_t t) {
  if (t == 0) refuse("discrete_laplace", "t must be at least 1, got 0");
  for (;;) {
    // X = U + t V with U uniform on {0..t-1} weighted by exp(-U/t) and V
    // geometric with ratio exp(-1): P(X = x) proportional to exp(-x/t).
    const auto u = static_cast<std::uint64_t>(w.uniform_below(t));
    if (!bernoulli_exp(w, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp(w, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = w.bit();
    if (negative && x == 0) continue;  // zero once, not twice
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

std::int64_t discrete_gaussian(RandomWords& w, std::uint64_t s) {
  if (s == 0 || s > kMaxDiscreteSigma) {
    std::ostringstream os;
    os << "discrete_gaussian: s must be in [1, 2^28], got " << s;
    throw Error("exact::" + os.str());
  }
  const std::uint64_t t = s + 1;  // floor(sigma) + 1
  const UInt128 s2 = static_cast<UInt128>(s) * s;
  const UInt128 den = 2 * s2 * t * t;  // < 2^113
  for (;;) {
    const std::int64_t y = discrete_laplace(w, t);
    const std::uint64_t a = y < 0 ? static_cast<std::uint64_t>(-y) : static_cast<std::uint64_t>(y);
    if (a > 64 * t) continue;  // e^-64 per proposal; the test's numerator stays in 128 bits
    // Accept with probability exp(-(|y| - s^2/t)^2 / (2 s^2)) = exp(-(|y| t - s^2)^2 / (2 s^2 t^2)).
    const UInt128 at = static_cast<UInt128>(a) * t;
    const UInt128 diff = at >= s2 ? at - s2 : s2 - at;
    if (bernoulli_exp(w, diff * diff, den)) return y;
  }
}

}  // namespace exact

void fill_discrete_gaussian(const NoiseKey& key, StreamPurpose purpose, std::uint32_t release, std::uint64_t s,
                            double* out, std::size_t count, int threads) {
  if (!is_secret_purpose(purpose)) throw Error("fill_discrete_gaussian: privacy noise needs a secret purpose");
  const std::size_t blocks = (count + kDiscreteBlock - 1) / kDiscreteBlock;
  const int team = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(std::max(threads, 1), blocks)));
  // Block b reads the stream from position b * 2^32: a block of 32 draws
  // uses about 200 words, so stretches never meet.
#pragma omp parallel for num_threads(team) schedule(static) if (team > 1)
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(blocks); ++b) {
    GaussianStream stream(key, purpose, release);
    stream.skip(static_cast<std::uint64_t>(b) << 32);
    RandomWords words(stream);
    const std::size_t begin = static_cast<std::size_t>(b) * kDiscreteBlock;
    const std::size_t end = std::min(count, begin + kDiscreteBlock);
    for (std::size_t j = begin; j < end; ++j) out[j] = static_cast<double>(exact::discrete_gaussian(words, s));
  }
}

}  // namespace dpsosp
