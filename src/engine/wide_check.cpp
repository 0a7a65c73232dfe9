// wide::enabled(): the processor has AVX2, Eigen's packets are SSE2's, and the
// wide functions give the bits of the Eigen expressions they replace (checked
// once per process on random vectors of many lengths and offsets).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/eigen_order.hpp"
#include "engine/wide_kernels.hpp"

namespace dpsosp::detail::wide {
namespace {

using eigen_order::same_bits;

bool same(const double* a, const double* b, Index n) { return std::memcmp(a, b, n * sizeof(double)) == 0; }

bool check() {
  eigen_order::CheckValues random(0x2545F4914F6CDD1Dull);
  // Up to 785 entries (1.5 ms): longer vectors run the same loop more times.
  for (Index n : eigen_order::check_lengths(785)) {
    const auto len = static_cast<Eigen::Index>(n);
    eigen_order::CheckOperands operands = eigen_order::check_operands(random, 8, n);
    const RowMatrix& m = operands.rows;
    const Vec& storage = operands.storage;
    for (int shift = 0; shift < 2; ++shift) {
      const Eigen::Map<const Vec> w(storage.data() + shift, len);
      const double* rows[8];
      const double* ws[8];
      for (int r = 0; r < 8; ++r) {
        rows[r] = m.row(r).data();
        ws[r] = w.data();
      }
      for (Index count = 1; count <= 8; ++count) {
        double got[8], norms[8];
        dots(rows, ws, count, n, got);
        squared_norms(rows, count, n, norms);
        for (Index r = 0; r < count; ++r) {
          const auto row = m.row(static_cast<Eigen::Index>(r));
          if (!same_bits(got[r], row.dot(w.transpose()))) return false;
          Vec copy = row.transpose();
          if (!same_bits(norms[r], Eigen::Ref<Vec>(copy).squaredNorm())) return false;
        }
      }
      const double s1 = random(), s0 = random(), f = random();
      const Eigen::Map<const Vec> a(m.row(1).data(), len);
      Vec expect(len), got(len);
      expect = a;
      expect *= f;
      got = a;
      scale_in_place(got.data(), f, n);
      if (!same(expect.data(), got.data(), n)) return false;
      expect = a;
      expect += w;
      got = a;
      add(got.data(), w.data(), n);
      if (!same(expect.data(), got.data(), n)) return false;
      // Rows that are multiples of a record: norms and adds.
      const double s1s[8] = {s1, s0, f, -s1, 0.5, -2.0, s0 * f, 1e-3};
      const double s0s[8] = {s0, f, s1, 0.25, -s0, 3.0, -f, 1e3};
      for (int difference = 0; difference < 2; ++difference) {
        double norms[8];
        scaled_squared_norms(rows, s1s, difference ? s0s : nullptr, 8, n, norms);
        for (int r = 0; r < 8; ++r) {
          const Eigen::Map<const Vec> row(rows[r], len);
          Vec v(len);
          if (difference) {
            v.noalias() = s1s[r] * row - s0s[r] * row;
          } else {
            v.noalias() = s1s[r] * row;
          }
          if (!same_bits(norms[r], v.squaredNorm())) return false;
          for (int mode : {kRowAsIs, kRowScaled, kRowZero}) {
            Vec clipped = v;
            if (mode == kRowScaled) clipped *= f;
            if (mode == kRowZero) clipped.setZero();
            expect = w;
            expect += clipped;
            got = w;
            add_scaled_record(got.data(), rows[r], s1s[r], s0s[r], difference != 0, mode, f, n);
            if (!same(expect.data(), got.data(), n)) return false;
          }
        }
      }
    }
  }
  return true;
}

}  // namespace

namespace {
std::atomic<bool> turned_off{false};
}  // namespace

bool enabled() {
  static const bool ok = eigen_order::kPacket == 2 && eigen_order::verified() && cpu_has_avx2() && check();
  return ok && !turned_off.load(std::memory_order_relaxed);
}

void turn_off_for_tests(bool off) { turned_off.store(off, std::memory_order_relaxed); }

}  // namespace dpsosp::detail::wide
