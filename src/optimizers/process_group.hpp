// Internal: what a run shared by a process group (dpsosp/process_group.hpp)
// does besides its own work: the checks the processes agree on before any
// noise is drawn, and each batch's chained sum.
//
// The checks: every process checks its options, records and start point;
// rank 0 gathers the verdicts and the fingerprints (records, start point,
// options) and broadcasts one outcome, so either every process runs or every
// process fails with the same one-line message (the first failing process's,
// or which process holds other records).
//
// The sum:
// The single-process sum is one chain of additions, row after row in batch
// order (src/engine/clipped_sum.hpp); threads keep it by adding their
// stretches in turn. Processes keep it the same way: process r computes and
// clips the rows of its share (batch_share: whole Model::share_unit() units,
// in rank order) while it waits, then receives the sum of the shares before
// it from the previous process with a share, adds its rows in order and
// sends the sum on (d + 3 doubles: the sum, the clipped counts, the stop
// flag). The last one broadcasts the batch's sum to every process. So the sum
// is the same chain of additions as one process makes, for any number of
// processes and threads: bit-identical (docs/scaling.md).
#pragma once
#include <array>
#include <cstdint>
#include <functional>

#include "data/dataset_layout.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/optimizer.hpp"
#include "dpsosp/process_group.hpp"

namespace dpsosp::detail {

/// Runs checks() (which returns the fingerprint of this process's records)
/// and, with a group, agrees on the outcome: throws Error on every process
/// when one failed or holds other records, options or start point than
/// process 0. Without a group, checks() alone.
void agreed_checks(ProcessGroup* group, const RunOptions& options, const Vec& x0,
                   const std::function<std::uint64_t()>& checks);
/// Rank 0's seed and noise key (and where it came from) on every process.
void share_keys(ProcessGroup& group, std::uint64_t& seed, std::array<std::uint8_t, 16>& key, bool& supplied);

/// The whole batch's clipped sum on every process of plan.group. share_sum
/// computes this process's share from the start it is given (called only
/// when the share is not empty). Sets *plan.agreed_stop when a process's
/// local stop flag was set.
ClippedSum chain_batch(const BatchPlan& plan, Index b, Index d,
                       const std::function<ClippedSum(const SumStart&)>& share_sum);

}  // namespace dpsosp::detail
