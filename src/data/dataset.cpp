// dpsosp: the Dataset: its records (dense or CSR, shared by copies), row
// access, subsets and the finiteness check. Where the records sit in memory
// (the sample order) is sample_order.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset_layout.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

void check_labels(const char* fn, Index rows, const Vec& labels) {
  const Index n = static_cast<Index>(labels.size());
  if (n != 0 && n != rows)
    throw Error(std::string(fn) + ": got " + std::to_string(n) + " labels for " + std::to_string(rows) +
                " rows (expected 0 or " + std::to_string(rows) + ")");
}

}  // namespace
// One empty Records for every empty or moved-from dataset (never written:
// store_in_sample_order copies shared records before moving them).
const std::shared_ptr<Dataset::Records>& Dataset::empty_records() {
  static const std::shared_ptr<Records> empty = std::make_shared<Records>();
  return empty;
}

Dataset::Dataset() : records_(empty_records()) {}

Dataset::Dataset(Dataset&& other) noexcept
    : records_(std::move(other.records_)),
      slot_(std::move(other.slot_)),
      order_(std::move(other.order_)),
      order_seed_(other.order_seed_),
      plan_(std::move(other.plan_)) {
  other.records_ = empty_records();
  other.slot_.clear();
  other.order_.clear();
  other.order_seed_.reset();
}

Dataset& Dataset::operator=(Dataset&& other) noexcept {
  if (this != &other) {
    records_ = std::move(other.records_);
    slot_ = std::move(other.slot_);
    order_ = std::move(other.order_);
    order_seed_ = other.order_seed_;
    plan_ = std::move(other.plan_);
    other.records_ = empty_records();
    other.slot_.clear();
    other.order_.clear();
    other.order_seed_.reset();
  }
  return *this;
}

Dataset::Dataset(RowMatrix features, Vec labels) : records_(std::make_shared<Records>()) {
  records_->dense = std::move(features);
  records_->labels = std::move(labels);
  check_labels("Dataset", static_cast<Index>(records_->dense.rows()), records_->labels);
}

Dataset::Dataset(SparseRowMatrix features, Vec labels) : records_(std::make_shared<Records>()) {
  records_->sparse = std::move(features);
  records_->labels = std::move(labels);
  records_->is_sparse = true;
  // Row access walks the CSR arrays directly only when they are compressed.
  records_->sparse.makeCompressed();
  check_labels("Dataset", static_cast<Index>(records_->sparse.rows()), records_->labels);
}

Index Dataset::rows() const {
  return static_cast<Index>(records_->is_sparse ? records_->sparse.rows() : records_->dense.rows());
}

Index Dataset::cols() const {
  return static_cast<Index>(records_->is_sparse ? records_->sparse.cols() : records_->dense.cols());
}

namespace {

// Row accessors sit on every per-example gradient; the checks are two compares
// and turn a silent out-of-bounds read into a clear error.
void check_row(const char* fn, Index i, Index rows) {
  if (i >= rows)
    throw Error(std::string("Dataset::") + fn + ": row " + std::to_string(i) +
                " out of range (rows = " + std::to_string(rows) + ")");
}

void check_width(const char* fn, Eigen::Index got, Index cols) {
  if (static_cast<Index>(got) != cols)
    throw Error(std::string("Dataset::") + fn + ": vector has " + std::to_string(got) + " entries, expected " +
                std::to_string(cols) + " (the number of features)");
}

}  // namespace

double Dataset::row_dot(Index i, const Eigen::Ref<const Vec>& w) const {
  check_row("row_dot", i, rows());
  check_width("row_dot", w.size(), cols());
  const auto r = static_cast<Eigen::Index>(slot(i));
  if (!records_->is_sparse) return records_->dense.row(r).dot(w.transpose());
  double sum = 0.0;
  for (SparseRowMatrix::InnerIterator it(records_->sparse, r); it; ++it) sum += it.value() * w[it.index()];
  return sum;
}

void Dataset::row_axpy(Index i, double scale, Eigen::Ref<Vec> out) const {
  check_row("row_axpy", i, rows());
  check_width("row_axpy", out.size(), cols());
  const auto r = static_cast<Eigen::Index>(slot(i));
  if (!records_->is_sparse) {
    out.noalias() += scale * records_->dense.row(r).transpose();
    return;
  }
  for (SparseRowMatrix::InnerIterator it(records_->sparse, r); it; ++it) out[it.index()] += scale * it.value();
}

void Dataset::row_dense(Index i, Eigen::Ref<Vec> out) const {
  check_row("row_dense", i, rows());
  check_width("row_dense", out.size(), cols());
  const auto r = static_cast<Eigen::Index>(slot(i));
  if (!records_->is_sparse) {
    out = records_->dense.row(r).transpose();
    return;
  }
  out.setZero();
  for (SparseRowMatrix::InnerIterator it(records_->sparse, r); it; ++it) out[it.index()] = it.value();
}

double Dataset::row_squared_norm(Index i) const {
  check_row("row_squared_norm", i, rows());
  const auto r = static_cast<Eigen::Index>(slot(i));
  if (!records_->is_sparse) return records_->dense.row(r).squaredNorm();
  double sum = 0.0;
  for (SparseRowMatrix::InnerIterator it(records_->sparse, r); it; ++it) sum += it.value() * it.value();
  return sum;
}

