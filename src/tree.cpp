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
#include "dpsosp/tree.hpp"

#include <cmath>
#include <sstream>

#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

int trailing_zeros(std::uint64_t t) {
  int k = 0;
  while ((t & 1u) == 0) {
    t >>= 1;
    ++k;
  }
  return k;
}

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
  sum_ = Vec::Zero(static_cast<Eigen::Index>(dim_));
  nodes_.reserve(64);
}

const Vec& TreeNoise::next() {
  if (++t_ == 0) throw Error("TreeNoise::next: step counter overflowed 2^64");
  const int closing = trailing_zeros(t_);  // = trailing ones of t-1
  nodes_.resize(nodes_.size() - static_cast<std::size_t>(closing));

  Vec fresh(static_cast<Eigen::Index>(dim_));
  if (all_ones_) {
    fresh.setOnes();
  } else {
    stream_.fill(fresh, sigma_);
  }
  if (!nodes_.empty()) fresh += nodes_.back();
  nodes_.push_back(std::move(fresh));
  sum_ = nodes_.back();
  return sum_;
}

void TreeNoise::restart() {
  nodes_.clear();
  t_ = 0;
  sum_.setZero();
}

}  // namespace dpsosp
