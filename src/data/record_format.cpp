// dpsosp: the record file's header, the decoding of its records and their
// fingerprint (record_format.hpp).
#include "data/record_format.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "dpsosp/data_layout.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::detail {
namespace {

template <class T>
void put(unsigned char* out, std::size_t at, T v) {
  std::memcpy(out + at, &v, sizeof v);
}
template <class T>
T get(const unsigned char* in, std::size_t at) {
  T v;
  std::memcpy(&v, in + at, sizeof v);
  return v;
}

// a * b + c, or false when it exceeds 2^63 (a corrupt header must not wrap).
bool checked_mul_add(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t& out) {
  constexpr std::uint64_t kMax = std::uint64_t{1} << 63;
  if (b != 0 && a > kMax / b) return false;
  out = a * b;
  if (out > kMax - c) return false;
  out += c;
  return true;
}

}  // namespace

void encode_record_header(const RecordFileInfo& info, unsigned char* out) {
  std::memset(out, 0, kRecordHeaderBytes);
  std::memcpy(out, kRecordMagic, sizeof kRecordMagic);
  put<std::uint32_t>(out, 8, kRecordVersion);
  std::uint32_t flags = 0;
  if (info.sparse) flags |= kFlagSparse;
  if (info.labeled) flags |= kFlagLabeled;
  if (info.shuffle_seed) flags |= kFlagShuffled;
  put<std::uint32_t>(out, 12, flags);
  put<std::uint64_t>(out, 16, info.rows);
  put<std::uint64_t>(out, 24, info.cols);
  put<std::uint64_t>(out, 32, info.nonzeros);
  put<std::uint32_t>(out, 40, info.values == RecordValueType::kFloat32 ? 2 : 1);
  put<std::uint64_t>(out, 48, info.shuffle_seed.value_or(0));
  put<double>(out, 56, info.label_min);
  put<double>(out, 64, info.label_max);
  put<std::uint64_t>(out, 72, info.payload_bytes);
}

RecordFileInfo decode_record_header(const unsigned char* in, std::uint64_t file_size, const char* who,
                                    const std::string& path) {
  const auto bad = [&](const std::string& reason) -> void {
    throw Error(std::string(who) + ": " + path + ": " + reason);
  };
  if (file_size < kRecordHeaderBytes || std::memcmp(in, kRecordMagic, sizeof kRecordMagic) != 0)
    bad("not a dpsosp record file (expected the 8 bytes DPSOSPRF and a 128-byte header; make one with dpsosp convert)");
  const auto version = get<std::uint32_t>(in, 8);
  if (version != kRecordVersion)
    bad("record file version " + std::to_string(version) + ", this build reads version " +
        std::to_string(kRecordVersion));
  const auto flags = get<std::uint32_t>(in, 12);
  if ((flags & ~std::uint32_t{kFlagSparse | kFlagLabeled | kFlagShuffled}) != 0)
    bad("unknown header flags " + std::to_string(flags));
  RecordFileInfo info;
  info.sparse = (flags & kFlagSparse) != 0;
  info.labeled = (flags & kFlagLabeled) != 0;
  info.rows = get<std::uint64_t>(in, 16);
  info.cols = get<std::uint64_t>(in, 24);
  info.nonzeros = get<std::uint64_t>(in, 32);
  const auto type = get<std::uint32_t>(in, 40);
  if (type != 1 && type != 2) bad("unknown value type code " + std::to_string(type) + " (expected 1 float64, 2 float32)");
  info.values = type == 2 ? RecordValueType::kFloat32 : RecordValueType::kFloat64;
  const auto seed = get<std::uint64_t>(in, 48);
  if (flags & kFlagShuffled) info.shuffle_seed = seed;
  else if (seed != 0) bad("a shuffle seed without the shuffled flag");
  info.label_min = get<double>(in, 56);
  info.label_max = get<double>(in, 64);
  info.payload_bytes = get<std::uint64_t>(in, 72);
  for (std::size_t k = 80; k < kRecordHeaderBytes; ++k)
    if (in[k] != 0) bad("header bytes 80..127 must be zero");
  if (info.rows == 0) bad("no records");
  if (info.cols == 0) bad("records of no features");
  if (info.labeled) {
    if (!(std::isfinite(info.label_min) && std::isfinite(info.label_max) && info.label_min <= info.label_max))
      bad("the header's label range is not two finite numbers in order");
  } else if (!(std::isnan(info.label_min) && std::isnan(info.label_max))) {
    bad("an unlabeled file with a label range");
  }
  const std::uint64_t vb = value_bytes(info.values);
  std::uint64_t expected = 0;
  if (!info.sparse) {
    std::uint64_t record = 0;
    if (info.nonzeros != 0) bad("a dense file with a count of stored pairs");
    if (!checked_mul_add(info.cols, vb, info.labeled ? 8 : 0, record) ||
        !checked_mul_add(info.rows, record, 0, expected))
      bad("the header's sizes overflow");
  } else {
    std::uint64_t pairs = 0;
    if (info.cols > std::numeric_limits<std::uint32_t>::max())
      bad("sparse records of more than 2^32 - 1 features");
    if (info.cols != 0 && info.nonzeros / info.cols > info.rows) bad("more stored pairs than n x d");
    if (!checked_mul_add(info.nonzeros, 4 + vb, 0, pairs) ||
        !checked_mul_add(info.rows, info.labeled ? 12 : 4, pairs, expected))
      bad("the header's sizes overflow");
  }
  if (info.payload_bytes != expected)
    bad("the header's payload of " + std::to_string(info.payload_bytes) + " bytes, its sizes need " +
        std::to_string(expected));
  if (file_size - kRecordHeaderBytes != expected)
    bad("truncated or padded: the header promises " + std::to_string(expected) + " bytes of records after the " +
        std::to_string(kRecordHeaderBytes) + "-byte header, the file has " +
        std::to_string(file_size - kRecordHeaderBytes));
  return info;
}

