// dpsosp: the sample order, the random order in which a single-pass run
// uses each record once: the SamplePool that hands it out, and the records
// stored in it (Dataset::store_in_sample_order, copy_in_sample_order,
// Dataset::stored_rows), which changes where records sit, never a result.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "data/sample_order.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {

Dataset Dataset::stored_rows() const {
  Dataset view;
  view.records_ = records_;
  return view;
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
    if (has_weights()) {
      const Vec before = records_->weights;
      for (std::size_t k = 0; k < from.size(); ++k)
        records_->weights[static_cast<Eigen::Index>(k)] = before[static_cast<Eigen::Index>(from[k])];
    }
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
  const detail::BatchPlan* plan = detail::DatasetLayout::plan(data);
  if (plan != nullptr && plan->file_order) {
    identity_ = true;
  } else if (data.sample_order_seed() == seed && size_ > 0) {
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
  if (identity_) {
    std::iota(out.begin(), out.end(), first);
  } else if (shared_ != nullptr) {
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
