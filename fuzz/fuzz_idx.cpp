// libFuzzer harness: dpsosp::load_idx. The first byte picks the mode: even,
// the rest is an images file alone; odd, the rest is split into an images file
// and a labels file at the fraction given by the second byte.
#include <cmath>

#include "dpsosp/error.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  static fuzz::ScratchFile images("images-idx3-ubyte");
  static fuzz::ScratchFile labels("labels-idx1-ubyte");
  const bool with_labels = (data[0] & 1) != 0;
  const std::uint8_t* body = data + 2;
  const std::size_t body_size = size - 2;
  const std::size_t split = with_labels ? body_size * data[1] / 256 : body_size;
  try {
    const std::string& images_path = images.write(body, split);
    std::string labels_path;
    if (with_labels) labels_path = labels.write(body + split, body_size - split);
    const dpsosp::Dataset d = dpsosp::load_idx(images_path, labels_path);
    fuzz::check_dataset(d);
    if (d.is_sparse() || with_labels != d.has_labels()) __builtin_trap();
  } catch (const dpsosp::Error&) {
  }
  return 0;
}
