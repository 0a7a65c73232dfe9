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
#include <cstdint>
#include <optional>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp::detail {

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

  /// For code that writes a dataset's records straight into a sample order
  /// (make_synthetic, copy_in_sample_order): stored row k of `data` already
  /// holds record order[k], where order is shuffle_order's order for
  /// (data.rows(), seed). Records the layout without moving anything.
  static void adopt_sample_order(Dataset& data, std::vector<std::uint32_t> order, std::uint64_t seed);
};

}  // namespace dpsosp::detail
