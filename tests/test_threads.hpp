// Tests: runs with the engine's sharing mode forced.
#pragma once
#include <omp.h>

#include "engine/work_sharing.hpp"

namespace dpsosp::testing {

/// For its lifetime: `threads` OpenMP threads and the engine's sharing mode
/// forced (1 serial, 2 shared); restores the adaptive choice after.
class ForcedThreads {
 public:
  ForcedThreads(int threads, int mode) : previous_(omp_get_max_threads()) {
    omp_set_num_threads(threads);
    detail::ThreadChoice::force(mode);
  }
  ~ForcedThreads() {
    detail::ThreadChoice::force(0);
    omp_set_num_threads(previous_);
  }
  ForcedThreads(const ForcedThreads&) = delete;
  ForcedThreads& operator=(const ForcedThreads&) = delete;

 private:
  int previous_;
};

}  // namespace dpsosp::testing
