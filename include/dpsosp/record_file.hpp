// dpsosp: record files, a binary format that a run can read front to back
// (`dpsosp convert`, `dpsosp run --stream`; docs/data-formats.md, "Record
// files"): a 128-byte header (n, d, dense or CSR, labels, value type, the
// public shuffle seed, records per block) and then the records, block after
// block, each block's labels first, then its features.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "dpsosp/data.hpp"
#include "dpsosp/types.hpp"

namespace dpsosp {

/// How feature values are stored (labels are always float64).
enum class RecordValueType { kFloat64, kFloat32 };
/// "float64", "float32"; parse_record_value_type throws Error for other names.
std::string record_value_type_name(RecordValueType type);
RecordValueType parse_record_value_type(const std::string& name);

/// What a record file's header says.
struct RecordFileInfo {
  Index rows = 0;        ///< records n
  Index cols = 0;        ///< features d of each record
  bool sparse = false;   ///< CSR records (index, value pairs) rather than d values each
  bool labeled = false;  ///< each record starts with its label
  /// The feature count is public: dense records (every record has cols
  /// values), or sparse ones whose count was declared when the file was
  /// written (dpsosp convert --features D). False: sparse records whose
  /// count is their largest index, read from the records, which a private
  /// run refuses (docs/privacy.md, "Public shape").
  bool features_declared = true;
  RecordValueType values = RecordValueType::kFloat64;
  Index nonzeros = 0;  ///< sparse: stored pairs over all records
  /// The records are stored in the sample order of this public seed.
  std::optional<std::uint64_t> shuffle_seed;
  /// The smallest and largest label (NaN when unlabeled), read from the
  /// records: lets a non-private streamed run infer the class count as a
  /// loaded one does (max + 1), and a private one check the labels against
  /// its declared classes before any noise; the validation pass checks them.
  double label_min = std::numeric_limits<double>::quiet_NaN();
  double label_max = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t payload_bytes = 0;  ///< bytes after the header
  /// Records per block (labels, then features, of each block; the last
  /// block may be shorter).
  Index block_records = 0;
};

struct RecordWriteOptions {
  RecordValueType values = RecordValueType::kFloat64;
  /// Write the records in the sample order of this seed (SamplePool(n, seed)):
  /// read front to back, the file then gives them in the order in which a
  /// loaded run with this seed uses them. The seed is public (the header
  /// keeps it). Unset: record order.
  std::optional<std::uint64_t> shuffle_seed;
  /// Records per block; 0: about 1 MiB of records (16 to 65536 of them).
  Index block_records = 0;
  /// Sparse records: their cols() is a declared, public count (the header's
  /// flag, RecordFileInfo::features_declared), not their largest index.
  bool features_declared = false;
};

/// Writes the records (record order, or the shuffle seed's) to path, through
/// a temporary file renamed over it. float32 refuses a value that float32
/// cannot hold (it would become infinite) and rounds the others to nearest.
/// Throws Error naming the file.
void write_record_file(const Dataset& data, const std::string& path, const RecordWriteOptions& options = {});
/// The header of a record file, checked against the file's size.
RecordFileInfo read_record_file_info(const std::string& path);
/// All records in memory, in the file's order (record k is the file's k-th);
/// NaN and Inf are refused, as by the other loaders.
Dataset load_record_file(const std::string& path);

/// A record file opened for a streamed run: its header, checked, and the
/// file's identity (device, inode, size, modification time), so a run can
/// tell whether it changed between its passes.
class RecordFile {
 public:
  explicit RecordFile(const std::string& path);
  const std::string& path() const { return path_; }
  const RecordFileInfo& info() const { return info_; }
  /// Reads every record once, front to back (read-ahead on a second thread),
  /// whole blocks at a time, about 32 MiB of records: visit(records, first)
  /// sees records first .. first + records.rows() - 1 of the file. NaN and
  /// Inf are refused (the message names the record). Throws Error if the
  /// file changed since it was opened.
  void scan(const std::function<void(const Dataset& records, Index first)>& visit) const;
  /// Throws Error "WHO: PATH changed ..." unless the file is the one opened.
  void check_unchanged(const std::string& who) const;

 private:
  std::string path_;
  RecordFileInfo info_;
  struct Identity {
    std::uint64_t device = 0, inode = 0, size = 0;
    std::int64_t mtime_ns = 0;
    bool operator==(const Identity& o) const {
      return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
    }
  };
  Identity identity_;
  static Identity identity_of(const std::string& path, const char* who);
};

/// A digest of the stored records (shape, labels, features), for telling
/// whether several processes hold the same records: the same for a record
/// file loaded whole and for its records scanned chunk by chunk. Not
/// cryptographic.
std::uint64_t record_fingerprint(const Dataset& data);

}  // namespace dpsosp
