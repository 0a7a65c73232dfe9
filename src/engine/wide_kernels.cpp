// The AVX2 inner loops (see wide_kernels.hpp). No Eigen here: every function
// is compiled for AVX2 by its target attribute and called only when
// wide::enabled() says the processor has it.
#include "engine/wide_kernels.hpp"

#include <immintrin.h>

#define DPSOSP_AVX2 __attribute__((target("avx2")))

namespace dpsosp::detail::wide {
namespace {

// The terms of a reduction: one, one SSE2 packet (two), two packets side by
// side (four), starting at entry i.
struct DotTerm {  // a_i w_i
  const double* a;
  const double* w;
  DPSOSP_AVX2 double one(Index i) const { return a[i] * w[i]; }
  DPSOSP_AVX2 __m128d two(Index i) const { return _mm_mul_pd(_mm_loadu_pd(a + i), _mm_loadu_pd(w + i)); }
  DPSOSP_AVX2 __m256d four(Index i) const { return _mm256_mul_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(w + i)); }
};
struct SquareTerm {  // a_i^2
  const double* a;
  DPSOSP_AVX2 double one(Index i) const { return a[i] * a[i]; }
  DPSOSP_AVX2 __m128d two(Index i) const {
    const __m128d x = _mm_loadu_pd(a + i);
    return _mm_mul_pd(x, x);
  }
  DPSOSP_AVX2 __m256d four(Index i) const {
    const __m256d x = _mm256_loadu_pd(a + i);
    return _mm256_mul_pd(x, x);
  }
};
struct ScaledSquareTerm {  // (s a_i)^2
  const double* a;
  double s;
  DPSOSP_AVX2 double one(Index i) const {
    const double p = s * a[i];
    return p * p;
  }
  DPSOSP_AVX2 __m128d two(Index i) const {
    const __m128d p = _mm_mul_pd(_mm_set1_pd(s), _mm_loadu_pd(a + i));
    return _mm_mul_pd(p, p);
  }
  DPSOSP_AVX2 __m256d four(Index i) const {
    const __m256d p = _mm256_mul_pd(_mm256_set1_pd(s), _mm256_loadu_pd(a + i));
    return _mm256_mul_pd(p, p);
  }
};
struct ScaledDifferenceSquareTerm {  // (s1 a_i - s0 a_i)^2
  const double* a;
  double s1, s0;
  DPSOSP_AVX2 double one(Index i) const {
    const double p = s1 * a[i] - s0 * a[i];
    return p * p;
  }
  DPSOSP_AVX2 __m128d two(Index i) const {
    const __m128d x = _mm_loadu_pd(a + i);
    const __m128d p = _mm_sub_pd(_mm_mul_pd(_mm_set1_pd(s1), x), _mm_mul_pd(_mm_set1_pd(s0), x));
    return _mm_mul_pd(p, p);
  }
  DPSOSP_AVX2 __m256d four(Index i) const {
    const __m256d x = _mm256_loadu_pd(a + i);
    const __m256d p = _mm256_sub_pd(_mm256_mul_pd(_mm256_set1_pd(s1), x), _mm256_mul_pd(_mm256_set1_pd(s0), x));
    return _mm256_mul_pd(p, p);
  }
};

// out[r] = sum over i < n of terms[r]'s term i, in Eigen's SSE2 order: see
// wide_kernels.hpp and eigen_order::sums, whose steps the comments name.
template <int R, class Term>
DPSOSP_AVX2 inline void reduce(const Term* terms, Index n, double* out, LinePrefetch* prefetch) {
  const Index end2 = n / 4 * 4;  // whole pairs of packets
  const Index end1 = n / 2 * 2;  // whole packets
  if (end1 == 0) {               // too short for a packet: left to right
    for (int r = 0; r < R; ++r) {
      double acc = n > 0 ? terms[r].one(0) : 0.0;
      for (Index i = 1; i < n; ++i) acc = acc + terms[r].one(i);
      out[r] = acc;
    }
    return;
  }
  __m128d low[R];
  if (end1 == 2) {  // a single packet: acc0 alone
    for (int r = 0; r < R; ++r) low[r] = terms[r].two(0);
  } else {
    // acc0 | acc1 in one register: lanes 0-1 are acc0, lanes 2-3 acc1.
    __m256d acc[R];
    for (int r = 0; r < R; ++r) acc[r] = terms[r].four(0);
    if (prefetch != nullptr) {
      for (Index i = 4; i < end2; i += 4) {
        prefetch->step();
        for (int r = 0; r < R; ++r) acc[r] = _mm256_add_pd(acc[r], terms[r].four(i));
      }
    } else {
      for (Index i = 4; i < end2; i += 4) {
        for (int r = 0; r < R; ++r) acc[r] = _mm256_add_pd(acc[r], terms[r].four(i));
      }
    }
    for (int r = 0; r < R; ++r) {
      low[r] = _mm_add_pd(_mm256_castpd256_pd128(acc[r]), _mm256_extractf128_pd(acc[r], 1));  // acc0 + acc1
      if (end1 > end2) low[r] = _mm_add_pd(low[r], terms[r].two(end2));                       // one more packet
    }
  }
  for (int r = 0; r < R; ++r) {
    double acc = _mm_cvtsd_f64(_mm_add_sd(low[r], _mm_unpackhi_pd(low[r], low[r])));  // predux: lane 0 + lane 1
    for (Index i = end1; i < n; ++i) acc = acc + terms[r].one(i);
    out[r] = acc;
  }
}

template <class Term>
DPSOSP_AVX2 void reduce_any(const Term* terms, Index count, Index n, double* out, LinePrefetch* prefetch = nullptr) {
  Index r = 0;
  for (; r + 4 <= count; r += 4) reduce<4>(terms + r, n, out + r, prefetch);
  if (r + 2 <= count) {
    reduce<2>(terms + r, n, out + r, prefetch);
    r += 2;
  }
  if (r < count) reduce<1>(terms + r, n, out + r, prefetch);
}

}  // namespace

