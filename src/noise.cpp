// Philox4x32-10 (Random123) counter-based Gaussian streams.
//
// Layout of the counter space: key = (seed low 32 bits, seed high 32 bits);
// counter = (block low, block high, purpose, index). Block k yields 128 random
// bits, i.e. two 64-bit words, turned into two normals by Box-Muller (the
// Random123 boxmuller, which never takes log(0)). Number j of a stream is
// therefore a pure function of (seed, purpose, index, j).
#include "dpsosp/noise.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>
#include <Random123/uniform.hpp>

#include <random>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {
using Philox = r123::Philox4x32;
}

GaussianStream::GaussianStream(std::uint64_t seed, StreamPurpose purpose, std::uint32_t index)
    : seed_(seed), purpose_(static_cast<std::uint32_t>(purpose)), index_(index) {}

void GaussianStream::block(std::uint64_t k, std::uint64_t out[2]) const {
  Philox rng;
  Philox::key_type key = {{static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32)}};
  Philox::ctr_type ctr = {{static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32), purpose_, index_}};
  const Philox::ctr_type r = rng(ctr, key);
  out[0] = (static_cast<std::uint64_t>(r[1]) << 32) | r[0];
  out[1] = (static_cast<std::uint64_t>(r[3]) << 32) | r[2];
}

std::uint64_t GaussianStream::next_u64() {
  std::uint64_t w[2];
  block(position_ / 2, w);
  return w[position_++ % 2];
}

double GaussianStream::uniform() { return r123::u01<double>(next_u64()); }

std::uint64_t GaussianStream::uniform_index(std::uint64_t n) {
  if (n == 0) throw Error("GaussianStream::uniform_index: n must be at least 1, got 0");
  // Rejection sampling on the largest multiple of n below 2^64: unbiased.
  const std::uint64_t limit = (~std::uint64_t{0}) - ((~std::uint64_t{0}) % n + 1) % n;
  for (;;) {
    const std::uint64_t u = next_u64();
    if (u <= limit) return u % n;
  }
}

double GaussianStream::next() {
  std::uint64_t w[2];
  const std::uint64_t k = position_ / 2;
  block(k, w);
  const r123::double2 z = r123::boxmuller(w[0], w[1]);
  return (position_++ % 2 == 0) ? z.x : z.y;
}

void GaussianStream::fill(Eigen::Ref<Vec> out, double sigma) {
  const Eigen::Index n = out.size();
  Eigen::Index j = 0;
  std::uint64_t w[2];
  if (n > 0 && position_ % 2 == 1) {  // finish the pair that was started
    out[j++] = sigma * next();
  }
  for (; j + 1 < n; j += 2) {
    block(position_ / 2, w);
    const r123::double2 z = r123::boxmuller(w[0], w[1]);
    out[j] = sigma * z.x;
    out[j + 1] = sigma * z.y;
    position_ += 2;
  }
  if (j < n) out[j] = sigma * next();
}

std::uint64_t secure_random_seed() {
  std::random_device device("/dev/urandom");
  const std::uint64_t hi = device();
  return (hi << 32) | device();
}

}  // namespace dpsosp
