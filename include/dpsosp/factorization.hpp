// dpsosp: matrix factorizations of the prefix-sum workload (docs/matrix-factorization.md).
//
// A stream of T vectors u_1..u_T is released as its prefix sums A u (A the
// T x T lower-triangular matrix of ones) through a factorization A = B C:
// the mechanism adds Gaussian noise z in C's domain and releases
// B (C u + z) = A u + B z. One record enters one u_t, so the L2 sensitivity of
// C u is that of u_t times C's largest column norm, and each release's noise
// has the variance of its row of B. The binary tree is one such factorization;
// the square-root one (B = C = A^(1/2)) has less noise per release.
//
// Here C^{-1} is a buffered linear Toeplitz (BLT) matrix (McMahan, Dvijotham
// et al. 2024): lower-triangular Toeplitz with coefficients r_0 = 1,
// r_k = sum_j weight_j theta_j^(k-1) for k >= 1. Applying C^{-1} or C to a
// stream then takes one d-vector of state per buffer j, O(p d) a step, and
// the factorization is known for any horizon.
#pragma once
#include <cstddef>
#include <vector>

#include "dpsosp/types.hpp"

namespace dpsosp {

struct BltFactorization {
  /// theta_j in (0, 1), one per buffer; weight_j the buffer's weight.
  std::vector<double> theta, weight;

  /// The square-root factorization of Fichtenberger, Henzinger and Upadhyay
  /// (2023), B = C = A^(1/2) with Toeplitz coefficients c_k = binom(2k, k) / 4^k,
  /// realized as a BLT: c_k = (2/pi) int_0^(pi/2) cos^(2k)(psi) dpsi, and a
  /// Gauss-Legendre rule in log(psi) on [0.05 / sqrt(horizon), pi/2] turns the
  /// integral into a sum of geometric sequences (theta_j = cos^2(psi_j)). The
  /// buffers grow with the horizon (8 up to 64 steps, 12 up to 10^4, 16
  /// beyond); over `horizon` steps the product of its largest column norm and
  /// largest row norm is within 0.5 % of the exact square root's (tested).
  static BltFactorization square_root(Index horizon);

  /// The first `count` Toeplitz coefficients of C^{-1}: 1, then the buffers' sums.
  std::vector<double> inverse_coefficients(Index count) const;
  /// The first `count` Toeplitz coefficients of C, by running the streaming
  /// filter of C on the unit impulse (the same arithmetic as a release).
  std::vector<double> c_coefficients(Index count) const;
  /// The first `count` Toeplitz coefficients of B = A C^{-1} (partial sums of
  /// C^{-1}'s).
  std::vector<double> b_coefficients(Index count) const;
  /// C's largest column norm over `horizon` steps: its first column's,
  /// sqrt(sum_{k < horizon} c_k^2) (later columns are shorter prefixes of it).
  double max_column_norm(Index horizon) const;
  /// The sensitivity of C u per unit of a release's when every record enters
  /// the releases i, i + period, i + 2 period, ... below `horizon` for one i
  /// < period: passes over one sample order, `period` releases each. The
  /// largest over i of ||sum_e C[:, i + e period]||, which is i = 0's (column
  /// i + e period is column e period shifted down by i, so i's sum is i = 0's
  /// shifted and cut at the horizon). period >= horizon: max_column_norm.
  double cyclic_participation_norm(Index horizon, Index period) const;
  /// sum_{k <= t} b_k^2 for t = 0..count-1: the variance, per unit of node
  /// noise sigma^2 and per coordinate, of release t's noise (row t of B).
  std::vector<double> release_variances(Index count) const;

  Index buffers() const { return theta.size(); }
  /// Throws Error unless theta and weight have the same size (>= 1), every
  /// theta lies in (0, 1) and every weight is finite.
  void Validate() const;
};

/// The noise in C's domain turned into prefix-sum noise, a step at a time:
/// for a stream z_1, z_2, ... of d-vectors, next(z_t) returns (B z)_t =
/// sum_{i <= t} (C^{-1} z)_i. State: one d-vector per buffer and the sum.
class BltNoiseFilter {
 public:
  BltNoiseFilter(const BltFactorization& f, Index dim);
  const Vec& next(const Vec& z);
  void reset();

 private:
  BltFactorization f_;
  std::vector<Vec> buffers_;
  Vec prefix_, y_;
};

/// The exact values in C's domain, a step at a time: for a stream u_1, u_2,
/// ... of d-vectors, next(u_t) returns (C u)_t, inverting C^{-1}'s filter:
/// (C u)_t = u_t - sum_j weight_j s_j with s_j = sum_{k >= 1} theta_j^(k-1) (C u)_{t-k}.
class BltInverseFilter {
 public:
  BltInverseFilter(const BltFactorization& f, Index dim);
  const Vec& next(const Vec& u);
  void reset();

 private:
  BltFactorization f_;
  std::vector<Vec> buffers_;
  Vec out_;
};

/// The banded square-root factorization (Kalinin and Lampert 2024, "BSR"):
/// C lower-triangular Toeplitz with the square root's first `bands`
/// coefficients c_k = binom(2k, k) / 4^k (c_0 = 1) and zeros below the band,
/// B = A C^{-1}. A b-banded C is what amplification by cyclic Poisson sampling
/// needs (docs/privacy-accounting.md section 9): a record that takes part in
/// steps at least b apart enters disjoint rows of C u. One band is the
/// identity (DP-SGD's noise).
struct BandedFactorization {
  std::vector<double> c;  ///< c_0 .. c_{bands - 1}

  /// Throws Error for bands = 0.
  static BandedFactorization square_root(Index bands);
  Index bands() const { return c.size(); }
  /// sqrt(sum_k c_k^2): the norm of every column of C but the last bands - 1
  /// (cut short by the horizon), so the largest.
  double column_norm() const;
  /// The first `count` Toeplitz coefficients of C^{-1} (its response to the unit
  /// impulse: w_0 = 1 / c_0, w_t = -(sum_{1 <= j < bands} c_j w_{t-j}) / c_0).
  std::vector<double> inverse_coefficients(Index count) const;
  /// The mean over the releases t < horizon of ||row t of B||^2, B = A C^{-1}:
  /// the prefix sums' noise variance per unit of C-domain noise sigma^2 and
  /// per coordinate, averaged over the run (the iterates sum the releases).
  double mean_prefix_variance(Index horizon) const;
};

/// C^{-1} applied to a stream of d-vectors, a step at a time: next(z_t)
/// returns (C^{-1} z)_t, the recursion of inverse_coefficients. State: the
/// last bands - 1 outputs (O(bands d) memory and work a step).
class BandedInverseFilter {
 public:
  BandedInverseFilter(const BandedFactorization& f, Index dim);
  const Vec& next(const Vec& z);

 private:
  BandedFactorization f_;
  std::vector<Vec> past_;  // ring of the last bands - 1 outputs
  std::size_t newest_ = 0, filled_ = 0;
  Vec out_;
};

}  // namespace dpsosp
