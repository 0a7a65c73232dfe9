// Streamed runs (minimize over a RecordFile): the bits of a loaded run of the
// same file in the file's order, for every single-pass algorithm, dense and
// sparse; a file shuffled by a seed streams as a loaded run of the original
// records in that seed's order; a bad record ends a run without a summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "run_cases.hpp"
#include "test_errors.hpp"

namespace dpsosp {
namespace {

using testing::same_bits;

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "streamed_run_test_" + std::to_string(::getpid()) + "_" + name;
}

void expect_same_run(const Summary& got, const Summary& want) {
  EXPECT_TRUE(same_bits(got.x, want.x));
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_EQ(got.samples_used, want.samples_used);
  EXPECT_EQ(got.gradient_evaluations, want.gradient_evaluations);
  EXPECT_EQ(got.diagnostics.clipped_o1 + got.diagnostics.clipped_o2,
            want.diagnostics.clipped_o1 + want.diagnostics.clipped_o2);
  EXPECT_EQ(got.termination, want.termination);
}

TEST(StreamedRun, GivesTheBitsOfALoadedRunInFileOrder) {
  const std::string path = temp_path("same.dpsr");
  for (bool sparse : {false, true}) {
    for (RecordValueType type : {RecordValueType::kFloat64, RecordValueType::kFloat32}) {
      RecordWriteOptions w;
      w.values = type;
      write_record_file(testing::run_data(sparse), path, w);
      const Dataset loaded = load_record_file(path);
      const RecordFile file(path);
      const auto model = make_model("logistic", loaded.cols());
      const Vec x0 = Vec::Constant(static_cast<Eigen::Index>(model->dim()), 0.05);
      for (const std::string& algo : testing::every_algorithm()) {
        SCOPED_TRACE(algo + (sparse ? " sparse " : " dense ") + record_value_type_name(type));
        // Until the records run out, and a short run that stops first.
        for (Index steps : {Index{0}, Index{7}}) {
          RunOptions o = testing::short_run(algo, steps);
          o.sample_order = SampleOrder::kFile;
          const Summary want = minimize(*model, loaded, x0, o);
          const Summary got = minimize(*model, file, x0, o);
          ASSERT_GT(want.steps, 0u);
          expect_same_run(got, want);
          EXPECT_EQ(got.sample_order, "file");
          o.sample_order.reset();  // a streamed run's order is the file's anyway
          expect_same_run(minimize(*model, file, x0, o), want);
        }
      }
    }
  }
  std::remove(path.c_str());
}

TEST(StreamedRun, TheEstimateOfGAndMTakesTheFilesFirstRecordsAsALoadedRunDoes) {
  const std::string path = temp_path("estimate.dpsr");
  write_record_file(testing::run_data(false), path);
  const Dataset loaded = load_record_file(path);
  const auto model = make_model("logistic", loaded.cols());
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
  for (const std::string& algo : testing::every_algorithm()) {
    if (!algorithm_info(parse_algorithm(algo)).is_private) continue;
    SCOPED_TRACE(algo);
    RunOptions o = testing::short_run(algo, 0);
    o.estimate.G = o.estimate.M = true;  // --G auto --M auto
    o.sample_order = SampleOrder::kFile;
    const Summary want = minimize(*model, loaded, x0, o);
    const Summary got = minimize(*model, RecordFile(path), x0, o);
    ASSERT_TRUE(want.estimate.has_value());
    ASSERT_GT(want.reserved_records, 0u);
    EXPECT_EQ(got.reserved_records, want.reserved_records);
    EXPECT_EQ(got.constants.G, want.constants.G);
    EXPECT_EQ(got.constants.M, want.constants.M);
    expect_same_run(got, want);
  }
  std::remove(path.c_str());
}

TEST(StreamedRun, SeveralPassesReadTheFileAgain) {
  const std::string path = temp_path("passes.dpsr");
  int tried = 0;
  for (bool sparse : {false, true}) {  // the ring and the blocks rewind
    write_record_file(testing::run_data(sparse), path);
    const Dataset loaded = load_record_file(path);
    const auto model = make_model("logistic", loaded.cols());
    const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
    for (const std::string& algo : testing::every_algorithm()) {
      RunOptions o = testing::short_run(algo, 0);
      if (!(algorithm_info(o.algorithm).knobs & kKnobEpochs)) continue;
      o.epochs = 3;
      if (algorithm_info(o.algorithm).knobs & kKnobSampling) o.sampling = Sampling::kOrder;
      if (o.poisson()) continue;  // Poisson epochs: refused for streams
      SCOPED_TRACE(algo + (sparse ? " sparse" : " dense"));
      o.sample_order = SampleOrder::kFile;
      const Summary want = minimize(*model, loaded, x0, o);
      const Summary got = minimize(*model, RecordFile(path), x0, o);
      EXPECT_GT(want.gradient_evaluations.value_or(0), 2 * loaded.rows()) << "more than two passes";
      expect_same_run(got, want);
      ++tried;
    }
  }
  EXPECT_GE(tried, 2) << "an algorithm of several passes";
  std::remove(path.c_str());
}

TEST(StreamedRun, AShuffledFileStreamsAsTheSeedsOrderOfTheRecords) {
  const std::string path = temp_path("shuffled.dpsr");
  const Dataset data = testing::run_data(false);
  RecordWriteOptions w;
  w.shuffle_seed = 21;  // short_run's seed
  write_record_file(data, path, w);
  const auto model = make_model("logistic", data.cols());
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
  for (const char* algo : {"spider-tree-adaptive", "dpsgd"}) {
    SCOPED_TRACE(algo);
    const RunOptions o = testing::short_run(algo, 0);
    expect_same_run(minimize(*model, RecordFile(path), x0, o), minimize(*model, data, x0, o));
  }
  std::remove(path.c_str());
}

// A record file of n records of 100 features in blocks of 1000 whose record
// `bad` is changed by edit(label, features).
std::string file_with_bad_record(Index n, Index bad, const std::function<void(double*, double*)>& edit) {
  const std::string path = temp_path("bad.dpsr");
  RecordWriteOptions w;
  w.block_records = 1000;
  write_record_file(testing::make_test_data(n, 100, testing::Labels::kBinary, false, 40), path, w);
  std::vector<char> b;
  {
    std::ifstream in(path, std::ios::binary);
    b.assign(std::istreambuf_iterator<char>(in), {});
  }
  char* block = b.data() + 128 + (bad / 1000) * 1000 * (8 + 100 * 8);
  char* label_at = block + (bad % 1000) * 8;
  char* row = block + 1000 * 8 + (bad % 1000) * 100 * 8;
  double label, features[100];
  std::memcpy(&label, label_at, 8);
  std::memcpy(features, row, sizeof features);
  edit(&label, features);
  std::memcpy(label_at, &label, 8);
  std::memcpy(row, features, sizeof features);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(b.data(), static_cast<std::streamsize>(b.size()));
  return path;
}

// A single-process streamed run checks each record as it first reads it (no
// validation pass first): a bad record ends the run with one error naming it,
// and no summary, wherever it lies (in a batch, among the estimate's records,
// after where the run stops). dpsgd on batches of 150: step k reads records
// [150 (k - 1), 150 k), and on_step is called before every step's batch.
TEST(StreamedRun, BadRecordsEndTheRunWithoutASummaryWhereverTheyLie) {
  const auto model = make_model("logistic", 100);
  const Vec x0 = Vec::Zero(100);
  RunOptions o = testing::short_run("dpsgd", 0);
  int steps_seen = 0;
  o.on_step = [&](const Iteration&) { return ++steps_seen, true; };
  const auto refused = [&](const std::string& path, const RunOptions& options, const std::string& says) {
    steps_seen = 0;
    EXPECT_CONTAINS(testing::error_of([&] { minimize(*model, RecordFile(path), x0, options); }), says);
    std::remove(path.c_str());
  };
  // Read ahead by the stream's reader: the NaN ends the run at the batch
  // that holds it, [10950, 11100), step 74.
  refused(file_with_bad_record(12000, 11000, [](double*, double* z) { z[7] = std::nan(""); }), o,
          "record 11000 (0-based), feature 7 is nan");
  EXPECT_EQ(steps_seen, 74) << "the checks go with the run's one read of the file";
  refused(file_with_bad_record(12000, 11500, [](double*, double* z) { z[0] = -HUGE_VAL; }), o,
          "record 11500 (0-based), feature 0 is -inf");
  // A label is checked on the batch that holds it, [11400, 11550): step 77
  // (the file's header still claims the label range [0, 1]; one that says
  // [0, 2] is refused before the run: HeaderLabelRangeOutsideTheModelIsRefusedFirst).
  refused(file_with_bad_record(12000, 11500, [](double* y, double*) { *y = 2; }), o,
          "a record's label is not 0, 1, -1 or +1");
  EXPECT_EQ(steps_seen, 77);
  // After a run that stops at 7 steps: the records it did not read are checked before it returns.
  RunOptions short_one = o;
  short_one.max_steps = 7;
  refused(file_with_bad_record(12000, 11999, [](double* y, double*) { *y = 0.5; }), short_one,
          "a record's label is not 0, 1, -1 or +1");
  EXPECT_EQ(steps_seen, 7);
  refused(file_with_bad_record(12000, 11999, [](double*, double* z) { z[99] = HUGE_VAL; }), short_one,
          "record 11999 (0-based), feature 99 is inf");
  // Among the records of the estimate of G (the first min(20000, max(min(500, n/10), n/50)) = 500), before it.
  RunOptions estimated = o;
  estimated.estimate.G = true;
  refused(file_with_bad_record(12000, 100, [](double* y, double*) { *y = 3; }), estimated,
          "a record's label is not 0, 1, -1 or +1");
  EXPECT_EQ(steps_seen, 0);
  // Several passes (spider-mf-adaptive): the first pass checks what it reads, the rest after the run.
  RunOptions passes = testing::short_run("spider-mf-adaptive", 0);
  passes.epochs = 2;
  passes.sampling = Sampling::kOrder;
  passes.batch_size = 170;  // 70 steps a pass read records [0, 11900)
  refused(file_with_bad_record(12000, 11990, [](double* y, double*) { *y = -2; }), passes,
          "a record's label is not 0, 1, -1 or +1");
}

// The header's label range (written from the records) against the model's
// label set, before any noise: a label outside it is refused in words that
// name no record, wherever it lies, and the run takes no step.
TEST(StreamedRun, HeaderLabelRangeOutsideTheModelIsRefusedFirst) {
  const std::string path = temp_path("labels.dpsr");
  const auto model = make_model("logistic", 12);
  RunOptions o = testing::short_run("dpsgd", 0);
  int steps_seen = 0;
  o.on_step = [&](const Iteration&) { return ++steps_seen, true; };
  std::string said;
  for (const Index at : {Index{0}, Index{499}}) {
    Dataset data = testing::run_data(false, 500);
    Vec labels = data.labels();
    labels[static_cast<Eigen::Index>(at)] = 7;
    write_record_file(Dataset(RowMatrix(data.dense()), std::move(labels)), path);
    const std::string message = testing::error_of([&] { minimize(*model, RecordFile(path), Vec::Zero(12), o); });
    EXPECT_CONTAINS(message, "logistic: a record's label is not 0, 1, -1 or +1");
    if (!said.empty()) EXPECT_EQ(message, said);
    said = message;
    EXPECT_EQ(steps_seen, 0);
  }
  std::remove(path.c_str());
}

TEST(StreamedRun, RefusesWhatCannotStream) {
  const std::string path = temp_path("refuse.dpsr");
  write_record_file(testing::run_data(false, 500), path);
  const auto model = make_model("logistic", 12);
  RunOptions o = testing::short_run("dpsgd");
  o.epochs = 1;
  EXPECT_CONTAINS(testing::error_of([&] { minimize(*model, RecordFile(path), Vec::Zero(12), o); }),
                  "a streamed run is single-pass");
  o = testing::short_run("dpsgd");
  o.sample_order = SampleOrder::kSeed;
  EXPECT_CONTAINS(testing::error_of([&] { minimize(*model, RecordFile(path), Vec::Zero(12), o); }),
                  "in the file's order");
  const auto other = make_model("logistic", 13);
  EXPECT_CONTAINS(
      testing::error_of([&] { minimize(*other, RecordFile(path), Vec::Zero(13), testing::short_run("dpsgd")); }),
      "the data have 12 features per record, expected 13");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dpsosp
