// The banded square-root factorization (include/dpsosp/factorization.hpp,
// docs/matrix-factorization.md "Several passes: banded, with cyclic Poisson sampling").
#include <cmath>
#include <numeric>

#include "dpsosp/error.hpp"
#include "dpsosp/factorization.hpp"

namespace dpsosp {

BandedFactorization BandedFactorization::square_root(Index bands) {
  if (bands == 0) throw Error("BandedFactorization::square_root: bands must be at least 1, got 0");
  BandedFactorization f;
  f.c.resize(bands);
  f.c[0] = 1.0;
  for (Index k = 1; k < bands; ++k)  // binom(2k, k) / 4^k = c_{k-1} (2k - 1) / (2k)
    f.c[k] = f.c[k - 1] * static_cast<double>(2 * k - 1) / static_cast<double>(2 * k);
  return f;
}

double BandedFactorization::column_norm() const {
  return std::sqrt(std::inner_product(c.begin(), c.end(), c.begin(), 0.0));
}

std::vector<double> BandedFactorization::inverse_coefficients(Index count) const {
  std::vector<double> w(count, 0.0);
  for (Index t = 0; t < count; ++t) {
    double v = t == 0 ? 1.0 : 0.0;
    for (Index j = 1; j < bands() && j <= t; ++j) v -= c[j] * w[t - j];
    w[t] = v / c[0];
  }
  return w;
}

double BandedFactorization::mean_prefix_variance(Index horizon) const {
  if (horizon == 0) throw Error("BandedFactorization::mean_prefix_variance: the horizon must be at least 1");
  // Row t of B = A C^{-1} holds the partial sums p_0 .. p_t of C^{-1}'s
  // coefficients, so ||row t||^2 = sum_{k <= t} p_k^2.
  const std::vector<double> w = inverse_coefficients(horizon);
  double partial = 0, row = 0, total = 0;
  for (Index t = 0; t < horizon; ++t) {
    partial += w[t];
    row += partial * partial;
    total += row;
  }
  return total / static_cast<double>(horizon);
}

BandedInverseFilter::BandedInverseFilter(const BandedFactorization& f, Index dim) : f_(f) {
  if (f_.c.empty() || !(f_.c[0] > 0)) throw Error("BandedInverseFilter: needs bands >= 1 and c_0 > 0");
  past_.assign(f_.bands() - 1, Vec::Zero(static_cast<Eigen::Index>(dim)));
  out_ = Vec::Zero(static_cast<Eigen::Index>(dim));
}

const Vec& BandedInverseFilter::next(const Vec& z) {
  out_ = z;
  // past_[newest_] is w_{t-1}, the one before it w_{t-2}, ...
  const std::size_t p = past_.size();
  for (std::size_t j = 1; j <= filled_; ++j) out_ -= f_.c[j] * past_[(newest_ + p + 1 - j) % p];
  if (f_.c[0] != 1.0) out_ /= f_.c[0];
  if (p > 0) {
    newest_ = (newest_ + 1) % p;
    past_[newest_] = out_;
    filled_ = std::min(filled_ + 1, p);
  }
  return out_;
}

}  // namespace dpsosp
