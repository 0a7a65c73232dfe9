// dpsosp: record files (record_file.hpp): writing, the header, loading whole,
// and RecordFile, a file opened for a streamed run.
#include "dpsosp/record_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "data/dataset_layout.hpp"
#include "data/formats.hpp"
#include "data/record_format.hpp"
#include "data/record_stream.hpp"
#include "data/sample_order.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp {

std::string record_value_type_name(RecordValueType type) {
  return type == RecordValueType::kFloat32 ? "float32" : "float64";
}

RecordValueType parse_record_value_type(const std::string& name) {
  if (name == "float64") return RecordValueType::kFloat64;
  if (name == "float32") return RecordValueType::kFloat32;
  throw Error("parse_record_value_type: unknown value type '" + name + "' (expected float64 or float32)");
}

namespace {

constexpr const char* kWrite = "write_record_file";

// Appends bytes to a file descriptor through a 4 MiB buffer.
class Output {
 public:
  Output(int fd, const std::string& path) : fd_(fd), path_(path) { buffer_.reserve(kBuffer); }
  void put(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    if (buffer_.size() + n > kBuffer) flush();
    if (n > kBuffer) return write_all(c, n);
    buffer_.insert(buffer_.end(), c, c + n);
  }
  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

 private:
  void write_all(const unsigned char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw Error(std::string(kWrite) + ": " + path_ + ": cannot write: " + std::strerror(errno));
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  static constexpr std::size_t kBuffer = std::size_t{4} << 20;
  int fd_;
  const std::string& path_;
  std::vector<unsigned char> buffer_;
};

void put_value(Output& out, double v, RecordValueType type, Index record, Index feature, const std::string& path) {
  if (!std::isfinite(v))
    throw Error(std::string(kWrite) + ": " + path + ": record " + std::to_string(record) + ", feature " +
                std::to_string(feature) + " is not finite");
  if (type == RecordValueType::kFloat64) return out.put(&v, 8);
  if (std::fabs(v) > static_cast<double>(FLT_MAX))
    throw Error(std::string(kWrite) + ": " + path + ": record " + std::to_string(record) + ", feature " +
                std::to_string(feature) + " = " + std::to_string(v) + " does not fit float32 (write float64)");
  const auto f = static_cast<float>(v);
  out.put(&f, 4);
}

void write_records(const Dataset& data, const std::vector<std::uint32_t>& order, RecordFileInfo& info, int fd,
                   const std::string& path) {
  const Index n = data.rows();
  const auto record_of = [&](Index k) { return order.empty() ? k : static_cast<Index>(order[k]); };
  Output out(fd, path);
  unsigned char header[detail::kRecordHeaderBytes];
  detail::encode_record_header(info, header);
  out.put(header, sizeof header);
  const SparseRowMatrix* m = data.is_sparse() ? &data.sparse() : nullptr;
  const auto pairs_of = [&](Index i, std::int64_t& begin, std::int64_t& end) {
    const auto at = static_cast<Eigen::Index>(detail::DatasetLayout::slot(data, i));
    begin = m->outerIndexPtr()[at];
    end = m->outerIndexPtr()[at + 1];
  };
  // Block after block: the labels, then the features (dense rows; or the
  // pair counts, the indices and the values).
  for (Index b0 = 0; b0 < n; b0 += info.block_records) {
    const Index b1 = std::min(n, b0 + info.block_records);
    if (info.labeled) {
      for (Index k = b0; k < b1; ++k) {
        const double y = data.label(record_of(k));
        if (!std::isfinite(y))
          throw Error(std::string(kWrite) + ": " + path + ": the label of record " + std::to_string(record_of(k)) +
                      " is not finite");
        out.put(&y, 8);
      }
    }
    if (m == nullptr) {
      for (Index k = b0; k < b1; ++k) {
        const double* row = data.dense_row(record_of(k));
        for (Index j = 0; j < info.cols; ++j) put_value(out, row[j], info.values, record_of(k), j, path);
      }
      continue;
    }
    std::int64_t begin = 0, end = 0;
    for (Index k = b0; k < b1; ++k) {
      pairs_of(record_of(k), begin, end);
      const auto pairs = static_cast<std::uint32_t>(end - begin);
      out.put(&pairs, 4);
    }
    for (Index k = b0; k < b1; ++k) {
      pairs_of(record_of(k), begin, end);
      for (std::int64_t p = begin; p < end; ++p) {
        const auto index = static_cast<std::uint32_t>(m->innerIndexPtr()[p]);
        out.put(&index, 4);
      }
    }
    for (Index k = b0; k < b1; ++k) {
      pairs_of(record_of(k), begin, end);
      for (std::int64_t p = begin; p < end; ++p)
        put_value(out, m->valuePtr()[p], info.values, record_of(k), m->innerIndexPtr()[p], path);
    }
  }
  out.flush();
}

}  // namespace

void write_record_file(const Dataset& data, const std::string& path, const RecordWriteOptions& options) {
  const Index n = data.rows();
  if (n == 0) throw Error(std::string(kWrite) + ": " + path + ": no records to write");
  if (data.cols() == 0) throw Error(std::string(kWrite) + ": " + path + ": records of no features");
  if (data.is_sparse() && data.cols() > std::numeric_limits<std::uint32_t>::max())
    throw Error(std::string(kWrite) + ": " + path + ": sparse records of more than 2^32 - 1 features");
  RecordFileInfo info;
  info.rows = n;
  info.cols = data.cols();
  info.sparse = data.is_sparse();
  info.labeled = data.has_labels();
  info.values = options.values;
  info.shuffle_seed = options.shuffle_seed;
  info.features_declared = !info.sparse || options.features_declared;
  if (info.labeled) {
    info.label_min = data.labels().minCoeff();
    info.label_max = data.labels().maxCoeff();
  }
  const std::uint64_t vb = detail::value_bytes(info.values);
  if (info.sparse) {
    info.nonzeros = static_cast<Index>(data.sparse().nonZeros());
    info.payload_bytes = n * (info.labeled ? 12 : 4) + info.nonzeros * (4 + vb);
  } else {
    info.payload_bytes = n * detail::dense_record_bytes(info);
  }
  info.block_records = options.block_records > 0 ? options.block_records : detail::automatic_block_records(info);
  if (info.block_records > std::numeric_limits<std::uint32_t>::max())
    throw Error(std::string(kWrite) + ": " + path + ": blocks of more than 2^32 - 1 records");
  std::vector<std::uint32_t> order;
  if (options.shuffle_seed) {
    if (n > std::numeric_limits<std::uint32_t>::max())
      throw Error(std::string(kWrite) + ": " + path + ": at most 2^32 - 1 records can be shuffled");
    detail::shuffle_order(order, n, *options.shuffle_seed);
  }
  // A temporary file beside the target, renamed over it: an existing file is
  // replaced whole or not at all.
  std::string temp = path + ".tmpXXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw Error(std::string(kWrite) + ": " + path + ": cannot create a file beside it: " + std::strerror(errno));
  temp = name.data();
  try {
    write_records(data, order, info, fd, path);
  } catch (...) {
    ::close(fd);
    std::remove(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw Error(std::string(kWrite) + ": " + path + ": cannot write: " + why);
  }
  ::chmod(temp.c_str(), 0644);
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(temp.c_str());
    throw Error(std::string(kWrite) + ": " + path + ": cannot replace it: " + why);
  }
}

namespace {

RecordFileInfo read_info(const std::string& path, const char* who, std::uint64_t* size_out = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(std::string(who) + " " + path + ": cannot open file: " + std::strerror(errno));
  struct stat st {};
  unsigned char header[detail::kRecordHeaderBytes] = {};
  ssize_t got = 0;
  const bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) got = ::pread(fd, header, sizeof header, 0);
  ::close(fd);
  if (!ok) throw Error(std::string(who) + " " + path + ": not a regular file");
  if (got < 0) throw Error(std::string(who) + " " + path + ": cannot read: " + std::strerror(errno));
  if (size_out != nullptr) *size_out = static_cast<std::uint64_t>(st.st_size);
  return detail::decode_record_header(header, static_cast<std::uint64_t>(got) < sizeof header ? 0 : st.st_size, who,
                                      path);
}

}  // namespace

