// dpsosp: the record file's header, the reading of its blocks and the
// records' fingerprint (record_format.hpp).
#include "data/record_format.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

std::string what_is(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

}  // namespace

Index automatic_block_records(const RecordFileInfo& info) {
  const std::uint64_t per = info.sparse ? std::max<std::uint64_t>(1, info.payload_bytes / std::max<Index>(1, info.rows))
                                        : dense_record_bytes(info);
  return std::clamp<Index>((std::size_t{1} << 20) / std::max<std::uint64_t>(1, per), 16, 65536);
}

void encode_record_header(const RecordFileInfo& info, unsigned char* out) {
  std::memset(out, 0, kRecordHeaderBytes);
  std::memcpy(out, kRecordMagic, sizeof kRecordMagic);
  put<std::uint32_t>(out, 8, kRecordVersion);
  std::uint32_t flags = 0;
  if (info.sparse) flags |= kFlagSparse;
  if (info.labeled) flags |= kFlagLabeled;
  if (info.shuffle_seed) flags |= kFlagShuffled;
  if (info.sparse && info.features_declared) flags |= kFlagDeclaredFeatures;
  put<std::uint32_t>(out, 12, flags);
  put<std::uint64_t>(out, 16, info.rows);
  put<std::uint64_t>(out, 24, info.cols);
  put<std::uint64_t>(out, 32, info.nonzeros);
  put<std::uint32_t>(out, 40, info.values == RecordValueType::kFloat32 ? 2 : 1);
  put<std::uint32_t>(out, 44, static_cast<std::uint32_t>(info.block_records));
  put<std::uint64_t>(out, 48, info.shuffle_seed.value_or(0));
  put<double>(out, 56, info.label_min);
  put<double>(out, 64, info.label_max);
  put<std::uint64_t>(out, 72, info.payload_bytes);
}

RecordFileInfo decode_record_header(const unsigned char* in, std::uint64_t file_size, const char* who,
                                    const std::string& path) {
  const auto bad = [&](const std::string& reason) -> void {
    throw Error(std::string(who) + " " + path + ": " + reason);
  };
  if (file_size < kRecordHeaderBytes || std::memcmp(in, kRecordMagic, sizeof kRecordMagic) != 0)
    bad("not a dpsosp record file (expected the 8 bytes DPSOSPRF and a 128-byte header; make one with dpsosp convert)");
  const auto version = get<std::uint32_t>(in, 8);
  if (version != kRecordVersion)
    bad("record file version " + std::to_string(version) + ", this build reads version " +
        std::to_string(kRecordVersion));
  const auto flags = get<std::uint32_t>(in, 12);
  if ((flags & ~std::uint32_t{kFlagSparse | kFlagLabeled | kFlagShuffled | kFlagDeclaredFeatures}) != 0)
    bad("unknown header flags " + std::to_string(flags));
  RecordFileInfo info;
  info.sparse = (flags & kFlagSparse) != 0;
  if ((flags & kFlagDeclaredFeatures) != 0 && !info.sparse) bad("a dense file with the declared-features flag");
  info.features_declared = !info.sparse || (flags & kFlagDeclaredFeatures) != 0;
  info.labeled = (flags & kFlagLabeled) != 0;
  info.rows = get<std::uint64_t>(in, 16);
  info.cols = get<std::uint64_t>(in, 24);
  info.nonzeros = get<std::uint64_t>(in, 32);
  const auto type = get<std::uint32_t>(in, 40);
  if (type != 1 && type != 2)
    bad("unknown value type code " + std::to_string(type) + " (expected 1 float64, 2 float32)");
  info.values = type == 2 ? RecordValueType::kFloat32 : RecordValueType::kFloat64;
  info.block_records = get<std::uint32_t>(in, 44);
  const auto seed = get<std::uint64_t>(in, 48);
  if (flags & kFlagShuffled)
    info.shuffle_seed = seed;
  else if (seed != 0)
    bad("a shuffle seed without the shuffled flag");
  info.label_min = get<double>(in, 56);
  info.label_max = get<double>(in, 64);
  info.payload_bytes = get<std::uint64_t>(in, 72);
  for (std::size_t k = 80; k < kRecordHeaderBytes; ++k)
    if (in[k] != 0) bad("header bytes 80..127 must be zero");
  if (info.rows == 0) bad("no records");
  if (info.cols == 0) bad("records of no features");
  if (info.block_records == 0) bad("blocks of no records");
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
    if (info.cols > std::numeric_limits<std::uint32_t>::max()) bad("sparse records of more than 2^32 - 1 features");
    if (info.nonzeros / info.cols > info.rows) bad("more stored pairs than n x d");
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

BlockReader::BlockReader(int fd, const RecordFileInfo& info, const char* who, std::string path, bool check_finite)
    : fd_(fd), info_(info), who_(who), path_(std::move(path)), check_finite_(check_finite) {}

void BlockReader::fail(Index record, const std::string& what) const {
  throw Error(std::string(who_) + " " + path_ + ": record " + std::to_string(record) + " (0-based), " + what);
}

void BlockReader::pread_all(void* to, std::size_t bytes, std::uint64_t at) const {
  auto* p = static_cast<char*>(to);
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t r = ::pread(fd_, p + got, bytes - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw Error(std::string(who_) + " " + path_ + ": read error at byte " + std::to_string(at + got) + ": " +
                  std::strerror(errno));
    if (r == 0)
      throw Error(std::string(who_) + " " + path_ + ": the file ends at byte " + std::to_string(at + got) +
                  ", its header promises more (truncated while being read?)");
    got += static_cast<std::size_t>(r);
  }
}

Index BlockReader::records_in_blocks_up_to(Index most) const {
  const Index left = info_.rows - position_;
  const Index block = info_.block_records;
  const Index blocks = std::max<Index>(1, most / block);
  return std::min(left, blocks * block);
}

bool all_finite(const double* p, std::size_t count) {
  // x * 0 is 0 for a finite x and NaN otherwise: sums of them, in four
  // independent chains (vectorised), find a non-finite value at memory speed.
  double acc[4] = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= count; k += 4)
    for (int l = 0; l < 4; ++l) acc[l] += p[k + l] * 0.0;
  for (; k < count; ++k) acc[0] += p[k] * 0.0;
  return std::isfinite(acc[0] + acc[1] + acc[2] + acc[3]);
}

