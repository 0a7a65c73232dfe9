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

}  // namespace dpsosp
