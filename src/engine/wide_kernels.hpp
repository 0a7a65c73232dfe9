// Internal: the engine's inner loops in 256-bit (AVX2) instructions, giving
// the bits of the SSE2 build's Eigen expressions they replace.
//
// The library is built for plain x86-64, where Eigen works in packets of two
// doubles. Elementwise operations (v *= f, sum += row, s1 * a - s0 * a)
// round each entry on its own, so four lanes at a time give the same numbers
// as two. Reductions (dot products, squared norms) are sums in a fixed order:
// Eigen's SSE2 order keeps two 2-lane accumulators, one for entries 4k, 4k+1
// and one for 4k+2, 4k+3 (eigen_order.hpp); one 4-lane accumulator holds
// exactly those two, so a 4-lane loop makes the same additions. There is no
// FMA here (a fused multiply-add rounds once where the reference rounds
// twice), and no Eigen in the implementation file, so no Eigen template is
// ever instantiated with AVX code.
//
// enabled() is true only when the processor has AVX2, this build's Eigen
// packets are SSE2's, and a one-time check finds these functions giving the
// reference bits on random vectors of many lengths (eigen_order.cpp);
// otherwise the callers use the Eigen forms.
#pragma once
#include <cstddef>
#include <cstdint>

#include "dpsosp/types.hpp"

namespace dpsosp::detail::wide {

/// Cache lines to bring in while a kernel runs, one line per step: the
/// records of a later group. Issued a few at a time inside the kernels' loops,
/// the prefetches leave the core's fill buffers free for the loads the
/// kernel itself makes; issued all at once (flush), they can hold up the
/// kernel until most of them have been served. Prefetching never changes a
/// result.
class LinePrefetch {
 public:
  static constexpr int kMaxSpans = 16;
  /// Adds the lines of [p, p + bytes) (ignored when full).
  void add(const void* p, std::size_t bytes) {
    if (spans_ == kMaxSpans || bytes == 0) return;
    const auto begin = reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{63};
    next_[spans_] = begin;
    end_[spans_] = reinterpret_cast<std::uintptr_t>(p) + bytes;
    ++spans_;
  }
  /// Brings in the next line, if any.
  void step() {
    if (current_ == spans_) return;
    __builtin_prefetch(reinterpret_cast<const void*>(next_[current_]), 0, 2);
    next_[current_] += 64;
    if (next_[current_] >= end_[current_]) ++current_;
  }
  /// Brings in every line not yet brought in.
  void flush() {
    while (current_ < spans_) step();
  }
  /// Starts afresh (no lines).
  void clear() { spans_ = current_ = 0; }

 private:
  std::uintptr_t next_[kMaxSpans] = {};
  std::uintptr_t end_[kMaxSpans] = {};
  int spans_ = 0;
  int current_ = 0;
};

/// Whether to use the functions below (checked once per process).
bool enabled();

/// Tests: run the SSE2 forms even where the wide ones are enabled (the path of
/// a processor without AVX2), until called again with false.
void turn_off_for_tests(bool off);

/// Whether the processor has AVX2 (the functions below need it).
bool cpu_has_avx2();

/// out[r] = <a[r], w[r]> over n entries, r < count <= 8, in Eigen's SSE2 order.
/// A prefetch, when given, takes a step every four entries.
void dots(const double* const* a, const double* const* w, Index count, Index n, double* out,
          LinePrefetch* prefetch = nullptr);
/// out[r] = ||v[r]||^2 over n entries, r < count <= 8, in Eigen's SSE2 order.
void squared_norms(const double* const* v, Index count, Index n, double* out);
/// v *= f.
void scale_in_place(double* v, double f, Index n);
/// sum += row.
void add(double* sum, const double* row, Index n);

/// out[r] = ||p_r||^2 over n entries, r < count <= 8, in Eigen's SSE2 order,
/// where p_r = s1[r] * a[r] (s0 == nullptr) or s1[r] * a[r] - s0[r] * a[r]:
/// the squared norm of the row s1 * a (- s0 * a), each product rounded, then
/// the difference, as Eigen's expressions compute it.
void scaled_squared_norms(const double* const* a, const double* s1, const double* s0, Index count, Index n, double* out,
                          LinePrefetch* prefetch = nullptr);

/// How add_scaled_record treats the row p = s1 a (- s0 a): as it is, clipped
/// (each entry times factor, as v *= c / ||v|| does), or clipped to zero.
enum RowMode : int { kRowAsIs = 0, kRowScaled = 1, kRowZero = 2 };

/// sum += p, p * factor or 0 (mode), p = s1 * a or s1 * a - s0 * a
/// (difference), each entry computed as for scaled_squared_norms.
void add_scaled_record(double* sum, const double* a, double s1, double s0, bool difference, int mode, double factor,
                       Index n);

}  // namespace dpsosp::detail::wide
