// Internal: where a dataset's records are stored, for the library (not
// installed). A run that reads records in their sample order
// (Dataset::store_in_sample_order, make_synthetic, copy_in_sample_order) finds
// here which stored row holds which record; users never need it: a record
// keeps its index everywhere in the public API.
//
// Dataset's slot, record_at, sample_order_seed and stored_rows, and
// SamplePool's reads_order_of and advance, are private, with this struct
// their one reader (a friend of both).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {
class ProcessGroup;  // process_group.hpp: the optimizers' part, which holds it here
}  // namespace dpsosp

namespace dpsosp::detail {

class RecordStream;  // data/record_stream.hpp

/// How the batches of a run come, for the records minimize hands an
/// algorithm (DatasetLayout::planned): the algorithms see a Dataset and build
/// their SamplePool and GradientOracles over it as always; these read the plan.
struct BatchPlan {
  /// SamplePool(view, seed) hands out records 0, 1, 2, ... (SampleOrder::kFile).
  bool file_order = false;
  /// The records are read from here once, front to back (file order); the
  /// view holds none of them: n records of no features.
  std::shared_ptr<RecordStream> stream;
  /// A single-process streamed run checks its records as it reads them
  /// instead of in a validation pass before (minimize_streamed.cpp): the
  /// oracles call this with every batch they read from the stream, records
  /// first .. first + rows.size() - 1 of the file, before computing on it.
  std::function<void(const Dataset& data, const IndexList& rows, Index first)> check_rows;
  /// This process computes its share of each batch (process_group.hpp).
  std::shared_ptr<ProcessGroup> group;
  /// A group's run stops at the same step on every process: the oracles
  /// carry each process's stop flag (local_stop) along the chain of every
  /// batch and set agreed_stop, which the algorithm polls, from all of them.
  const std::atomic<bool>* local_stop = nullptr;
  std::atomic<bool>* agreed_stop = nullptr;
};

struct DatasetLayout {
  /// Where record i is stored: i itself unless the records were moved into a
  /// sample order.
  static Index slot(const Dataset& data, Index i) { return data.slot(i); }
  /// The record stored at row k: the inverse of slot.
  static Index record_at(const Dataset& data, Index k) { return data.record_at(k); }
  /// The seed whose sample order the records are stored in, if any.
  static std::optional<std::uint64_t> sample_order_seed(const Dataset& data) { return data.sample_order_seed(); }
  /// The stored rows as a dataset of their own, sharing data's memory: its
  /// record k is data's record_at(k). A single-pass run over records stored
  /// in its order reads its batches from here, by stored row, without looking
  /// each record's slot up (the same values in the same order).
  static Dataset stored_rows(const Dataset& data) { return data.stored_rows(); }

  /// Whether pool reads its order from data (the records are stored in it):
  /// then its k-th record is data's stored row k.
  static bool reads_order_of(const SamplePool& pool, const Dataset& data) { return pool.reads_order_of(data); }
  /// Uses the next k records of pool without listing them: they are the ones
  /// at positions [first, first + k) of its order; returns first. Throws as
  /// SamplePool::draw.
  static Index advance(SamplePool& pool, Index k) { return pool.advance(k); }

  /// The plan of a run's records, or null (records in memory, the seed's order).
  static const BatchPlan* plan(const Dataset& data) { return data.plan_.get(); }
  /// A view of data (sharing its records) with a plan.
  static Dataset planned(const Dataset& data, std::shared_ptr<const BatchPlan> plan) {
    Dataset view = data;
    view.plan_ = std::move(plan);
    return view;
  }
  /// The stand-in for records that are streamed: n records of no features,
  /// no memory, with the plan that says where the records come from.
  static Dataset stand_in(Index n, std::shared_ptr<const BatchPlan> plan) {
    Dataset view(RowMatrix(static_cast<Eigen::Index>(n), 0), Vec());
    view.plan_ = std::move(plan);
    return view;
  }

  /// For code that writes a dataset's records straight into a sample order
  /// (make_synthetic, copy_in_sample_order): stored row k of `data` already
  /// holds record order[k], where order is shuffle_order's order for
  /// (data.rows(), seed). Records the layout without moving anything.
  static void adopt_sample_order(Dataset& data, std::vector<std::uint32_t> order, std::uint64_t seed);
};

}  // namespace dpsosp::detail
