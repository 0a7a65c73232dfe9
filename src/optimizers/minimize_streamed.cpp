// A streamed run (optimizer.hpp): the records of a record file read once,
// front to back, in the file's order.
//
// Inputs that are not numbers, and records the model cannot take, are refused
// before anything is released (SPEC section 8): a loaded run checks its
// records before it starts. A streamed run cannot hold them, so a
// single-process run checks each record as its stream first reads it (NaN and
// Inf by the stream's reader, the model's rules on each batch before it is
// used, the estimate's records before the estimate), then, when the run is
// done, the records it did not read, and the label range the header claims
// (a class count may have been inferred from it). A bad record ends the run
// with one line naming it, before any report exists: the noise drawn until
// then is never released, and no figure of the run is. Whether a run writes a
// report thus depends on the file as a whole, as for a loaded run. (Where a
// file has several bad records, which one the line names can depend on where
// reads and batches begin: NaN and Inf are found a piece of the file ahead.)
// One read of the file, where a validation pass first would read it twice
// (docs/scaling.md).
//
// A run of several processes keeps the validation pass: each process reads
// only its share of each batch, and the processes compare the whole file's
// fingerprint before they start. The file's identity is checked after the
// run, so a file changed during it fails the run instead of writing a report.
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "data/dataset_layout.hpp"
#include "data/record_format.hpp"
#include "data/record_stream.hpp"
#include "dpsosp/error.hpp"
#include "dpsosp/optimizer.hpp"
#include "optimizers/minimize.hpp"
#include "optimizers/process_group.hpp"

