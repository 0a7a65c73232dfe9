// dpsosp: the binary tree mechanism (paper Algorithm 1) as a streaming type.
#pragma once
#include <cstdint>
#include <vector>

#include "dpsosp/noise.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// TREE(t) for t = 1, 2, ...: the sum of the noise of the dyadic nodes that
/// cover [1, t] (popcount(t) nodes). Only the open nodes' noise is kept
/// (O(d log T) memory) and exactly one fresh Gaussian vector is drawn per step.
class TreeNoise {
 public:
  /// sigma: per-coordinate noise of every node. all_ones: test mode, every
  /// node's noise is the all-ones vector (so TREE(t) = popcount(t) * ones).
  TreeNoise(Index dim, double sigma, GaussianStream stream, bool all_ones = false);
  /// Advances to the next step t and returns TREE(t) (valid until the next call).
  const Vec& next();
  /// Starts a fresh tree (new nodes, t = 0); the stream continues, so the
  /// new tree's noise is independent of the old one's.
  void restart();
  /// Steps taken in the current tree.
  std::uint64_t step() const { return t_; }
  /// Noise vectors currently held (open nodes), for the memory contract.
  Index live_vectors() const { return live_; }
  double sigma() const { return sigma_; }
  /// Draws the stream's next `count` numbers now, on up to `threads` threads
  /// (OpenMP), for the steps to come to take their noise from; when those run
  /// out, steps draw `refill` numbers at a time the same way (0: as without
  /// a lookahead, one node's noise at a time). Every step's result is
  /// unchanged: the same numbers of the same stream, only computed earlier,
  /// so that they can be computed beside other work or in parallel. Memory:
  /// max(count, refill) doubles.
  void draw_ahead(std::size_t count, std::size_t refill = 0, int threads = 1);

 private:
  Index dim_;
  double sigma_;
  GaussianStream stream_;
  bool all_ones_;
  std::uint64_t t_ = 0;
  // nodes_[0..live_) hold prefix sums of the open nodes' noise, largest node
  // first (tree.cpp); the vectors past live_ are kept for reuse.
  std::vector<Vec> nodes_;
  Index live_ = 0;
  // The lookahead (draw_ahead): the standard normals of the stream's numbers
  // position() - ahead_used_ .. position() - ahead_used_ + ahead_.size(); the
  // stream is moved on as they are used.
  std::vector<double> ahead_;
  std::size_t ahead_used_ = 0;
  std::size_t refill_ = 0;
  int refill_threads_ = 1;
  // fresh = sigma * the stream's next dim_ numbers, from the lookahead first.
  void draw_node(Vec& fresh);
};

}  // namespace dpsosp
