// dpsosp: Dataset row access and the single-pass SamplePool.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/noise.hpp"
#include "data/sample_order.hpp"

namespace dpsosp {
namespace {

void check_labels(const char* fn, Index rows, const Vec& labels) {
  const Index n = static_cast<Index>(labels.size());
  if (n != 0 && n != rows)
    throw Error(std::string(fn) + ": got " + std::to_string(n) + " labels for " + std::to_string(rows) +
                " rows (expected 0 or " + std::to_string(rows) + ")");
}

}  // namespace

namespace {

// Asks the kernel to back [p, p + bytes) with transparent huge pages when it
// is first touched (Linux). A hint: on failure (no THP) the pages stay 4 KiB,
// which changes only the speed.
void advise_huge_pages(const void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  // madvise wants a page-aligned start; the kernel uses huge pages for the
  // 2 MiB-aligned stretches inside the range.
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  if (page == 0) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + page - 1) / page * page;
  const std::uintptr_t end = begin + bytes;
  if (end > first) madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace

RowMatrix allocate_records(Index rows, Index cols) {
  RowMatrix out(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));  // not yet touched
  advise_huge_pages(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
  return out;
}

Vec allocate_labels(Index n) {
  Vec out(static_cast<Eigen::Index>(n));  // not yet touched
  advise_huge_pages(out.data(), static_cast<std::size_t>(out.size()) * sizeof(double));
  return out;
}

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
      order_seed_(other.order_seed_) {
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
    other.records_ = empty_records();
    other.slot_.clear();
    other.order_.clear();
    other.order_seed_.reset();
  }
  return *this;
}

Dataset Dataset::stored_rows() const {
  Dataset view;
  view.records_ = records_;
  return view;
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
    throw Error(std::string("Dataset::") + fn + ": row " + std::to_string(i) + " out of range (rows = " +
                std::to_string(rows) + ")");
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
    throw Error(who + ": record " + std::to_string(data.record_at(stored_row)) + " (0-based), " + what + " is " +
                value + "; NaN and Inf are not allowed");
  };
  const Vec& labels = data.labels();
  if (!labels.allFinite()) {
    for (Eigen::Index k = 0; k < labels.size(); ++k) {
      if (!std::isfinite(labels[k])) fail(static_cast<Index>(k), "its label", labels[k]);
    }
  }
  if (!data.is_sparse()) {
    const RowMatrix& m = data.dense();
    if (m.allFinite()) return;
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
    return Dataset(std::move(features), std::move(labels));
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
  return Dataset(std::move(features), std::move(labels));
}

namespace {

// Rearranges the stored rows in place so that row k holds what row from[k]
// held (from: a permutation), following its cycles with one row of scratch.
// The rows a cycle reaches next are prefetched: they sit anywhere in memory.
void gather_rows_in_place(RowMatrix& m, Vec& labels, const std::vector<std::uint32_t>& from) {
  const auto n = static_cast<std::size_t>(from.size());
  const Eigen::Index d = m.cols();
  const bool labeled = labels.size() > 0;
  constexpr int kAhead = 16;
  std::vector<bool> done(n, false);
  Vec row(d);
  for (std::size_t start = 0; start < n; ++start) {
    if (done[start]) continue;
    done[start] = true;
    if (from[start] == start) continue;
    row = m.row(static_cast<Eigen::Index>(start)).transpose();
    const double label = labeled ? labels[static_cast<Eigen::Index>(start)] : 0.0;
    std::size_t ahead = start;  // kAhead rows along the cycle
    for (int a = 0; a < kAhead && from[ahead] != start; ++a) ahead = from[ahead];
    std::size_t j = start;
    for (;;) {
      const std::size_t f = from[j];
      if (f == start) break;
      if (from[ahead] != start) {
        ahead = from[ahead];
        const double* p = m.data() + static_cast<Eigen::Index>(ahead) * d;
        for (Eigen::Index c = 0; c < d; c += 8) __builtin_prefetch(p + c);
        if (labeled) __builtin_prefetch(labels.data() + ahead);
      }
      m.row(static_cast<Eigen::Index>(j)) = m.row(static_cast<Eigen::Index>(f));
      if (labeled) labels[static_cast<Eigen::Index>(j)] = labels[static_cast<Eigen::Index>(f)];
      done[f] = true;
      j = f;
    }
    m.row(static_cast<Eigen::Index>(j)) = row.transpose();
    if (labeled) labels[static_cast<Eigen::Index>(j)] = label;
  }
}

}  // namespace

void Dataset::store_in_sample_order(std::uint64_t seed) {
  if (order_seed_ && *order_seed_ == seed) return;
  const Index n = rows();
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw Error("Dataset::store_in_sample_order: " + std::to_string(n) +
                " records; at most 2^32 - 1 can be stored in a sample order");
  std::vector<std::uint32_t> order;
  detail::shuffle_order(order, n, seed);
  if (records_->is_sparse) {
    // New CSR arrays with the records in the new order (copies of this
    // dataset keep the old ones).
    records_ = subset(IndexList(order.begin(), order.end())).records_;
  } else {
    // Stored row k is to hold record order[k], which now sits at slot(order[k]).
    std::vector<std::uint32_t> from(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) from[k] = static_cast<std::uint32_t>(slot(order[k]));
    // Copies of this dataset keep the records where they are.
    if (records_.use_count() > 1) records_ = std::make_shared<Records>(*records_);
    gather_rows_in_place(records_->dense, records_->labels, from);
  }
  detail::DatasetLayout::adopt_sample_order(*this, std::move(order), seed);
}

namespace detail {

void DatasetLayout::adopt_sample_order(Dataset& data, std::vector<std::uint32_t> order, std::uint64_t seed) {
  if (static_cast<Index>(order.size()) != data.rows())
    throw Error("Dataset: a sample order of " + std::to_string(order.size()) + " records for " +
                std::to_string(data.rows()) + " records");
  data.slot_.assign(order.size(), 0);
  for (std::size_t k = 0; k < order.size(); ++k) data.slot_[order[k]] = static_cast<std::uint32_t>(k);
  data.order_ = std::move(order);
  data.order_seed_ = seed;
}

}  // namespace detail

Dataset copy_in_sample_order(const Eigen::Ref<const RowMatrix>& features, const Eigen::Ref<const Vec>& labels,
                             std::uint64_t seed) {
  const auto n = static_cast<Index>(features.rows());
  const bool labeled = labels.size() > 0;
  if (labeled && static_cast<Index>(labels.size()) != n)
    throw Error("copy_in_sample_order: got " + std::to_string(labels.size()) + " labels for " + std::to_string(n) +
                " records");
  if (n > std::numeric_limits<std::uint32_t>::max())
    throw Error("copy_in_sample_order: " + std::to_string(n) +
                " records; at most 2^32 - 1 can be stored in a sample order");
  std::vector<std::uint32_t> order;
  detail::shuffle_order(order, n, seed);
  const Eigen::Index d = features.cols();
  RowMatrix rows = allocate_records(n, static_cast<Index>(d));
  Vec y = labeled ? allocate_labels(n) : Vec();
  // Row k from record order[k]: reads in a random order, so the records a
  // few rows on are asked for ahead.
  constexpr std::int64_t kAhead = 16;
  const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t k = 0; k < count; ++k) {
    if (k + kAhead < count) {
      const auto ahead = static_cast<Eigen::Index>(order[static_cast<std::size_t>(k + kAhead)]);
      const double* p = features.data() + ahead * features.outerStride();
      for (Eigen::Index c = 0; c < d; c += 8) __builtin_prefetch(p + c);
    }
    const auto i = static_cast<Eigen::Index>(order[static_cast<std::size_t>(k)]);
    rows.row(static_cast<Eigen::Index>(k)) = features.row(i);
    if (labeled) y[static_cast<Eigen::Index>(k)] = labels[i];
  }
  Dataset data(std::move(rows), std::move(y));
  detail::DatasetLayout::adopt_sample_order(data, std::move(order), seed);
  return data;
}

