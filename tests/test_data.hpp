// Tests: small datasets with a fixed stream, shared by the engine's tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/noise.hpp"

namespace dpsosp::testing {

enum class Labels { kBinary, kReal, kClasses, kNone };

/// n records of p N(0,1) features from the stream (seed, kTest, 0), then the
/// labels of the kind (binary 0/1, real in [-1, 3), classes 0..2); `edit` may
/// change the features (extreme records) before a sparse copy drops the
/// entries with |z| < 0.8 (about 58% of them).
inline Dataset make_test_data(Index n, Index p, Labels labels, bool sparse, std::uint64_t seed,
                              const std::function<void(RowMatrix&)>& edit = {}) {
  GaussianStream g(seed, StreamPurpose::kTest, 0);
  RowMatrix x(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(p));
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < p; ++j) x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = g.next();
  Vec y;
  if (labels != Labels::kNone) {
    y.resize(static_cast<Eigen::Index>(n));
    for (Index i = 0; i < n; ++i) {
      const double u = g.uniform();
      y[static_cast<Eigen::Index>(i)] = labels == Labels::kBinary ? (u < 0.5 ? 0.0 : 1.0)
                                        : labels == Labels::kReal ? 4.0 * u - 1.0
                                                                  : std::floor(3.0 * u);
    }
  }
  if (edit) edit(x);
  if (!sparse) return Dataset(std::move(x), std::move(y));
  std::vector<Eigen::Triplet<double, std::int64_t>> triplets;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j)
      if (std::abs(x(i, j)) >= 0.8) triplets.emplace_back(i, j, x(i, j));
  SparseRowMatrix s(x.rows(), x.cols());
  s.setFromTriplets(triplets.begin(), triplets.end());
  return Dataset(std::move(s), std::move(y));
}

}  // namespace dpsosp::testing