RecordFileInfo read_record_file_info(const std::string& path) { return read_info(path, "record file"); }

Dataset load_record_file(const std::string& path) {
  const RecordFileInfo info = read_info(path, "record file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("record file " + path + ": cannot open file: " + std::strerror(errno));
  try {
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    detail::BlockReader reader(fd, info, "record file", path, true);
    Dataset data = reader.read(info.rows);
    ::close(fd);
    return data;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

RecordFile::Identity RecordFile::identity_of(const std::string& path, const char* who) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(std::string(who) + " " + path + ": cannot open file: " + std::strerror(errno));
  Identity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

RecordFile::RecordFile(const std::string& path) : path_(path) {
  identity_ = identity_of(path, "record file");
  info_ = read_info(path, "record file");
  check_unchanged("record file");  // the header read is the file's
}

void RecordFile::check_unchanged(const std::string& who) const {
  if (!(identity_of(path_, who.c_str()) == identity_))
    throw Error(who + " " + path_ +
                " changed since it was opened (size, modification time or inode); a run "
                "must read the records it checked");
}

void RecordFile::scan(const std::function<void(const Dataset&, Index)>& visit) const {
  detail::BlockStream stream(path_, info_, "record file", true);
  for (;;) {
    const Index first = stream.position();
    const detail::RecordStream::Rows block = stream.next_block();
    if (block.rows.empty()) break;
    visit(block.data, first);
  }
  check_unchanged("record file");
}

std::uint64_t record_fingerprint(const Dataset& data) {
  detail::RecordHasher hasher;
  hasher.add(data);
  return hasher.value();
}

namespace {

// An unsupervised model takes no labels: the records without them.
Dataset load_records_dataset(const std::string& path, const LoadOptions& options) {
  Dataset records = load_record_file(path);
  if (options.labeled || !records.has_labels()) return records;
  if (records.is_sparse()) return Dataset(SparseRowMatrix(records.sparse()), Vec());
  return Dataset(RowMatrix(records.dense()), Vec());
}

bool says_records(const unsigned char* head, std::size_t got) {
  return got >= 8 && std::equal(head, head + 8, reinterpret_cast<const unsigned char*>(detail::kRecordMagic));
}

}  // namespace

FormatInfo records_format_row() {
  FormatInfo r;
  r.id = FileFormat::kRecords;
  r.name = "records";
  r.aliases = {"dpsr"};
  r.extensions = {".dpsr"};
  r.says = says_records;
  r.load = load_records_dataset;
  return r;
}

}  // namespace dpsosp
