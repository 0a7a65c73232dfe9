// dpsosp: common vector and matrix types.
#pragma once
#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cstdint>
#include <vector>

namespace dpsosp {

using Vec = Eigen::VectorXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SparseRowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, std::int64_t>;
using Index = std::size_t;
using IndexList = std::vector<Index>;

/// Whether each of the n values at p is finite (neither NaN nor +-inf): the
/// sum of x * 0, which is +-0 exactly when every x is finite (inf * 0 and
/// NaN * 0 are NaN, and a NaN term makes the sum NaN). Eigen's allFinite()
/// compares x - x with itself and takes about 20 times as long on a loaded
/// data set (bench/gradients_bench.cpp, BM_AllFinite): it was a third of a
/// one-step run's time on Fashion-MNIST.
inline bool all_finite(const double* p, Index n) {
  return (Eigen::Map<const Eigen::ArrayXd>(p, static_cast<Eigen::Index>(n)) * 0.0).sum() == 0.0;
}
inline bool all_finite(const Vec& v) { return all_finite(v.data(), static_cast<Index>(v.size())); }
inline bool all_finite(const RowMatrix& m) { return all_finite(m.data(), static_cast<Index>(m.size())); }

}  // namespace dpsosp
