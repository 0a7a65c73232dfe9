// dpsosp: the IDX loader (the MNIST format, docs/data-formats.md): a
// big-endian header, then the elements; read through file_input.hpp (plain
// or gzip). Errors name the byte offset.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "data/file_input.hpp"
#include "data/formats.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {

using detail::fail;
using detail::GzInput;
using detail::offset_at;

namespace {

struct IdxArray {
  int type = 0;
  std::vector<std::uint64_t> dims;
  std::size_t element_size = 0;
};

std::size_t idx_element_size(int type) {
  switch (type) {
    case 0x08:
    case 0x09: return 1;  // unsigned / signed byte
    case 0x0B: return 2;  // int16
    case 0x0C:
    case 0x0D: return 4;  // int32 / float32
    case 0x0E: return 8;  // float64
    default: return 0;
  }
}

std::uint64_t big_endian(const unsigned char* p, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v = (v << 8) | p[i];
  return v;
}

std::string hex(std::uint64_t value, int digits) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%0*llx", digits, static_cast<unsigned long long>(value));
  return text;
}

IdxArray read_idx_header(GzInput& in, const char* fn, const std::string& path) {
  unsigned char magic[4];
  if (in.read(magic, 4) != 4) fail(fn, path, offset_at(in.offset()), "file too short for the 4-byte IDX magic");
  if (magic[0] != 0 || magic[1] != 0)
    fail(fn, path, offset_at(0),
         "bad magic " + hex(big_endian(magic, 4), 8) + ": not an IDX file (expected 0x0000TTNN)");
  IdxArray array;
  array.type = magic[2];
  array.element_size = idx_element_size(array.type);
  if (array.element_size == 0)
    fail(fn, path, offset_at(2),
         "unsupported IDX type code " + hex(magic[2], 2) +
             " (supported: 0x08 ubyte, 0x09 sbyte, 0x0b int16, 0x0c int32, 0x0d float32, 0x0e float64)");
  if (magic[3] == 0) fail(fn, path, offset_at(3), "IDX file with 0 dimensions");
  std::uint64_t elements = 1;
  for (int k = 0; k < magic[3]; ++k) {
    unsigned char b[4];
    const std::uint64_t at = in.offset();
    if (in.read(b, 4) != 4)
      fail(fn, path, offset_at(at), "truncated header: missing size of dimension " + std::to_string(k));
    const std::uint64_t dim = big_endian(b, 4);
    if (dim == 0) fail(fn, path, offset_at(at), "dimension " + std::to_string(k) + " is 0");
    if (elements > (std::uint64_t{1} << 40) / dim)
      fail(fn, path, offset_at(at), "dimensions describe more than 2^40 elements");
    elements *= dim;
    array.dims.push_back(dim);
  }
  return array;
}

double decode_element(const unsigned char* p, int type) {
  const std::uint64_t bits = big_endian(p, idx_element_size(type));
  switch (type) {
    case 0x09: return static_cast<std::int8_t>(bits);
    case 0x0B: return static_cast<std::int16_t>(bits);
    case 0x0C: return static_cast<std::int32_t>(bits);
    case 0x0D: {
      const auto bits32 = static_cast<std::uint32_t>(bits);
      float f;
      std::memcpy(&f, &bits32, sizeof f);
      return f;
    }
    case 0x0E: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    default: return static_cast<double>(bits);  // 0x08, unsigned byte
  }
}

// Reads the raw bytes of count elements. The buffer grows only as data arrive,
// so a header that promises 2^40 elements in a short file is reported as
// truncated instead of allocating for the promise (found by fuzz/fuzz_idx).
std::vector<unsigned char> read_idx_bytes(GzInput& in, const char* fn, const std::string& path, const IdxArray& array,
                                          std::uint64_t count) {
  const std::uint64_t header = in.offset();
  const std::uint64_t total = count * array.element_size;
  constexpr std::uint64_t kChunk = 1u << 22, kFirstReserve = 1u << 26;
  // Room for the promise up to 64 MiB at once (the pages are touched only as
  // data arrive), then the vector's own growth; each chunk is appended from a
  // reused buffer, so no byte is zeroed or moved before it is read.
  std::vector<unsigned char> bytes, chunk(static_cast<std::size_t>(std::min<std::uint64_t>(total, kChunk)));
  bytes.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(total, kFirstReserve)));
  while (bytes.size() < total) {
    const std::size_t done = bytes.size();
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(total - done, kChunk));
    const std::size_t got = in.read(chunk.data(), want);
    bytes.insert(bytes.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
    if (got < want)
      fail(fn, path, offset_at(in.offset()),
           "truncated: the header promises " + std::to_string(total) + " data bytes after offset " +
               std::to_string(header) + ", the file has " + std::to_string(done + got));
  }
  unsigned char extra;
  if (in.read(&extra, 1) != 0)
    fail(fn, path, offset_at(header + total),
         "unexpected data after the " + std::to_string(total) + " bytes the header describes");
  return bytes;
}