namespace dpsosp {
namespace {

// The model's message about records of a chunk that starts at record
// `first` of the file, with "record K" made the file's record number.
std::string in_file_numbers(const std::string& message, Index first) {
  const std::string key = "record ";
  const std::size_t at = message.find(key);
  if (at == std::string::npos || first == 0) return message;
  std::size_t end = at + key.size();
  while (end < message.size() && std::isdigit(static_cast<unsigned char>(message[end]))) ++end;
  if (end == at + key.size()) return message;
  const Index k = std::stoull(message.substr(at + key.size(), end - at - key.size()));
  return message.substr(0, at + key.size()) + std::to_string(first + k) + message.substr(end);
}

// The header's label range against the model's label set (its fixed labels,
// or the declared classes), before any noise: a label outside it is refused
// then, in the model's words, which name no record. (A label inside the range
// that the model refuses, such as 0.5 for logistic, is found as the records
// are read.)
void check_header_labels(const Model& model, const RecordFile& file) {
  const RecordFileInfo& info = file.info();
  if (!info.labeled) return;
  Vec ends(2);
  ends << info.label_min, info.label_max;
  try {
    model.validate(Dataset(SparseRowMatrix(2, static_cast<Eigen::Index>(info.cols)), std::move(ends)));
  } catch (const Error& e) {
    throw Error("record file " + file.path() + ": " + e.what());
  }
}

std::string shown(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// The validation pass of a run of several processes: every record read once
// and checked as a loaded run checks its records; returns their fingerprint,
// which the processes compare.
std::uint64_t validate_records(const Model& model, const RecordFile& file) {
  const RecordFileInfo& info = file.info();
  detail::RecordHasher hasher;
  double low = std::numeric_limits<double>::infinity(), high = -low;
  file.scan([&](const Dataset& records, Index first) {
    try {
      model.validate(records);
    } catch (const Error& e) {
      throw Error("record file " + file.path() + ": " + in_file_numbers(e.what(), first));
    }
    if (records.has_labels()) {
      low = std::min(low, records.labels().minCoeff());
      high = std::max(high, records.labels().maxCoeff());
    }
    hasher.add(records);
  });
  if (info.labeled && !(low == info.label_min && high == info.label_max))
    throw Error("record file " + file.path() + ": the header's label range [" + shown(info.label_min) + ", " +
                shown(info.label_max) + "] is not the records' [" + shown(low) + ", " + shown(high) + "]");
  return hasher.value();
}

// The single-process run's checks as the records are read: records [0, upto)
// of the file have passed; a batch of records already passed (a later pass)
// is not checked again.
class StreamedChecks {
 public:
  StreamedChecks(const Model& model, const RecordFile& file) : model_(model), file_(file) {}
  // rows of data are records first .. first + rows.size() - 1 of the file.
  void records(const Dataset& data, const IndexList& rows, Index first) {
    const Index count = static_cast<Index>(rows.size());
    if (first + count <= upto_) return;
    if (first > upto_)  // a gap would leave records unchecked: a bug of the caller
      throw Error("record file " + file_.path() + ": records " + std::to_string(upto_) + " to " +
                  std::to_string(first - 1) + " were passed over unchecked");
    const Index from = upto_ - first;
    const IndexList fresh(rows.begin() + static_cast<std::ptrdiff_t>(from), rows.end());
    try {
      model_.validate_rows(data, fresh);
    } catch (const Error& e) {
      throw Error("record file " + file_.path() + ": " + in_file_numbers(e.what(), upto_));
    }
    if (data.has_labels()) {
      for (Index i : fresh) {
        low_ = std::min(low_, data.label(i));
        high_ = std::max(high_, data.label(i));
      }
    }
    upto_ = first + count;
  }
  // The records the run did not read, from the stream where it stopped, and
  // the header's label range.
  void rest(detail::RecordStream& stream) {
    const Index n = file_.info().rows;
    if (stream.position() < upto_) stream.skip(upto_ - stream.position());
    constexpr Index kChunk = 1024;
    while (stream.position() < n) {
      const Index first = stream.position();
      const detail::RecordStream::Rows got = stream.next(std::min(kChunk, n - first));
      records(got.data, got.rows, first);
    }
    const RecordFileInfo& info = file_.info();
    if (info.labeled && !(low_ == info.label_min && high_ == info.label_max))
      throw Error("record file " + file_.path() + ": the header's label range [" + shown(info.label_min) + ", " +
                  shown(info.label_max) + "] is not the records' [" + shown(low_) + ", " + shown(high_) + "]");
  }

 private:
  const Model& model_;
  const RecordFile& file_;
  Index upto_ = 0;
  double low_ = std::numeric_limits<double>::infinity(), high_ = -std::numeric_limits<double>::infinity();
};

}  // namespace

Summary minimize(const Model& model, const RecordFile& file, const Vec& x0, const RunOptions& options) {
  const bool group = options.process_group != nullptr;
  detail::agreed_checks(options.process_group.get(), options, x0, [&] {
    options.Validate();
    if (!options.single_pass())
      throw Error("stream: a streamed run is single-pass; Poisson dpsgd (epochs > 0) draws records by index");
    if (options.sample_order && *options.sample_order != SampleOrder::kFile)
      throw Error(
          "stream: a streamed run reads its records in the file's order (sample_order = file), not "
          "the seed's");
    detail::check_start(model, x0);
    check_header_labels(model, file);
    return group ? validate_records(model, file) : std::uint64_t{0};
  });
  auto plan = std::make_shared<detail::BatchPlan>();
  plan->file_order = true;
  plan->stream = detail::open_record_stream(file.path(), file.info(), "record file", /*check_finite=*/!group);
  plan->group = options.process_group;
  StreamedChecks checks(model, file);
  if (!group) {
    plan->check_rows = [&checks](const Dataset& data, const IndexList& rows, Index first) {
      checks.records(data, rows, first);
    };
  }
  std::atomic<bool> agreed_stop{false};
  RunOptions planned = options;
  planned.sample_order = SampleOrder::kFile;
  if (group) {
    plan->local_stop = options.stop_flag;
    plan->agreed_stop = &agreed_stop;
    planned.stop_flag = &agreed_stop;
  }
  // The estimate of G and M (if asked for) reads the file's first records
  // itself (checked first); the run's stream then passes over them (the pool has used them).
  const auto first_records = [&](Index m) {
    detail::BlockStream head(file.path(), file.info(), "minimize", /*check_finite=*/!group);
    const detail::RecordStream::Rows rows = head.next(m);
    if (!group) checks.records(rows.data, rows.rows, 0);
    return detail::copy_rows(rows.data, rows.rows.front(), m);
  };
  Summary summary =
      detail::run_checked(model, detail::DatasetLayout::stand_in(file.info().rows, plan), x0, planned, first_records);
  if (!group) checks.rest(*plan->stream);
  file.check_unchanged("minimize");
  return summary;
}

}  // namespace dpsosp
