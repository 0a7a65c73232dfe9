// dpsosp: data-parallel runs. The processes of a group share every batch:
// each computes the clipped vectors of its share, and the shares' sums are
// chained in batch order, so a run gives the bits of a single-process run for
// any number of processes and threads (docs/scaling.md).
#pragma once
#include <cstddef>

#include "dpsosp/types.hpp"

namespace dpsosp {

/// The messages a data-parallel run needs: bytes from one process to another,
/// and from one to all. The CLI's MPI build (DPSOSP_MPI) gives one over
/// MPI_COMM_WORLD; the library itself needs no MPI (tests use threads). Every
/// process of a run calls minimize with its own ProcessGroup, the same options
/// and the same records; minimize checks the records and the start point
/// agree, and rank 0's seed and noise key are used by all (the key travels
/// over this transport once, as the clipped partial sums do every step: it
/// must be as trusted as the machines that hold the data).
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  /// This process, 0 .. size() - 1.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Blocking point-to-point messages, delivered in order between two processes.
  virtual void send(int to, const void* bytes, std::size_t count) = 0;
  virtual void receive(int from, void* bytes, std::size_t count) = 0;
  /// Every process calls it with the same root and count; afterwards every
  /// process holds root's bytes.
  virtual void broadcast(int root, void* bytes, std::size_t count) = 0;
};

/// The batch rows [first, end) that process `rank` of `size` computes of a
/// batch of b rows: whole units of Model::share_unit() rows, as even as they
/// go, in rank order (some processes get none when b is small).
struct BatchShare {
  Index first = 0, end = 0;
  Index size() const { return end - first; }
};
BatchShare batch_share(Index b, int rank, int size);

}  // namespace dpsosp
