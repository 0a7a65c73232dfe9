// Internal: the record file's layout (docs/data-formats.md, "Record files"):
// the header's fields, the decoding of records from bytes into a Dataset, and
// the records' fingerprint. The loader (record_file.cpp) and the stream
// (record_stream.cpp) decode through the same RecordDecoder.
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
enum RecordFlags : std::uint32_t { kFlagSparse = 1, kFlagLabeled = 2, kFlagShuffled = 4 };

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

/// Where the decoder takes its bytes: n contiguous bytes, valid until the next
/// call; throws Error when the file ends first.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual const unsigned char* take(std::size_t n) = 0;
};

/// Decodes records (dense or CSR, as the header says) into Datasets, checking
/// what the memory safety of the kernels needs: sparse pairs in range and in
/// strictly increasing order. check_finite refuses NaN and Inf, naming the
/// record (the loader and the validation pass; a streamed run's second pass
/// leaves them to clipping, which maps a non-finite vector to zero).
class RecordDecoder {
 public:
  RecordDecoder(const RecordFileInfo& info, const char* who, std::string path)
      : info_(info), who_(who), path_(std::move(path)) {}
  /// The next `count` records of src, which are records first.. of the file.
  Dataset decode(ByteSource& src, Index count, Index first, bool check_finite);
  /// Passes over `count` records without decoding them (sparse: reads their pair counts).
  void skip(ByteSource& src, Index count, Index first);

 private:
  [[noreturn]] void fail(Index record, const std::string& what) const;
  double value(const unsigned char* p) const;
  RecordFileInfo info_;
  const char* who_;
  std::string path_;
};

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
