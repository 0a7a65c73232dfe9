// Internal: the record file's layout (docs/data-formats.md, "Record files"):
// the header's fields, the reading of record blocks into Datasets, and the
// records' fingerprint. The loader (record_file.cpp) and the stream
// (record_stream.cpp) read blocks through the same BlockReader.
//
// The records come in blocks of block_records records (the last one may be
// shorter), each block's labels first, then its features: dense, the block's
// rows (row-major); CSR, each record's pair count, then all the block's
// indices, then all its values. So a block of float64 dense records is read
// straight into a Dataset's arrays (pread, no decoding), and a block of
// anything else with one pass over its bytes.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dpsosp/data.hpp"
#include "dpsosp/record_file.hpp"
#include "dpsosp/types.hpp"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "record files are little-endian; this reader assumes a little-endian host"
#endif

namespace dpsosp::detail {

constexpr std::size_t kRecordHeaderBytes = 128;
constexpr char kRecordMagic[8] = {'D', 'P', 'S', 'O', 'S', 'P', 'R', 'F'};
constexpr std::uint32_t kRecordVersion = 1;
// kFlagDeclaredFeatures: sparse records whose feature count was declared
// (dpsosp convert --features), not read from their largest index.
enum RecordFlags : std::uint32_t { kFlagSparse = 1, kFlagLabeled = 2, kFlagShuffled = 4, kFlagDeclaredFeatures = 8 };

/// The header's 128 bytes for info (little-endian).
void encode_record_header(const RecordFileInfo& info, unsigned char* out);
/// Parses and checks a header against the file's size; errors are
/// "WHO: PATH: REASON".
RecordFileInfo decode_record_header(const unsigned char* bytes, std::uint64_t file_size, const char* who,
                                    const std::string& path);
/// Bytes of one value of the type.
inline std::size_t value_bytes(RecordValueType t) { return t == RecordValueType::kFloat32 ? 4 : 8; }
/// Bytes of each dense record.
inline std::uint64_t dense_record_bytes(const RecordFileInfo& info) {
  return (info.labeled ? 8 : 0) + static_cast<std::uint64_t>(info.cols) * value_bytes(info.values);
}
/// The automatic block size: about 1 MiB of records, 16 to 65536 of them.
Index automatic_block_records(const RecordFileInfo& info);

/// Reads whole blocks of a record file, in order, from an open descriptor,
/// checking what the kernels' memory safety needs (sparse pairs in range, in
/// strictly increasing order) and, with check_finite, refusing NaN and Inf
/// with a message naming the record (the loader, the streams of a
/// single-process streamed run, and the validation pass of a run of several
/// processes, whose shares leave them to clipping, which maps a non-finite
/// vector to zero).
class BlockReader {
 public:
  BlockReader(int fd, const RecordFileInfo& info, const char* who, std::string path, bool check_finite);
  /// Records the blocks from the next one on hold, at most `most` of them,
  /// whole blocks only (at least one block, whatever `most`).
  Index records_in_blocks_up_to(Index most) const;
  /// The next `count` records (whole blocks: records_in_blocks_up_to) as one
  /// dataset; throws Error at a bad record or when the file cannot be read.
  Dataset read(Index count);
  Index position() const { return position_; }
  bool done() const { return position_ >= info_.rows; }

 private:
  [[noreturn]] void fail(Index record, const std::string& what) const;
  void pread_all(void* to, std::size_t bytes, std::uint64_t at) const;
  void check_dense(const RowMatrix& m, Eigen::Index row0, Eigen::Index rows, Index first) const;
  int fd_;
  RecordFileInfo info_;
  const char* who_;
  std::string path_;
  bool check_finite_;
  Index position_ = 0;
  std::uint64_t offset_ = kRecordHeaderBytes;
  std::uint64_t pairs_read_ = 0;
  std::vector<unsigned char> raw_;
};

/// Whether the count doubles from p are all finite (at memory speed; the
/// readers search for the bad value, to name it, only when not).
bool all_finite(const double* p, std::size_t count);

/// Rows [first, first + count) of a dataset as a dataset of their own (a copy).
Dataset copy_rows(const Dataset& data, Index first, Index count);
/// The rows of several datasets of one kind, one after another (a copy).
Dataset concatenate_rows(const std::vector<Dataset>& parts);

/// The digest behind record_fingerprint, fed chunk by chunk in record order:
/// four streams (shape and pair counts, labels, sparse indices, features),
/// each hashed word by word in 4 lanes, so chunks give the whole's digest.
class RecordHasher {
 public:
  void add(const Dataset& records);
  std::uint64_t value() const;

 private:
  struct Stream {
    std::uint64_t lane[4] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                             0xD6E8FEB86659FD93ull};
    std::uint64_t count = 0;
    void words(const void* p, std::size_t n);
    std::uint64_t value() const;
  };
  Stream shape_, labels_, indices_, features_;
  bool started_ = false;
  std::uint64_t rows_ = 0;
};

}  // namespace dpsosp::detail