void BlockReader::check_dense(const RowMatrix& m, Eigen::Index row0, Eigen::Index rows, Index first) const {
  const auto d = m.cols();
  if (all_finite(m.row(row0).data(), static_cast<std::size_t>(rows) * static_cast<std::size_t>(d))) return;
  for (Eigen::Index r = row0; r < row0 + rows; ++r) {
    const double* row = m.row(r).data();
    for (Eigen::Index j = 0; j < d; ++j)
      if (!std::isfinite(row[j]))
        fail(first + static_cast<Index>(r - row0),
             "feature " + std::to_string(j) + " is " + what_is(row[j]) + "; NaN and Inf are not allowed");
  }
}

Dataset BlockReader::read(Index count) {
  const auto n = static_cast<Eigen::Index>(count);
  const auto d = static_cast<Eigen::Index>(info_.cols);
  const std::size_t vb = value_bytes(info_.values);
  Vec labels = info_.labeled ? allocate_labels(count) : Vec();
  RowMatrix dense = info_.sparse ? RowMatrix() : allocate_records(count, info_.cols);
  std::vector<std::int64_t> outer{0}, inner;
  std::vector<double> values;
  for (Eigen::Index at = 0; at < n;) {  // block after block
    const Index first = position_ + static_cast<Index>(at);
    const auto m = static_cast<Eigen::Index>(std::min<Index>(info_.block_records, count - static_cast<Index>(at)));
    if (info_.labeled) {
      pread_all(labels.data() + at, static_cast<std::size_t>(m) * 8, offset_);
      offset_ += static_cast<std::uint64_t>(m) * 8;
      if (check_finite_)
        for (Eigen::Index k = 0; k < m; ++k)
          if (!std::isfinite(labels[at + k]))
            fail(first + static_cast<Index>(k),
                 "its label is " + what_is(labels[at + k]) + "; NaN and Inf are not allowed");
    }
    if (!info_.sparse) {
      const std::size_t bytes = static_cast<std::size_t>(m) * static_cast<std::size_t>(d) * vb;
      if (info_.values == RecordValueType::kFloat64) {
        pread_all(dense.row(at).data(), bytes, offset_);  // straight into the rows
      } else {
        raw_.resize(bytes);
        pread_all(raw_.data(), bytes, offset_);
        double* out = dense.row(at).data();
        for (std::size_t k = 0; k < static_cast<std::size_t>(m * d); ++k)
          out[k] = static_cast<double>(get<float>(raw_.data(), 4 * k));
      }
      offset_ += bytes;
      if (check_finite_) check_dense(dense, at, m, first);
      at += m;
      continue;
    }
    // CSR: the pair counts, then the block's indices and values.
    raw_.resize(static_cast<std::size_t>(m) * 4);
    pread_all(raw_.data(), raw_.size(), offset_);
    offset_ += raw_.size();
    std::vector<std::uint32_t> counts(static_cast<std::size_t>(m));
    std::memcpy(counts.data(), raw_.data(), raw_.size());
    std::uint64_t pairs = 0;
    for (Eigen::Index k = 0; k < m; ++k) {
      if (counts[k] > info_.cols)
        fail(first + k, std::to_string(counts[k]) + " pairs for " + std::to_string(info_.cols) + " features");
      pairs += counts[k];
    }
    // The header's count bounds what is read (it was checked against the file's size).
    if (pairs > info_.nonzeros - pairs_read_)
      fail(first, "the pair counts exceed the header's " + std::to_string(info_.nonzeros) + " pairs");
    pairs_read_ += pairs;
    if (position_ + static_cast<Index>(at + m) == info_.rows && pairs_read_ != info_.nonzeros)
      fail(first, "the pair counts add up to " + std::to_string(pairs_read_) + ", the header says " +
                      std::to_string(info_.nonzeros));
    raw_.resize(static_cast<std::size_t>(pairs) * (4 + vb));
    pread_all(raw_.data(), raw_.size(), offset_);
    offset_ += raw_.size();
    const unsigned char* idx = raw_.data();
    const unsigned char* val = raw_.data() + 4 * pairs;
    std::size_t p = 0;
    for (Eigen::Index k = 0; k < m; ++k) {
      std::int64_t previous = -1;
      for (std::uint32_t j = 0; j < counts[k]; ++j, ++p) {
        const auto index = static_cast<std::int64_t>(get<std::uint32_t>(idx, 4 * p));
        if (index <= previous || index >= static_cast<std::int64_t>(info_.cols))
          fail(first + k,
               "feature index " + std::to_string(index) +
                   (index <= previous ? " after index " + std::to_string(previous) + ": indices must increase"
                                      : ": out of range for " + std::to_string(info_.cols) + " features"));
        previous = index;
        const double v = vb == 4 ? static_cast<double>(get<float>(val, 4 * p)) : get<double>(val, 8 * p);
        if (check_finite_ && !std::isfinite(v))
          fail(first + k, "feature " + std::to_string(index) + " is " + what_is(v) + "; NaN and Inf are not allowed");
        inner.push_back(index);
        values.push_back(v);
      }
      outer.push_back(static_cast<std::int64_t>(inner.size()));
    }
    at += m;
  }
  position_ += count;
  if (!info_.sparse) return Dataset(std::move(dense), std::move(labels));
  SparseRowMatrix features(n, d);
  features.resizeNonZeros(static_cast<Eigen::Index>(values.size()));
  std::copy(outer.begin(), outer.end(), features.outerIndexPtr());
  std::copy(inner.begin(), inner.end(), features.innerIndexPtr());
  std::copy(values.begin(), values.end(), features.valuePtr());
  return Dataset(std::move(features), std::move(labels));
}

