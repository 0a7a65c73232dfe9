// dpsosp: the format table (data.hpp, FormatInfo): the formats by name, the
// guess from a file's content or name, and load_dataset's dispatch to the loaders.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>

#include "data/file_input.hpp"
#include "data/formats.hpp"
#include "dpsosp/data.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

const std::vector<FormatInfo>& format_table() {
  static const std::vector<FormatInfo> table = {csv_format_row(), libsvm_format_row(), idx_format_row(),
                                                records_format_row()};
  return table;
}

std::string format_names(const std::string& separator) {
  std::string list;
  for (const FormatInfo& f : format_table()) list += (list.empty() ? "" : separator) + f.name;
  return list;
}

const FormatInfo& format_info(FileFormat id) {
  for (const FormatInfo& f : format_table())
    if (f.id == id) return f;
  throw Error("unknown data format");
}

FileFormat parse_file_format(const std::string& name) {
  const std::string n = lower(name);
  std::string all;
  for (const FormatInfo& f : format_table()) {
    if (f.name == n || std::find(f.aliases.begin(), f.aliases.end(), n) != f.aliases.end()) return f.id;
    all += (all.empty() ? "" : ", ") + f.name;
    for (const std::string& a : f.aliases) all += ", " + a;
  }
  throw Error("--format: unknown format '" + name + "' (expected one of " + all + ")");
}

FileFormat guess_file_format(const std::string& path) {
  // What the file says it is (through gzip); a file that cannot be read is the loader's to report.
  if (path != "-" && std::filesystem::is_regular_file(path)) {
    unsigned char head[8] = {};
    std::size_t got = 0;
    try {
      detail::GzInput in("data file", path);
      got = in.read(head, sizeof head);
    } catch (const Error&) {
    }
    for (const FormatInfo& f : format_table())
      if (f.says != nullptr && f.says(head, got)) return f.id;
  }
  std::string name = lower(std::filesystem::path(path).filename().string());
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  std::string extensions;
  for (const FormatInfo& f : format_table()) {
    for (const std::string& e : f.extensions) {
      if (e.front() == '.' ? ends_with(name, e) : name.find(e) != std::string::npos) return f.id;
      extensions += (extensions.empty() ? "" : ", ") + e;
    }
  }
  throw Error("data file " + path +
              ": cannot tell its format: neither its content (a record file or an IDX array says so) nor its name (" +
              extensions + ") does; pass --format " + format_names("|"));
}

Dataset load_dataset(const std::string& path, FileFormat format, const LoadOptions& options) {
  return format_info(format).load(path, options);
}

}  // namespace dpsosp
