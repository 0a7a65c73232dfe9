// dpsosp: where a dataset's records sit in memory. Only speed depends on
// anything here, never a result: memory backed by transparent huge pages for
// records and labels, and records copied straight into the order a
// single-pass run reads them in (Dataset::store_in_sample_order moves the
// records of an existing dataset there; docs/data-formats.md).
#pragma once
#include <cstdint>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// An uninitialised rows x cols matrix for a dataset's records, whose memory
/// the kernel is asked (Linux: madvise(MADV_HUGEPAGE)) to back with transparent
/// huge pages before anything is written to it. The optimizers read records in
/// a random order, one TLB miss each with 4 KiB pages; with 2 MiB pages a large
/// dataset's random reads run about 1.5 times as fast (docs/performance.md).
/// Only speed depends on it: where the kernel has no huge pages to give (THP
/// set to "never", or memory fragmented) the matrix is an ordinary one. The
/// loaders and make_synthetic allocate with it; fill it, then move it into a
/// Dataset, to get the same for your own records.
RowMatrix allocate_records(Index rows, Index cols);

/// An uninitialised n-vector for a dataset's labels, advised like
/// allocate_records: the optimizers read a record's label with its features,
/// in the same random order, and 10^6 labels in 4 KiB pages are 2000 pages
/// (a TLB miss a read). Only speed depends on it. The loaders and
/// make_synthetic allocate labels with it.
Vec allocate_labels(Index n);

/// Copies records given as arrays (row-major features, and labels, empty for
/// unlabeled records) into a dataset stored in seed's sample order: what
/// Dataset(features, labels) followed by store_in_sample_order(seed) gives,
/// reading each record once (on all threads) instead of moving it afterwards.
/// For callers that copy the records anyway, such as the Python module. Throws
/// Error when the labels' count differs from the records' or there are more
/// than 2^32 - 1 records.
Dataset copy_in_sample_order(const Eigen::Ref<const RowMatrix>& features, const Eigen::Ref<const Vec>& labels,
                             std::uint64_t seed);

}  // namespace dpsosp
