// Internal: the sample order's shuffle, for 32- and 64-bit entries (the
// SamplePool uses 32-bit entries while n fits; tests check that both give the
// same order).
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "dpsosp/noise.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::detail {

// Fisher-Yates on the seed's own stream: every permutation equally likely, and
// the order depends on nothing but (seed, n). The swap partners do not depend
// on the array, so they are drawn a chunk ahead and their entries prefetched:
// the same draws and the same swaps in the same order, without waiting on one
// cache miss after another.
template <typename Entry>
void shuffle_order(std::vector<Entry>& order, Index n, std::uint64_t seed) {
  order.resize(n);
  std::iota(order.begin(), order.end(), Entry{0});
  GaussianStream stream(seed, StreamPurpose::kSampleOrder);
  constexpr Index kChunk = 32;
  Index partner[kChunk];
  for (Index i = n; i > 1;) {
    const Index m = std::min<Index>(kChunk, i - 1);
    for (Index k = 0; k < m; ++k) {
      partner[k] = stream.uniform_index(i - k);
      __builtin_prefetch(order.data() + partner[k], 1);
    }
    for (Index k = 0; k < m; ++k) std::swap(order[i - 1 - k], order[partner[k]]);
    i -= m;
  }
}

}  // namespace dpsosp::detail
