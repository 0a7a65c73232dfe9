// Internal: what the models' Hessian operators (Model::mean_hessian) share:
// the records as one dense block, and a sum over fixed chunks of records
// shared between threads, added in chunk order (the same bits for any
// thread count: the chunks do not depend on it).
#pragma once
#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"
#include "engine/work_sharing.hpp"

namespace dpsosp::detail {

/// The dense records idx as one row-major m x p block: a view of the
/// dataset's storage when they sit there one after another, else a copy.
class RecordBlock {
 public:
  RecordBlock(const Dataset& data, const IndexList& idx) : rows_(idx.size()), cols_(data.cols()) {
    const double* first = rows_ > 0 ? data.dense_row(idx[0]) : nullptr;
    bool consecutive = true;
    for (Index k = 0; k < rows_ && consecutive; ++k) consecutive = data.dense_row(idx[k]) == first + k * cols_;
    if (consecutive) {
      data_ = first;
      return;
    }
    copy_.resize(static_cast<Eigen::Index>(rows_), static_cast<Eigen::Index>(cols_));
    for (Index k = 0; k < rows_; ++k)
      copy_.row(static_cast<Eigen::Index>(k)) =
          Eigen::Map<const Eigen::RowVectorXd>(data.dense_row(idx[k]), static_cast<Eigen::Index>(cols_));
    data_ = copy_.data();
  }
  Eigen::Map<const RowMatrix> rows(Index begin, Index end) const {
    return {data_ + begin * cols_, static_cast<Eigen::Index>(end - begin), static_cast<Eigen::Index>(cols_)};
  }
  Index size() const { return rows_; }

 private:
  Index rows_, cols_;
  const double* data_ = nullptr;
  RowMatrix copy_;
};

/// sum over chunks [b, e) of kChunk records of partial(b, e, out) (out zeroed,
/// `size` entries), the chunks shared between threads and added in order.
template <class Partial>
Vec chunked_sum(Index records, Index size, Partial partial) {
  constexpr Index kChunk = 1024;
  const Index chunks = (records + kChunk - 1) / kChunk;
  RowMatrix parts(static_cast<Eigen::Index>(chunks), static_cast<Eigen::Index>(size));
  std::exception_ptr error;
  std::mutex error_mutex;
  const int threads = static_cast<int>(std::min<Index>(static_cast<Index>(available_threads()), chunks));
#pragma omp parallel for schedule(static) num_threads(std::max(threads, 1))
  for (std::int64_t c = 0; c < static_cast<std::int64_t>(chunks); ++c) {
    try {
      Eigen::Map<Vec> out(parts.row(static_cast<Eigen::Index>(c)).data(), static_cast<Eigen::Index>(size));
      out.setZero();
      const Index begin = static_cast<Index>(c) * kChunk;
      partial(begin, std::min(records, begin + kChunk), out);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  Vec sum = Vec::Zero(static_cast<Eigen::Index>(size));
  for (Eigen::Index c = 0; c < parts.rows(); ++c) sum += parts.row(c).transpose();
  return sum;
}

}  // namespace dpsosp::detail
