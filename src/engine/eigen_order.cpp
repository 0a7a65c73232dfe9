// The one-time check that eigen_order's sums are Eigen's (see eigen_order.hpp).
#include "engine/eigen_order.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dpsosp::detail::eigen_order {
namespace {

// The reference expressions, exactly as the reference code writes them:
// Dataset::row_dot on a dense row and clip_to_norm's norm.
double reference_dot(const RowMatrix& m, Eigen::Index r, const Eigen::Ref<const Vec>& w) {
  return m.row(r).dot(w.transpose());
}
double reference_squared_norm(Eigen::Ref<Vec> v) { return v.squaredNorm(); }

bool check() {
  CheckValues random(0x9E3779B97F4A7C15ull);
  for (Index n : check_lengths(7840)) {
    const auto len = static_cast<Eigen::Index>(n);
    CheckOperands operands = check_operands(random, 3, n);
    const RowMatrix& m = operands.rows;
    for (int shift = 0; shift < 2; ++shift) {
      Eigen::Map<Vec> w(operands.storage.data() + shift, len);
      for (Eigen::Index r = 0; r < 3; ++r) {
        const double* rows[2] = {m.row(r).data(), m.row(r).data()};
        const double* ws[2] = {w.data(), w.data()};
        double got[2];
        dots(rows, ws, 2, n, got);
        const Vec w_copy = w;
        if (!same_bits(got[0], reference_dot(m, r, w))) return false;
        if (!same_bits(got[1], m.row(r).dot(w_copy.transpose()))) return false;
        double norm[1];
        squared_norms(rows, 1, n, norm);
        Vec row_copy = m.row(r).transpose();
        if (!same_bits(norm[0], reference_squared_norm(row_copy))) return false;
        if (!same_bits(std::sqrt(norm[0]), Eigen::Ref<Vec>(row_copy).norm())) return false;
      }
    }
  }
  return true;
}

}  // namespace

double CheckValues::operator()() {
  state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
  const double u = static_cast<double>(state_ >> 11) * 0x1.0p-53;
  return (u - 0.5) * std::ldexp(1.0, static_cast<int>(state_ >> 60) - 4);
}

CheckOperands check_operands(CheckValues& random, Eigen::Index count, Index n) {
  const auto len = static_cast<Eigen::Index>(n);
  CheckOperands operands{RowMatrix(count, len), Vec(len + 1)};
  random.fill(operands.rows.data(), operands.rows.size());
  random.fill(operands.storage.data(), operands.storage.size());
  return operands;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<Index> check_lengths(Index longest) {
  std::vector<Index> lengths;
  for (Index n = 1; n <= 80; ++n) lengths.push_back(n);
  for (Index n : {100, 127, 128, 129, 255, 784, 785, 7840}) {
    if (n <= longest) lengths.push_back(n);
  }
  return lengths;
}

bool verified() {
  static const bool ok = check();
  return ok;
}

}  // namespace dpsosp::detail::eigen_order