void RecordDecoder::fail(Index record, const std::string& what) const {
  throw Error(std::string(who_) + ": " + path_ + ": record " + std::to_string(record) + " (0-based), " + what);
}

double RecordDecoder::value(const unsigned char* p) const {
  if (info_.values == RecordValueType::kFloat32) return static_cast<double>(get<float>(p, 0));
  return get<double>(p, 0);
}

Dataset RecordDecoder::decode(ByteSource& src, Index count, Index first, bool check_finite) {
  const auto nonfinite = [&](Index k, const std::string& what, double v) {
    fail(first + k, what + " is " + std::string(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")) +
                        "; NaN and Inf are not allowed");
  };
  const auto n = static_cast<Eigen::Index>(count);
  const auto d = static_cast<Eigen::Index>(info_.cols);
  Vec labels = info_.labeled ? allocate_labels(count) : Vec();
  const std::size_t vb = value_bytes(info_.values);
  const std::size_t head = info_.labeled ? 8 : 0;
  if (!info_.sparse) {
    RowMatrix features = allocate_records(count, info_.cols);
    const std::size_t bytes = dense_record_bytes(info_);
    for (Eigen::Index k = 0; k < n; ++k) {
      const unsigned char* p = src.take(bytes);
      if (info_.labeled) labels[k] = get<double>(p, 0);
      double* row = features.row(k).data();
      if (info_.values == RecordValueType::kFloat64) {
        std::memcpy(row, p + head, static_cast<std::size_t>(d) * 8);
      } else {
        for (Eigen::Index j = 0; j < d; ++j) row[j] = static_cast<double>(get<float>(p + head, 4 * j));
      }
      if (check_finite) {
        if (info_.labeled && !std::isfinite(labels[k])) nonfinite(k, "its label", labels[k]);
        for (Eigen::Index j = 0; j < d; ++j)
          if (!std::isfinite(row[j])) nonfinite(k, "feature " + std::to_string(j), row[j]);
      }
    }
    return Dataset(std::move(features), std::move(labels));
  }
  std::vector<std::int64_t> outer(static_cast<std::size_t>(count) + 1, 0);
  std::vector<std::int64_t> inner;
  std::vector<double> values;
  for (Eigen::Index k = 0; k < n; ++k) {
    const unsigned char* p = src.take(head + 4);
    if (info_.labeled) labels[k] = get<double>(p, 0);
    const auto pairs = get<std::uint32_t>(p, head);
    if (pairs > info_.cols) fail(first + k, std::to_string(pairs) + " pairs for " + std::to_string(info_.cols) + " features");
    if (check_finite && info_.labeled && !std::isfinite(labels[k])) nonfinite(k, "its label", labels[k]);
    const unsigned char* q = src.take(static_cast<std::size_t>(pairs) * (4 + vb));
    std::int64_t previous = -1;
    for (std::uint32_t j = 0; j < pairs; ++j) {
      const auto index = static_cast<std::int64_t>(get<std::uint32_t>(q, 4 * j));
      if (index <= previous || index >= static_cast<std::int64_t>(info_.cols))
        fail(first + k, "feature index " + std::to_string(index) +
                            (index <= previous ? " after index " + std::to_string(previous) + ": indices must increase"
                                               : ": out of range for " + std::to_string(info_.cols) + " features"));
      previous = index;
      const double v = value(q + 4 * static_cast<std::size_t>(pairs) + vb * j);
      if (check_finite && !std::isfinite(v)) nonfinite(k, "feature " + std::to_string(index), v);
      inner.push_back(index);
      values.push_back(v);
    }
    outer[static_cast<std::size_t>(k) + 1] = static_cast<std::int64_t>(inner.size());
  }
  SparseRowMatrix features(n, d);
  features.resizeNonZeros(static_cast<Eigen::Index>(values.size()));
  std::copy(outer.begin(), outer.end(), features.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), features.innerIndexPtr());
  std::copy(values.begin(), values.end(), features.valuePtr());
  return Dataset(std::move(features), std::move(labels));
}