void check_finite(const Dataset& data, const std::string& who) {
  const auto fail = [&](Index stored_row, const std::string& what, double v) {
    const std::string value = std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    throw Error(who + ": record " + std::to_string(detail::DatasetLayout::record_at(data, stored_row)) +
                " (0-based), " + what + " is " + value + "; NaN and Inf are not allowed");
  };
  const Vec& labels = data.labels();
  if (!all_finite(labels)) {
    for (Eigen::Index k = 0; k < labels.size(); ++k) {
      if (!std::isfinite(labels[k])) fail(static_cast<Index>(k), "its label", labels[k]);
    }
  }
  if (!data.is_sparse()) {
    const RowMatrix& m = data.dense();
    if (all_finite(m)) return;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        if (!std::isfinite(m(r, j))) fail(static_cast<Index>(r), "feature " + std::to_string(j), m(r, j));
      }
    }
    return;
  }
  const SparseRowMatrix& m = data.sparse();
  const double* values = m.valuePtr();
  const std::int64_t nonzeros = m.outerIndexPtr()[m.outerSize()];
  for (std::int64_t k = 0; k < nonzeros; ++k) {
    if (std::isfinite(values[k])) continue;
    const std::int64_t* outer = m.outerIndexPtr();
    const auto row = static_cast<Index>(std::upper_bound(outer, outer + m.outerSize() + 1, k) - outer - 1);
    fail(row, "feature " + std::to_string(m.innerIndexPtr()[k]), values[k]);
  }
}

void Dataset::set_weights(const Vec& w) {
  const Index n = rows();
  if (w.size() == 0) {
    if (!has_weights()) return;
  } else if (static_cast<Index>(w.size()) != n) {
    throw Error("sample_weight: got " + std::to_string(w.size()) + " weights for " + std::to_string(n) +
                " records, expected one per record");
  }
  bool ones = true;
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    if (!(w[i] >= 0.0 && w[i] <= 1.0)) {  // NaN fails too
      std::ostringstream value;
      value << w[i];
      throw Error("sample_weight: the weight of record " + std::to_string(i) + " (0-based) is " + value.str() +
                  ", expected a number in [0, 1]");
    }
    ones = ones && w[i] == 1.0;
  }
  if (ones && !has_weights()) return;
  // Copies of this dataset keep their weights.
  if (records_.use_count() > 1 || records_ == empty_records()) records_ = std::make_shared<Records>(*records_);
  if (ones) {
    records_->weights = Vec();
    return;
  }
  records_->weights.resize(w.size());
  for (Index i = 0; i < n; ++i) records_->weights[static_cast<Eigen::Index>(slot(i))] = w[static_cast<Eigen::Index>(i)];
}

Vec Dataset::weights_of(const IndexList& idx) const {
  if (!has_weights()) return Vec();
  Vec w(static_cast<Eigen::Index>(idx.size()));
  for (std::size_t k = 0; k < idx.size(); ++k) w[static_cast<Eigen::Index>(k)] = weight(idx[k]);
  return w;
}

Vec Dataset::record_weights() const {
  if (!has_weights()) return Vec();
  Vec w(static_cast<Eigen::Index>(rows()));
  for (Index i = 0; i < rows(); ++i) w[static_cast<Eigen::Index>(i)] = weight(i);
  return w;
}

Dataset Dataset::subset(const IndexList& idx) const {
  const Index n = rows();
  for (Index i : idx) check_row("subset", i, n);
  const auto m = static_cast<Eigen::Index>(idx.size());
  Vec labels;
  if (has_labels()) {
    labels.resize(m);
    for (Eigen::Index k = 0; k < m; ++k) labels[k] = records_->labels[static_cast<Eigen::Index>(slot(idx[k]))];
  }
  if (!records_->is_sparse) {
    RowMatrix features(m, records_->dense.cols());
    for (Eigen::Index k = 0; k < m; ++k) features.row(k) = records_->dense.row(static_cast<Eigen::Index>(slot(idx[k])));
    Dataset out(std::move(features), std::move(labels));
    out.records_->weights = weights_of(idx);
    return out;
  }
  // Copy the CSR rows directly: cheaper than triplets and keeps index order.
  std::vector<std::int64_t> outer{0};
  std::vector<std::int64_t> inner;
  std::vector<double> values;
  for (Index i : idx) {
    for (SparseRowMatrix::InnerIterator it(records_->sparse, static_cast<Eigen::Index>(slot(i))); it; ++it) {
      inner.push_back(it.index());
      values.push_back(it.value());
    }
    outer.push_back(static_cast<std::int64_t>(inner.size()));
  }
  SparseRowMatrix features = Eigen::Map<const SparseRowMatrix>(
      m, records_->sparse.cols(), static_cast<std::int64_t>(values.size()), outer.data(), inner.data(), values.data());
  Dataset out(std::move(features), std::move(labels));
  out.records_->weights = weights_of(idx);
  return out;
}

}  // namespace dpsosp
