// Internal: how a SpiderBoost-style optimizer privatises its running gradient
// estimate. One small strategy type per mechanism (STYLE.md point 4).
#pragma once
#include <cstddef>
#include <memory>

#include "dpsosp/noise.hpp"
#include "dpsosp/tree.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::detail {

/// Turns the exact running estimate nabla_t = O1 + sum of O2 outputs into the
/// released estimate. `restart` marks an O1 call (a new phase).
class ReleaseNoise {
 public:
  virtual ~ReleaseNoise() = default;
  /// released = nabla + noise; `sensitivity` is this release's L2 sensitivity.
  virtual void release(const Vec& nabla, bool restart, double sensitivity, Vec& released) = 0;
  /// Whether draw_ahead does anything.
  virtual bool draws_ahead() const { return false; }
  /// Draws `count` of the noise's random numbers now (on up to `threads`
  /// threads), and later ones `refill` at a time: the same noise, computed
  /// earlier (TreeNoise::draw_ahead). A no-op where draws_ahead() is false.
  virtual void draw_ahead(std::size_t /*count*/, std::size_t /*refill*/, int /*threads*/) {}
};

/// No noise (the non-private references).
class NoReleaseNoise final : public ReleaseNoise {
 public:
  void release(const Vec& nabla, bool, double, Vec& released) override { released = nabla; }
};

/// Tree mechanism: a fresh tree per phase, released = nabla + TREE(t).
class TreeReleaseNoise final : public ReleaseNoise {
 public:
  TreeReleaseNoise(Index dim, double sigma, const NoiseKey& key)
      : tree_(dim, sigma, GaussianStream(key, StreamPurpose::kTreeNoise)) {}
  void release(const Vec& nabla, bool restart, double, Vec& released) override {
    if (restart) tree_.restart();
    released = nabla + tree_.next();
  }
  bool draws_ahead() const override { return true; }
  void draw_ahead(std::size_t count, std::size_t refill, int threads) override {
    tree_.draw_ahead(count, refill, threads);
  }

 private:
  TreeNoise tree_;
};

/// Gaussian mechanism on every O1/O2 output (Ganesh et al.): each output gets
/// N(0, (z * sensitivity)^2 I), and the noise accumulates in the estimate until
/// the next O1 call.
class GaussianReleaseNoise final : public ReleaseNoise {
 public:
  GaussianReleaseNoise(Index dim, double noise_multiplier, const NoiseKey& key)
      : z_(noise_multiplier), stream_(key, StreamPurpose::kGaussianNoise), accumulated_(Vec::Zero(dim)),
        draw_(dim) {}
  void release(const Vec& nabla, bool restart, double sensitivity, Vec& released) override {
    if (restart) accumulated_.setZero();
    stream_.fill(draw_, z_ * sensitivity);
    accumulated_ += draw_;
    released = nabla + accumulated_;
  }

 private:
  double z_;
  GaussianStream stream_;
  Vec accumulated_, draw_;
};

}  // namespace dpsosp::detail