SamplePool::SamplePool(Index n, std::uint64_t seed) : size_(n) { shuffle(seed); }

SamplePool::SamplePool(const Dataset& data, std::uint64_t seed) : size_(data.rows()) {
  if (data.sample_order_seed() == seed && size_ > 0) {
    shared_ = data.order_.data();
  } else {
    shuffle(seed);
  }
}

void SamplePool::shuffle(std::uint64_t seed) {
  // 32-bit entries while they suffice: half the memory to fault in and half
  // the cache lines for the shuffle's random swaps.
  if (size_ <= std::numeric_limits<std::uint32_t>::max()) {
    detail::shuffle_order(order32_, size_, seed);
  } else {
    detail::shuffle_order(order64_, size_, seed);
  }
}

Index SamplePool::advance(Index k) {
  if (k > remaining())
    throw Error("SamplePool::draw: asked for " + std::to_string(k) + " records but only " +
                std::to_string(remaining()) + " of " + std::to_string(size()) + " remain unused");
  const Index first = next_;
  next_ += k;
  return first;
}

IndexList SamplePool::draw(Index k) {
  const Index first = advance(k);
  IndexList out(k);
  if (shared_ != nullptr) {
    std::copy(shared_ + first, shared_ + first + k, out.begin());
  } else if (order64_.empty()) {
    std::copy(order32_.begin() + static_cast<std::ptrdiff_t>(first),
              order32_.begin() + static_cast<std::ptrdiff_t>(first + k), out.begin());
  } else {
    std::copy(order64_.begin() + static_cast<std::ptrdiff_t>(first),
              order64_.begin() + static_cast<std::ptrdiff_t>(first + k), out.begin());
  }
  return out;
}

}  // namespace dpsosp