void RecordDecoder::skip(ByteSource& src, Index count, Index first) {
  const std::size_t head = info_.labeled ? 8 : 0;
  for (Index k = 0; k < count; ++k) {
    if (!info_.sparse) {
      src.take(dense_record_bytes(info_));
      continue;
    }
    const auto pairs = get<std::uint32_t>(src.take(head + 4), head);
    if (pairs > info_.cols) fail(first + k, std::to_string(pairs) + " pairs for " + std::to_string(info_.cols) + " features");
    src.take(static_cast<std::size_t>(pairs) * (4 + value_bytes(info_.values)));
  }
}

void RecordHasher::Stream::words(const void* p, std::size_t n) {
  // Word k goes to lane k mod 4: four independent chains, so the hash runs at
  // memory speed rather than one multiply's latency a word.
  constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full;
  const auto* bytes = static_cast<const unsigned char*>(p);
  for (std::size_t k = 0; k < n; ++k) {
    std::uint64_t w;
    std::memcpy(&w, bytes + 8 * k, 8);
    std::uint64_t& h = lane[(count + k) & 3];
    h ^= w * kP2;
    h = ((h << 31) | (h >> 33)) * kP1;
  }
  count += n;
}

std::uint64_t RecordHasher::Stream::value() const {
  std::uint64_t h = count * 0x27D4EB2F165667C5ull;
  for (std::uint64_t l : lane) {
    h ^= l + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  }
  return h;
}

void RecordHasher::add(const Dataset& records) {
  if (!started_) {
    const std::uint64_t shape[3] = {records.cols(), records.is_sparse() ? 1u : 0u, records.has_labels() ? 1u : 0u};
    shape_.words(shape, 3);
    started_ = true;
  }
  rows_ += records.rows();
  const Vec& labels = records.labels();
  labels_.words(labels.data(), static_cast<std::size_t>(labels.size()));
  if (!records.is_sparse()) {
    const RowMatrix& m = records.dense();
    features_.words(m.data(), static_cast<std::size_t>(m.size()));
    return;
  }
  const SparseRowMatrix& m = records.sparse();
  for (Eigen::Index r = 0; r < m.outerSize(); ++r) {
    const std::uint64_t pairs = static_cast<std::uint64_t>(m.outerIndexPtr()[r + 1] - m.outerIndexPtr()[r]);
    shape_.words(&pairs, 1);
  }
  const auto nnz = static_cast<std::size_t>(m.outerIndexPtr()[m.outerSize()]);
  indices_.words(m.innerIndexPtr(), nnz);
  features_.words(m.valuePtr(), nnz);
}

std::uint64_t RecordHasher::value() const {
  return (shape_.value() + rows_) ^ (labels_.value() * 0x9E3779B97F4A7C15ull) ^
         (indices_.value() * 0x165667B19E3779F9ull) ^ (features_.value() * 0xC2B2AE3D27D4EB4Full);
}

}  // namespace dpsosp::detail
