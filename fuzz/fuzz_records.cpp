// libFuzzer harness: record files (dpsosp::load_record_file, and
// RecordFile::scan, which reads through the read-ahead blocks). The input is
// the file.
#include "dpsosp/error.hpp"
#include "dpsosp/record_file.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::ScratchFile file("records.dpsr");
  const std::string& path = file.write(data, size);
  try {
    const dpsosp::Dataset d = dpsosp::load_record_file(path);
    fuzz::check_dataset(d);
    dpsosp::Index seen = 0;
    dpsosp::RecordFile(path).scan([&](const dpsosp::Dataset& block, dpsosp::Index first) {
      if (first != seen) __builtin_trap();
      fuzz::check_dataset(block);
      seen += block.rows();
    });
    if (seen != d.rows()) __builtin_trap();
  } catch (const dpsosp::Error&) {
  }
  return 0;
}
