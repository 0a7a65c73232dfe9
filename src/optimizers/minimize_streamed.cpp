// A streamed run (optimizer.hpp): the records of a record file read once,
// front to back, in the file's order.
//
// No data-dependent failure (SPEC section 8): a loaded run refuses NaN, Inf
// and records its model cannot take before it draws any noise. A streamed run
// cannot hold the records, so it reads them twice: a validation pass over
// every record first (the same checks, and the label range the header claims,
// which a class count may have been inferred from), then the run's own pass.
// Whether a run fails, and where, thus depends on the file as a whole, never
// on a record the run meets; the second pass meets only records that passed
// (the file's identity is checked after both passes, so a file changed in
// between fails the run, after it, instead of writing a report; a NaN that
// appeared in between would be clipped to zero, as any non-finite vector).
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
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

std::string shown(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// The validation pass: every record read once and checked as a loaded run
// checks its records; returns their fingerprint (with `fingerprint`: a group's
// processes compare them), else 0.
std::uint64_t validate_records(const Model& model, const RecordFile& file, bool fingerprint) {
  const RecordFileInfo& info = file.info();
  detail::RecordHasher hasher;
  double low = std::numeric_limits<double>::infinity(), high = -low;
  file.scan([&](const Dataset& records, Index first) {
    try {
      model.validate(records);
    } catch (const Error& e) {
      throw Error("minimize: " + file.path() + ": " + in_file_numbers(e.what(), first));
    }
    if (records.has_labels()) {
      low = std::min(low, records.labels().minCoeff());
      high = std::max(high, records.labels().maxCoeff());
    }
    if (fingerprint) hasher.add(records);
  });
  if (info.labeled && !(low == info.label_min && high == info.label_max))
    throw Error("minimize: " + file.path() + ": the header's label range [" + shown(info.label_min) + ", " +
                shown(info.label_max) + "] is not the records' [" + shown(low) + ", " + shown(high) + "]");
  return fingerprint ? hasher.value() : 0;
}

}  // namespace

Summary minimize(const Model& model, const RecordFile& file, const Vec& x0, const RunOptions& options) {
  detail::agreed_checks(options.process_group.get(), options, x0, [&] {
    options.Validate();
    if (!options.single_pass())
      throw Error("minimize: a streamed run is single-pass; Poisson dpsgd (epochs > 0) draws records by index");
    if (options.sample_order && *options.sample_order != SampleOrder::kFile)
      throw Error("minimize: a streamed run reads its records in the file's order (sample_order = file), not "
                  "the seed's");
    detail::check_start(model, x0);
    return validate_records(model, file, options.process_group != nullptr);
  });
  auto plan = std::make_shared<detail::BatchPlan>();
  plan->file_order = true;
  plan->stream = detail::open_record_stream(file.path(), file.info(), "minimize");
  plan->group = options.process_group;
  std::atomic<bool> agreed_stop{false};
  RunOptions planned = options;
  planned.sample_order = SampleOrder::kFile;
  if (options.process_group) {
    plan->local_stop = options.stop_flag;
    plan->agreed_stop = &agreed_stop;
    planned.stop_flag = &agreed_stop;
  }
  // The estimate of G and M (if asked for) reads the file's first records
  // itself; the run's stream then passes over them (the pool has used them).
  const auto first_records = [&file](Index m) {
    detail::BlockStream head(file.path(), file.info(), "minimize");
    const detail::RecordStream::Rows rows = head.next(m);
    return detail::copy_rows(rows.data, rows.rows.front(), m);
  };
  Summary summary = detail::run_checked(model, detail::DatasetLayout::stand_in(file.info().rows, plan), x0, planned,
                                        first_records);
  file.check_unchanged("minimize");
  return summary;
}

}  // namespace dpsosp