// Decodes the elements read after offset `header`; unsigned-byte images are scaled to [0,1].
void decode_idx_values(const std::vector<unsigned char>& bytes, const char* fn, const std::string& path,
                       const IdxArray& array, std::uint64_t header, double scale, double* out) {
  if (array.type == 0x08) {
    // Unsigned bytes, always finite: a table of the 256 values (the same bits
    // as the element loop's v * scale), about four times as fast.
    double table[256];
    for (int k = 0; k < 256; ++k) table[k] = static_cast<double>(k) * scale;
    const unsigned char* in = bytes.data();
    for (std::size_t i = 0, n = bytes.size(); i < n; ++i) out[i] = table[in[i]];
    return;
  }
  for (std::size_t i = 0; i < bytes.size(); i += array.element_size) {
    const double v = decode_element(bytes.data() + i, array.type);
    if (!std::isfinite(v)) fail(fn, path, offset_at(header + i), "non-finite value (NaN/Inf)");
    *out++ = v * scale;
  }
}

}  // namespace

Dataset load_idx(const std::string& images_path, const std::string& labels_path) {
  constexpr const char* kFn = "IDX file";
  GzInput images(kFn, images_path);
  const IdxArray image_array = read_idx_header(images, kFn, images_path);
  const std::uint64_t rows = image_array.dims[0];
  std::uint64_t cols = 1;
  for (std::size_t k = 1; k < image_array.dims.size(); ++k) cols *= image_array.dims[k];
  const std::uint64_t image_header = images.offset();
  const std::vector<unsigned char> image_bytes = read_idx_bytes(images, kFn, images_path, image_array, rows * cols);
  RowMatrix features = allocate_records(static_cast<Index>(rows), static_cast<Index>(cols));
  const double scale = image_array.type == 0x08 ? 1.0 / 255.0 : 1.0;
  decode_idx_values(image_bytes, kFn, images_path, image_array, image_header, scale, features.data());

  Vec labels;
  if (!labels_path.empty()) {
    GzInput label_input(kFn, labels_path);
    const IdxArray label_array = read_idx_header(label_input, kFn, labels_path);
    if (label_array.dims.size() != 1)
      fail(
          kFn, labels_path, offset_at(3),
          "a labels file has 1 dimension (magic 0x00000801 for bytes), got " + std::to_string(label_array.dims.size()));
    if (label_array.dims[0] != rows)
      fail(kFn, labels_path, offset_at(4),
           "labels file has " + std::to_string(label_array.dims[0]) + " labels but " + images_path + " has " +
               std::to_string(rows) + " images");
    const std::uint64_t label_header = label_input.offset();
    const std::vector<unsigned char> label_bytes = read_idx_bytes(label_input, kFn, labels_path, label_array, rows);
    labels = allocate_labels(static_cast<Index>(rows));
    decode_idx_values(label_bytes, kFn, labels_path, label_array, label_header, 1.0, labels.data());
  }
  return Dataset(std::move(features), std::move(labels));
}

namespace {

// "train-images-idx3-ubyte.gz" -> "train-labels-idx1-ubyte.gz" beside it; empty if
// the name does not follow the MNIST convention.
std::string sibling_idx_labels(const std::string& images_path) {
  namespace fs = std::filesystem;
  const fs::path path(images_path);
  std::string name = path.filename().string();
  for (const char* sep : {"-", "."}) {
    const std::string pattern = std::string("images") + sep + "idx3";
    const std::size_t at = name.rfind(pattern);
    if (at != std::string::npos) {
      name.replace(at, pattern.size(), std::string("labels") + sep + "idx1");
      return (path.parent_path() / name).string();
    }
  }
  return "";
}

// A labeled run reads the images' labels from the MNIST-convention sibling
// file, and refuses rather than silently drops them.
Dataset load_idx_dataset(const std::string& path, const LoadOptions& options) {
  // A missing images file should be reported as such, not as missing labels.
  if (!options.labeled || !std::filesystem::exists(path)) return load_idx(path);
  const std::string labels = sibling_idx_labels(path);
  if (labels.empty())
    throw Error("IDX file " + path +
                ": cannot derive the IDX labels file from the name (expected "
                "'...images-idx3...' beside '...labels-idx1...'); use unlabeled data or call load_idx");
  if (!std::filesystem::exists(labels))
    throw Error("IDX file " + path + ": labels file " + labels + " not found beside the images");
  return load_idx(path, labels);
}

// Two zero bytes, a type code, 1 to 4 dimensions.
bool says_idx(const unsigned char* head, std::size_t got) {
  const bool type = head[2] == 0x08 || head[2] == 0x09 || (head[2] >= 0x0B && head[2] <= 0x0E);
  return got >= 4 && head[0] == 0 && head[1] == 0 && type && head[3] >= 1 && head[3] <= 4;
}

}  // namespace

FormatInfo idx_format_row() {
  FormatInfo r;
  r.id = FileFormat::kIdx;
  r.name = "idx";
  r.extensions = {"-ubyte", ".idx", ".idx1", ".idx3"};
  r.says = says_idx;
  r.load = load_idx_dataset;
  r.labels_file = true;
  return r;
}

}  // namespace dpsosp
