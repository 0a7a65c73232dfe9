// Shared by the libFuzzer harnesses: the loaders read files, so each input is
// written to a scratch file of this process (rewritten on every call, removed
// at exit). Anything but dpsosp::Error escaping a loader is a finding, as is a
// loaded dataset that breaks the loaders' promises (finite values, consistent
// shapes): those call __builtin_trap().
#pragma once
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dpsosp/data.hpp"

namespace fuzz {

class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/dpsosp-fuzz-" + std::to_string(::getpid()) +
            "-" + suffix;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) __builtin_trap();
    if (size > 0 && std::fwrite(data, 1, size, f) != size) __builtin_trap();
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

// What every loaded dataset must satisfy.
inline void check_dataset(const dpsosp::Dataset& d) {
  const dpsosp::Index rows = d.rows(), cols = d.cols();
  if (rows == 0) __builtin_trap();  // loaders refuse empty files
  if (d.has_labels() && static_cast<dpsosp::Index>(d.labels().size()) != rows) __builtin_trap();
  if (d.has_labels() && !d.labels().allFinite()) __builtin_trap();
  if (d.is_sparse()) {
    const auto& m = d.sparse();
    if (!m.isCompressed()) __builtin_trap();
    for (std::int64_t k = 0; k < m.nonZeros(); ++k) {
      if (m.innerIndexPtr()[k] < 0 || static_cast<dpsosp::Index>(m.innerIndexPtr()[k]) >= cols) __builtin_trap();
      if (!std::isfinite(m.valuePtr()[k])) __builtin_trap();
    }
  } else {
    if (!d.dense().allFinite()) __builtin_trap();
  }
  // Row access works on every row (finite values may still square to inf).
  double sum = 0;
  for (dpsosp::Index i = 0; i < rows; ++i) sum += d.row_squared_norm(i);
  if (std::isnan(sum)) __builtin_trap();
}

}  // namespace fuzz
