// dpsosp: the memory a dataset's records and labels are allocated in:
// allocate_records / allocate_labels ask for transparent huge pages (speed
// only; docs/data-formats.md).
#include "dpsosp/data_layout.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace dpsosp {

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
}  // namespace dpsosp
