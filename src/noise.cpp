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

#include <algorithm>
#include <random>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {
using Philox = r123::Philox4x32;
}

GaussianStream::GaussianStream(std::uint64_t seed, StreamPurpose purpose, std::uint32_t index)
    : seed_(seed), purpose_(static_cast<std::uint32_t>(purpose)), index_(index) {}

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

}  // namespace

void GaussianStream::block(std::uint64_t k, std::uint64_t out[2]) const {
  philox_words(seed_, purpose_, index_, k, out);
}

void GaussianStream::load_block(std::uint64_t k) {
  if (k == cached_block_) return;
  block(k, cached_words_);
  cached_block_ = k;
  cached_has_normals_ = false;
}

std::uint64_t GaussianStream::next_u64() {
  load_block(position_ / 2);
  return cached_words_[position_++ % 2];
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
  // Whole blocks, a batch at a time: independent Philox calls the core runs
  // side by side.
  constexpr std::size_t kBatch = 16;
  while (count - j >= 2) {
    const std::size_t pairs = std::min(kBatch, (count - j) / 2);
    const std::uint64_t first = position_ / 2;
    for (std::size_t p = 0; p < pairs; ++p) {
      philox_words(seed_, purpose_, index_, first + static_cast<std::uint64_t>(p), out + j + 2 * p);
    }
    j += 2 * pairs;
    position_ += 2 * static_cast<std::uint64_t>(pairs);
  }
  if (j < count) out[j] = next_u64();
}

double GaussianStream::next() {
  load_block(position_ / 2);
  if (!cached_has_normals_) {
    const r123::double2 z = r123::boxmuller(cached_words_[0], cached_words_[1]);
    cached_normals_[0] = z.x;
    cached_normals_[1] = z.y;
    cached_has_normals_ = true;
  }
  return cached_normals_[position_++ % 2];
}

void GaussianStream::fill(Eigen::Ref<Vec> out, double sigma) {
  const Eigen::Index n = out.size();
  Eigen::Index j = 0;
  if (n > 0 && position_ % 2 == 1) {  // finish the pair that was started
    out[j++] = sigma * next();
  }
  // Whole blocks, a batch at a time: first the Philox words of the batch (a
  // tight loop of independent integer work the core overlaps), then the
  // Box-Muller transforms, whose libm calls set the pace.
  constexpr Eigen::Index kBatch = 16;
  std::uint64_t words[kBatch][2];
  while (j + 1 < n) {
    const Eigen::Index pairs = std::min(kBatch, (n - j) / 2);
    const std::uint64_t first = position_ / 2;
    for (Eigen::Index p = 0; p < pairs; ++p) {
      philox_words(seed_, purpose_, index_, first + static_cast<std::uint64_t>(p), words[p]);
    }
    for (Eigen::Index p = 0; p < pairs; ++p, j += 2) {
      const r123::double2 z = r123::boxmuller(words[p][0], words[p][1]);
      out[j] = sigma * z.x;
      out[j + 1] = sigma * z.y;
    }
    position_ += 2 * static_cast<std::uint64_t>(pairs);
  }
  if (j < n) out[j] = sigma * next();
}

std::uint64_t secure_random_seed() {
  std::random_device device("/dev/urandom");
  const std::uint64_t hi = device();
  return (hi << 32) | device();
}

}  // namespace dpsosp
