// The binary tree mechanism (paper Algorithm 1) as a stream.
//
// TREE(t) is the sum of the noise of the dyadic nodes whose union is [1, t]:
// one node of size 2^b for every one-bit b of t, so popcount(t) nodes. (The
// paper's NODE function has a typo in its test `k' <= k`; what it means, and
// what the privacy analysis needs, is this dyadic decomposition.)
//
// Going from t-1 to t, the nodes of the trailing one-bits of t-1 close and one
// node of size 2^k opens, k = number of trailing zeros of t (t-1 has exactly k
// trailing ones). The node that opens at step t covers (t - 2^k, t] and its
// noise is the one fresh Gaussian vector drawn at step t.
//
// nodes_[i] holds the *prefix sum* of the noise of open nodes 0..i (largest
// node first), not node i's noise alone. Closing nodes is then just dropping
// entries and opening one costs a single vector addition, so a step is O(d)
// exactly (not only amortised), no subtraction ever happens (the sum does not
// drift), and TREE(t) is always the same floating-point sum of its popcount(t)
// node vectors, added largest node first, whatever the history.
//
// A step allocates nothing: closed nodes' vectors stay in nodes_ (at most
// depth + 1 of them) and are overwritten when a node opens; the fresh noise is
// drawn straight into its slot and TREE(t) is returned from there, no copy.
// (With a lookahead, draw_ahead, a refill larger than the first draw grows the
// lookahead's buffer once.)
#include "dpsosp/tree.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

// t > 0.
int trailing_zeros(std::uint64_t t) { return __builtin_ctzll(t); }

}  // namespace

TreeNoise::TreeNoise(Index dim, double sigma, GaussianStream stream, bool all_ones)
    : dim_(dim), sigma_(sigma), stream_(stream), all_ones_(all_ones) {
  if (dim == 0) throw Error("TreeNoise: dim must be > 0, got 0");
  if (!std::isfinite(sigma) || sigma < 0) {
    std::ostringstream msg;
    msg.precision(17);
    msg << "TreeNoise: sigma must be finite and >= 0, got " << sigma;
    throw Error(msg.str());
  }
  nodes_.reserve(65);  // depth <= 64: references to nodes never move
}

const Vec& TreeNoise::next() {
  if (++t_ == 0) throw Error("TreeNoise::next: step counter overflowed 2^64");
  live_ -= static_cast<Index>(trailing_zeros(t_));  // = trailing ones of t-1: the nodes that close
  if (live_ == nodes_.size()) nodes_.emplace_back(static_cast<Eigen::Index>(dim_));
  Vec& fresh = nodes_[live_];
  if (all_ones_) {
    fresh.setOnes();
  } else {
    draw_node(fresh);
  }
  if (live_ > 0) fresh += nodes_[live_ - 1];
  ++live_;
  return fresh;
}

void TreeNoise::draw_node(Vec& fresh) {
  Index j = 0;
  while (j < dim_) {
    if (ahead_used_ == ahead_.size()) {
      if (refill_ == 0) break;
      draw_ahead(refill_, refill_, refill_threads_);
    }
    const auto k = static_cast<Index>(std::min<std::size_t>(dim_ - j, ahead_.size() - ahead_used_));
    // sigma * z, as GaussianStream::fill computes each entry.
    for (Index i = 0; i < k; ++i) fresh[static_cast<Eigen::Index>(j + i)] = sigma_ * ahead_[ahead_used_ + i];
    ahead_used_ += k;
    stream_.skip(k);
    j += k;
  }
  if (j < dim_) stream_.fill(fresh.tail(static_cast<Eigen::Index>(dim_ - j)), sigma_);
}

void TreeNoise::draw_ahead(std::size_t count, std::size_t refill, int threads) {
  refill_ = refill;
  refill_threads_ = std::max(threads, 1);
  ahead_.resize(count);
  ahead_used_ = 0;
  if (count == 0) return;
  // Pieces of at least 4096 numbers (a split costs one Philox block at most).
  const std::uint64_t first = stream_.position();
  const auto pieces = static_cast<std::int64_t>(
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(refill_threads_), count / 4096)));
  const GaussianStream& stream = stream_;
  double* out = ahead_.data();
#pragma omp parallel for num_threads(static_cast <int>(pieces)) schedule(static, 1) if (pieces > 1)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::size_t begin = count * static_cast<std::size_t>(p) / static_cast<std::size_t>(pieces);
    const std::size_t end = count * static_cast<std::size_t>(p + 1) / static_cast<std::size_t>(pieces);
    stream.normals_at(first + begin, out + begin, end - begin);
  }
}

void TreeNoise::restart() {
  live_ = 0;
  t_ = 0;
}

}  // namespace dpsosp
