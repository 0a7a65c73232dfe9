// libFuzzer harness: dpsosp::load_csv. The first byte sets the options
// (bit 0: header, bit 1: unlabeled); the rest is the file.
#include <cmath>

#include "dpsosp/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static fuzz::ScratchFile file("data.csv");
  dpsosp::LoadOptions options;
  options.header = (data[0] & 1) != 0;
  options.labeled = (data[0] & 2) == 0;
  const std::string& path = file.write(data + 1, size - 1);
  try {
    const dpsosp::Dataset d = dpsosp::load_csv(path, options);
    fuzz::check_dataset(d);
    if (d.is_sparse() || options.labeled != d.has_labels()) __builtin_trap();
  } catch (const dpsosp::Error&) {
    // A clear refusal is the expected outcome for most inputs.
  }
  return 0;
}
