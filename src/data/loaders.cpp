// dpsosp: file-format names, the guess from a file's content or name, and load_dataset's
// dispatch to the loaders (csv.cpp, libsvm.cpp, idx.cpp).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string>

#include "data/file_input.hpp"
#include "data/record_format.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/record_file.hpp"

namespace dpsosp {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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
// What the file says it is: a record file's magic, or an IDX array's header
// (two zero bytes, a type code, 1 to 4 dimensions), read through gzip; none
// for anything else, or a file that cannot be read (the loader says why).
std::optional<FileFormat> format_by_content(const std::string& path) {
  if (path == "-" || !std::filesystem::is_regular_file(path)) return std::nullopt;
  unsigned char head[8] = {};
  std::size_t got = 0;
  try {
    detail::GzInput in("data file", path);
    got = in.read(head, sizeof head);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (got == sizeof head && std::equal(head, head + 8, reinterpret_cast<const unsigned char*>(detail::kRecordMagic)))
    return FileFormat::kRecords;
  const bool idx_type = head[2] == 0x08 || head[2] == 0x09 || (head[2] >= 0x0B && head[2] <= 0x0E);
  if (got >= 4 && head[0] == 0 && head[1] == 0 && idx_type && head[3] >= 1 && head[3] <= 4) return FileFormat::kIdx;
  return std::nullopt;
}

}  // namespace

FileFormat parse_file_format(const std::string& name) {
  const std::string n = lower(name);
  if (n == "csv") return FileFormat::kCsv;
  if (n == "libsvm" || n == "svmlight" || n == "svm") return FileFormat::kLibsvm;
  if (n == "idx") return FileFormat::kIdx;
  if (n == "records" || n == "dpsr") return FileFormat::kRecords;
  throw Error("--format: unknown format '" + name + "' (expected csv, libsvm, svmlight, idx or records)");
}

FileFormat guess_file_format(const std::string& path) {
  if (const std::optional<FileFormat> said = format_by_content(path)) return *said;
  std::string name = lower(std::filesystem::path(path).filename().string());
  if (ends_with(name, ".dpsr")) return FileFormat::kRecords;
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  if (ends_with(name, ".csv")) return FileFormat::kCsv;
  for (const char* ext : {".svm", ".libsvm", ".svmlight", ".txt"})
    if (ends_with(name, ext)) return FileFormat::kLibsvm;
  if (name.find("-ubyte") != std::string::npos || ends_with(name, ".idx") || ends_with(name, ".idx1") ||
      ends_with(name, ".idx3"))
    return FileFormat::kIdx;
  throw Error("data file " + path +
              ": cannot tell its format: neither its content (a record file or an IDX array "
              "says so) nor its name (.csv, .svm, .libsvm, .txt, -ubyte, .idx, .dpsr) does; pass --format "
              "csv|libsvm|idx|records");
}

Dataset load_dataset(const std::string& path, FileFormat format, const LoadOptions& options) {
  switch (format) {
    case FileFormat::kCsv: return load_csv(path, options);
    case FileFormat::kLibsvm: return load_libsvm(path, options);
    case FileFormat::kIdx: break;
    case FileFormat::kRecords: {
      Dataset records = load_record_file(path);
      if (options.labeled || !records.has_labels()) return records;
      // An unsupervised model takes no labels: the records without them.
      if (records.is_sparse()) return Dataset(SparseRowMatrix(records.sparse()), Vec());
      return Dataset(RowMatrix(records.dense()), Vec());
    }
  }
  // A missing images file should be reported as such, not as missing labels.
  if (!options.labeled || !std::filesystem::exists(path)) return load_idx(path);
  // IDX keeps labels in a second file; the CLI names one file, so take the
  // MNIST-convention sibling, and refuse rather than silently drop the labels.
  const std::string labels = sibling_idx_labels(path);
  if (labels.empty())
    throw Error("IDX file " + path +
                ": cannot derive the IDX labels file from the name (expected "
                "'...images-idx3...' beside '...labels-idx1...'); use unlabeled data or call load_idx");
  if (!std::filesystem::exists(labels))
    throw Error("IDX file " + path + ": labels file " + labels + " not found beside the images");
  return load_idx(path, labels);
}

}  // namespace dpsosp
