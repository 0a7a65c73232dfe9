// Internal: dot products and squared norms in exactly Eigen's summation order,
// several at once.
//
// The oracles' bits are those of Eigen's reductions (a.dot(b), v.norm()), whose
// order is fixed: for a vectorisable expression of n doubles (packets of P),
// two packet accumulators over pairs of packets, their sum, one more packet
// if there is one, the horizontal sum, then the scalar tail
// (Eigen/src/Core/Redux.h, redux_impl<..., LinearVectorizedTraversal,
// NoUnrolling>; an expression has no alignment peeling). Each addition waits
// for the previous one, so one reduction runs at the latency of an add, not
// the throughput. Computing R reductions side by side, each in Eigen's order,
// gives the same numbers R times faster.
//
// The order is an internal of Eigen, so it is checked once per process
// (verified()): on random vectors of many lengths these sums must equal
// Eigen's own, or every caller uses Eigen's functions instead.
#pragma once
#include <Eigen/Core>

#include <cstdint>
#include <vector>

#include "dpsosp/types.hpp"

namespace dpsosp::detail::eigen_order {

using Packet = Eigen::internal::packet_traits<double>::type;
constexpr Index kPacket = static_cast<Index>(Eigen::internal::packet_traits<double>::size);

/// out[r] = sum over i < n of term r at i, r < R, each in Eigen's order.
/// packet(r, i) is the packet of terms i..i+P-1, scalar(r, i) term i.
template <int R, class PacketTerm, class ScalarTerm>
EIGEN_STRONG_INLINE void sums(Index n, const PacketTerm& packet, const ScalarTerm& scalar, double* out) {
  using namespace Eigen::internal;
  constexpr Index P = kPacket;
  const Index end2 = n / (2 * P) * (2 * P);
  const Index end1 = n / P * P;
  if (end1 == 0) {  // too short for a packet: left to right
    for (int r = 0; r < R; ++r) {
      double acc = scalar(r, 0);
      for (Index i = 1; i < n; ++i) acc = acc + scalar(r, i);
      out[r] = acc;
    }
    return;
  }
  Packet acc0[R], acc1[R];
  for (int r = 0; r < R; ++r) acc0[r] = packet(r, 0);
  if (end1 > P) {
    for (int r = 0; r < R; ++r) acc1[r] = packet(r, P);
    for (Index i = 2 * P; i < end2; i += 2 * P) {
      for (int r = 0; r < R; ++r) {
        acc0[r] = padd(acc0[r], packet(r, i));
        acc1[r] = padd(acc1[r], packet(r, i + P));
      }
    }
    for (int r = 0; r < R; ++r) acc0[r] = padd(acc0[r], acc1[r]);
    if (end1 > end2) {
      for (int r = 0; r < R; ++r) acc0[r] = padd(acc0[r], packet(r, end2));
    }
  }
  for (int r = 0; r < R; ++r) {
    double acc = predux(acc0[r]);
    for (Index i = end1; i < n; ++i) acc = acc + scalar(r, i);
    out[r] = acc;
  }
}

/// out[r] = <a[r], w[r]> over n entries, for r < count: as a[r]'s row .dot(w[r]).
template <int R>
EIGEN_STRONG_INLINE void dots_fixed(const double* const* a, const double* const* w, Index n, double* out) {
  using namespace Eigen::internal;
  sums<R>(
      n, [&](int r, Index i) { return pmul(ploadu<Packet>(a[r] + i), ploadu<Packet>(w[r] + i)); },
      [&](int r, Index i) { return a[r][i] * w[r][i]; }, out);
}

inline void dots(const double* const* a, const double* const* w, Index count, Index n, double* out) {
  Index r = 0;
  for (; r + 8 <= count; r += 8) dots_fixed<8>(a + r, w + r, n, out + r);
  if (r + 4 <= count) {
    dots_fixed<4>(a + r, w + r, n, out + r);
    r += 4;
  }
  if (r + 2 <= count) {
    dots_fixed<2>(a + r, w + r, n, out + r);
    r += 2;
  }
  if (r < count) dots_fixed<1>(a + r, w + r, n, out + r);
}

/// out[r] = ||v[r]||^2 over n entries, for r < count: as v[r].squaredNorm().
template <int R>
EIGEN_STRONG_INLINE void squared_norms_fixed(const double* const* v, Index n, double* out) {
  using namespace Eigen::internal;
  sums<R>(
      n,
      [&](int r, Index i) {
        const Packet p = ploadu<Packet>(v[r] + i);
        return pmul(p, p);
      },
      [&](int r, Index i) { return v[r][i] * v[r][i]; }, out);
}

inline void squared_norms(const double* const* v, Index count, Index n, double* out) {
  Index r = 0;
  for (; r + 4 <= count; r += 4) squared_norms_fixed<4>(v + r, n, out + r);
  if (r + 2 <= count) {
    squared_norms_fixed<2>(v + r, n, out + r);
    r += 2;
  }
  if (r < count) squared_norms_fixed<1>(v + r, n, out + r);
}

/// Whether the functions above give Eigen's bits in this build (checked once).
bool verified();

/// For the one-time checks (here and in wide_check.cpp): a deterministic
/// source of values of mixed sign and magnitude, so that any change of
/// summation order shows in the last bits.
class CheckValues {
 public:
  explicit CheckValues(std::uint64_t seed) : state_(seed) {}
  double operator()();
  /// p[0..count) = the next count values.
  void fill(double* p, Eigen::Index count) {
    for (Eigen::Index i = 0; i < count; ++i) p[i] = (*this)();
  }

 private:
  std::uint64_t state_;
};

/// Vector lengths the checks try: 1 to 80, then some longer ones up to `longest`.
std::vector<Index> check_lengths(Index longest);

/// The checks' operands for vectors of n entries: `count` random rows, each
/// at its own offset from an aligned address, and a random vector of n + 1
/// entries, whose entries [shift, shift + n) give the other operand at two
/// offsets (shift 0 and 1).
struct CheckOperands {
  RowMatrix rows;
  Vec storage;
};
CheckOperands check_operands(CheckValues& random, Eigen::Index count, Index n);

/// Whether a and b have the same bits (the checks' test).
bool same_bits(double a, double b);

}  // namespace dpsosp::detail::eigen_order