bool cpu_has_avx2() { return __builtin_cpu_supports("avx2") != 0; }

DPSOSP_AVX2 void dots(const double* const* a, const double* const* w, Index count, Index n, double* out,
                      LinePrefetch* prefetch) {
  DotTerm terms[8];
  for (Index r = 0; r < count; ++r) terms[r] = DotTerm{a[r], w[r]};
  reduce_any(terms, count, n, out, prefetch);
}

DPSOSP_AVX2 void squared_norms(const double* const* v, Index count, Index n, double* out) {
  SquareTerm terms[8];
  for (Index r = 0; r < count; ++r) terms[r] = SquareTerm{v[r]};
  reduce_any(terms, count, n, out);
}

DPSOSP_AVX2 void scaled_squared_norms(const double* const* a, const double* s1, const double* s0, Index count, Index n,
                                      double* out, LinePrefetch* prefetch) {
  if (s0 == nullptr) {
    ScaledSquareTerm terms[8];
    for (Index r = 0; r < count; ++r) terms[r] = ScaledSquareTerm{a[r], s1[r]};
    reduce_any(terms, count, n, out, prefetch);
  } else {
    ScaledDifferenceSquareTerm terms[8];
    for (Index r = 0; r < count; ++r) terms[r] = ScaledDifferenceSquareTerm{a[r], s1[r], s0[r]};
    reduce_any(terms, count, n, out, prefetch);
  }
}

DPSOSP_AVX2 void scale_in_place(double* v, double f, Index n) {
  const __m256d g = _mm256_set1_pd(f);
  Index i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(v + i, _mm256_mul_pd(_mm256_loadu_pd(v + i), g));
  for (; i < n; ++i) v[i] = v[i] * f;
}

DPSOSP_AVX2 void add(double* sum, const double* row, Index n) {
  Index i = 0;
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(sum + i, _mm256_add_pd(_mm256_loadu_pd(sum + i), _mm256_loadu_pd(row + i)));
  for (; i < n; ++i) sum[i] = sum[i] + row[i];
}

DPSOSP_AVX2 void add_scaled_record(double* sum, const double* a, double s1, double s0, bool difference, int mode,
                                   double factor, Index n) {
  const __m256d f1 = _mm256_set1_pd(s1);
  const __m256d f0 = _mm256_set1_pd(s0);
  const __m256d g = _mm256_set1_pd(factor);
  Index i = 0;
  if (mode == kRowZero) {  // the clipped row is +0 everywhere: sum + 0
    const __m256d zero = _mm256_setzero_pd();
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(sum + i, _mm256_add_pd(_mm256_loadu_pd(sum + i), zero));
    for (; i < n; ++i) sum[i] = sum[i] + 0.0;
    return;
  }
  const bool scaled = mode == kRowScaled;
  for (; i + 4 <= n; i += 4) {
    const __m256d x = _mm256_loadu_pd(a + i);
    __m256d p = _mm256_mul_pd(f1, x);
    if (difference) p = _mm256_sub_pd(p, _mm256_mul_pd(f0, x));
    if (scaled) p = _mm256_mul_pd(p, g);
    _mm256_storeu_pd(sum + i, _mm256_add_pd(_mm256_loadu_pd(sum + i), p));
  }
  for (; i < n; ++i) {
    double p = s1 * a[i];
    if (difference) p = p - s0 * a[i];
    if (scaled) p = p * factor;
    sum[i] = sum[i] + p;
  }
}

}  // namespace dpsosp::detail::wide
