// libFuzzer harness: dpsosp::load_libsvm. The first byte gives
// LoadOptions::libsvm_features (0 = from the data); the rest is the file.
#include <cmath>

#include "dpsosp/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static fuzz::ScratchFile file("data.svm");
  dpsosp::LoadOptions options;
  options.libsvm_features = data[0] % 16;
  const std::string& path = file.write(data + 1, size - 1);
  try {
    const dpsosp::Dataset d = dpsosp::load_libsvm(path, options);
    fuzz::check_dataset(d);
    if (!d.is_sparse() || !d.has_labels()) __builtin_trap();
    if (options.libsvm_features != 0 && d.cols() != options.libsvm_features) __builtin_trap();
  } catch (const dpsosp::Error&) {
  }
  return 0;
}
