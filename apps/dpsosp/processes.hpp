// The processes a command runs in: one, or the ranks of an MPI job (`mpirun
// -n P dpsosp run ...`, in builds with DPSOSP_MPI; docs/scaling.md). Only
// `run` is data-parallel: every rank loads or streams the same records and
// computes its share of each batch; rank 0 draws the seed and the noise key,
// prints progress and writes the report.
//
// Failures end every rank with one line "dpsosp: error: ..." (from rank 0,
// or "process R of P: ..." from the rank that failed), never a hang: a failure
// every rank meets alike (the command line, the checks the library agrees on)
// is printed by rank 0; one met by some ranks only, before the run, is agreed
// on (agree); one during the run aborts the job (MPI_Abort; mpirun adds its
// own notice, as it does when it sees a rank die).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dpsosp/process_group.hpp"

namespace dpsosp::cli {

/// Thrown where a rank must end without a message of its own (another rank
/// printed it): main returns the status.
struct QuietExit {
  int status = 1;
};

class Processes {
 public:
  /// Joins the MPI job when mpirun started this process (DPSOSP_MPI builds);
  /// otherwise one process. Throws nothing: a build without MPI started by
  /// mpirun with several ranks is refused by check_command.
  Processes(int& argc, char**& argv);
  ~Processes();  // MPI_Finalize
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  static int rank();
  static int size();
  static bool reports() { return rank() == 0; }
  /// The group of an MPI job of several ranks; null for one process.
  static std::shared_ptr<ProcessGroup> group();
  /// Throws Error when `command` cannot run in this job (only run is
  /// data-parallel; a build without MPI cannot join one).
  static void check_command(const std::string& command);
  /// Rank 0's seed on every rank.
  static void share_seed(std::uint64_t& seed);
  /// Runs f on every rank; if it throws on some, the first of them prints its
  /// message and every rank throws QuietExit{1}.
  static void agree(const std::function<void()>& f);
  /// Prints "dpsosp: error: MESSAGE" (one line) as the job's outcome and
  /// returns the status to exit with. One process: at once. In a job: a
  /// failure every rank shares (collective) is printed by rank 0 alone; any
  /// other is printed (rank 0 at once, other ranks after a moment, so that
  /// rank 0's line comes first when all fail alike) and aborts the job.
  int fail(const std::string& message, int status, bool collective = false);
};

}  // namespace dpsosp::cli