Dataset copy_rows(const Dataset& data, Index first, Index count) {
  const auto f = static_cast<Eigen::Index>(first), m = static_cast<Eigen::Index>(count);
  Vec labels = data.has_labels() ? Vec(data.labels().segment(f, m)) : Vec();
  if (!data.is_sparse()) return Dataset(RowMatrix(data.dense().middleRows(f, m)), std::move(labels));
  return Dataset(SparseRowMatrix(data.sparse().middleRows(f, m)), std::move(labels));
}

Dataset concatenate_rows(const std::vector<Dataset>& parts) {
  Index rows = 0;
  for (const Dataset& p : parts) rows += p.rows();
  const Dataset& one = parts.front();
  const auto n = static_cast<Eigen::Index>(rows);
  Vec labels = one.has_labels() ? allocate_labels(rows) : Vec();
  Eigen::Index at = 0;
  for (const Dataset& p : parts) {
    if (one.has_labels()) labels.segment(at, static_cast<Eigen::Index>(p.rows())) = p.labels();
    at += static_cast<Eigen::Index>(p.rows());
  }
  if (!one.is_sparse()) {
    RowMatrix m = allocate_records(rows, one.cols());
    at = 0;
    for (const Dataset& p : parts) {
      m.middleRows(at, static_cast<Eigen::Index>(p.rows())) = p.dense();
      at += static_cast<Eigen::Index>(p.rows());
    }
    return Dataset(std::move(m), std::move(labels));
  }
  std::int64_t nnz = 0;
  for (const Dataset& p : parts) nnz += p.sparse().nonZeros();
  SparseRowMatrix m(n, static_cast<Eigen::Index>(one.cols()));
  m.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  std::int64_t* outer = m.outerIndexPtr();
  outer[0] = 0;
  std::int64_t base = 0;
  at = 0;
  for (const Dataset& p : parts) {
    const SparseRowMatrix& s = p.sparse();
    const std::int64_t pn = s.nonZeros();
    std::copy(s.innerIndexPtr(), s.innerIndexPtr() + pn, m.innerIndexPtr() + base);
    std::copy(s.valuePtr(), s.valuePtr() + pn, m.valuePtr() + base);
    for (Eigen::Index r = 0; r < s.outerSize(); ++r) outer[at + r + 1] = base + s.outerIndexPtr()[r + 1];
    at += s.outerSize();
    base += pn;
  }
  return Dataset(std::move(m), std::move(labels));
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
  for (std::uint64_t l : lane) h ^= l + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
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
