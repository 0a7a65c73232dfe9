// Internal: the sample order's shuffle, for 32- and 64-bit entries (the
// SamplePool uses 32-bit entries while n fits; tests check that both give the
// same order). DatasetLayout (dataset_layout.hpp) records an order on a
// dataset.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "data/dataset_layout.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/noise.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::detail {

// Fisher-Yates on the seed's own stream: every permutation equally likely, and
// the order depends on nothing but (seed, n). The swap partners do not depend
// on the array, so they are drawn a chunk ahead and their entries prefetched:
// the same draws and the same swaps in the same order, without waiting on one
// cache miss after another.
// The stream's words are made a batch at a time (next_u64s) and turned into
// indices by uniform_index's own rule (index_from_word), word after word:
// the same words for the same draws as uniform_index would take.
template <typename Entry>
void shuffle_order(std::vector<Entry>& order, Index n, std::uint64_t seed) {
  order.resize(n);
  std::iota(order.begin(), order.end(), Entry{0});
  GaussianStream stream(seed, StreamPurpose::kSampleOrder);
  constexpr Index kChunk = 32;
  constexpr std::size_t kWords = 256;
  std::uint64_t words[kWords];
  std::size_t used = kWords;
  const auto next_word = [&] {
    if (used == kWords) {
      stream.next_u64s(words, kWords);
      used = 0;
    }
    return words[used++];
  };
  Index partner[kChunk];
  for (Index i = n; i > 1;) {
    const Index m = std::min<Index>(kChunk, i - 1);
    for (Index k = 0; k < m; ++k) {
      std::uint64_t index = 0;
      while (!GaussianStream::index_from_word(next_word(), i - k, &index)) {
      }
      partner[k] = index;
      __builtin_prefetch(order.data() + partner[k], 1);
    }
    for (Index k = 0; k < m; ++k) std::swap(order[i - 1 - k], order[partner[k]]);
    i -= m;
  }
}

}  // namespace dpsosp::detail
