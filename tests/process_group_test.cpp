// Data-parallel runs (process_group.hpp) on a group of threads: every process
// ends with the bits of the single-process run, for any number of processes
// and threads, records in memory or streamed; the processes agree on a
// failure before any noise is drawn; a stop on one process stops all at the
// same step.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "run_cases.hpp"
#include "test_errors.hpp"
#include "test_process_group.hpp"

namespace dpsosp {
namespace {

using testing::run_group;
using testing::same_bits;

void expect_same_run(const Summary& got, const Summary& want) {
  EXPECT_TRUE(same_bits(got.x, want.x));
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_EQ(got.samples_used, want.samples_used);
  EXPECT_EQ(got.gradient_evaluations, want.gradient_evaluations);
  EXPECT_EQ(got.diagnostics.clipped_o1, want.diagnostics.clipped_o1);
  EXPECT_EQ(got.diagnostics.clipped_o2, want.diagnostics.clipped_o2);
  EXPECT_EQ(got.privacy.epsilon, want.privacy.epsilon);
  EXPECT_EQ(got.seed, want.seed);
}

TEST(ProcessGroup, EveryProcessEndsWithTheSingleProcessBits) {
  for (bool sparse : {false, true}) {
    const Dataset data = testing::run_data(sparse, 3000);
    const auto model = make_model("logistic", data.cols());
    const Vec x0 = Vec::Constant(static_cast<Eigen::Index>(model->dim()), 0.05);
    for (const std::string& algo : testing::every_algorithm()) {
      // One pass; Poisson sampling (dpsgd, epochs 0.2); two passes over the
      // sample order (spider-mf-adaptive, epochs 2).
      for (double epochs : {0.0, 0.2, 2.0}) {
        if (epochs > 0 && !(algorithm_info(parse_algorithm(algo)).knobs & kKnobEpochs)) continue;
        RunOptions o = testing::short_run(algo, epochs == 2 ? 0 : 60);
        if (epochs > 0) o.epochs = epochs;
        if (epochs > 0 && o.poisson() != (epochs < 1)) continue;  // each reads its own kind of epochs
        const Summary want = minimize(*model, data, x0, o);
        ASSERT_GT(want.steps, 0u);
        // One thread a process, and two for P = 3 (a chained share split
        // between threads).
        for (int p : {1, 2, 3, 4}) {
          for (int threads : {1, 2}) {
            if ((threads == 2) != (p == 3)) continue;
            SCOPED_TRACE(algo + (sparse ? " sparse" : " dense") + " epochs " + std::to_string(epochs) +
                         " P=" + std::to_string(p) + " threads " + std::to_string(threads));
            const auto runs = run_group<Summary>(p, [&](std::shared_ptr<ProcessGroup> g) {
              RunOptions mine = o;
              mine.process_group = g;
              mine.threads = threads;
              return minimize(*model, data, x0, mine);
            });
            for (const Summary& s : runs) {
              expect_same_run(s, want);
              EXPECT_EQ(s.processes, p);
            }
          }
        }
      }
    }
  }
}

TEST(ProcessGroup, TheEstimateOfGAndMIsTheSameOnEveryProcess) {
  const Dataset data = testing::run_data(false);
  const auto model = make_model("logistic", data.cols());
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
  for (const std::string& algo : testing::every_algorithm()) {
    if (!algorithm_info(parse_algorithm(algo)).is_private) continue;
    SCOPED_TRACE(algo);
    RunOptions o = testing::short_run(algo);
    o.estimate.G = o.estimate.M = true;  // --G auto --M auto
    const Summary want = minimize(*model, data, x0, o);
    ASSERT_TRUE(want.estimate.has_value());
    const auto runs = run_group<Summary>(3, [&](std::shared_ptr<ProcessGroup> g) {
      RunOptions mine = o;
      mine.process_group = g;
      return minimize(*model, data, x0, mine);
    });
    for (const Summary& s : runs) {
      expect_same_run(s, want);
      EXPECT_EQ(s.constants.G, want.constants.G);
    }
  }
}

TEST(ProcessGroup, StreamedSharesGiveTheLoadedRunsBits) {
  const std::string path = ::testing::TempDir() + "process_group_test_" + std::to_string(::getpid()) + ".dpsr";
  for (bool sparse : {false, true}) {
    write_record_file(testing::run_data(sparse), path);
    const Dataset loaded = load_record_file(path);
    const RecordFile file(path);
    const auto model = make_model("logistic", loaded.cols());
    const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
    for (const std::string& algo : {"spider-tree-adaptive", "dpsgd"}) {
      SCOPED_TRACE(std::string(algo) + (sparse ? " sparse" : " dense"));
      RunOptions o = testing::short_run(algo);
      o.sample_order = SampleOrder::kFile;
      const Summary want = minimize(*model, loaded, x0, o);
      for (int p : {2, 3}) {
        const auto runs = run_group<Summary>(p, [&](std::shared_ptr<ProcessGroup> g) {
          RunOptions mine = o;
          mine.process_group = g;
          return minimize(*model, file, x0, mine);
        });
        for (const Summary& s : runs) expect_same_run(s, want);
      }
    }
  }
  std::remove(path.c_str());
}

// What every process of a group of `p` threw (one message each).
std::vector<std::string> failures(int p, const std::function<Dataset(int)>& data_of) {
  const auto model = make_model("logistic", 12);
  const Vec x0 = Vec::Zero(12);
  return run_group<std::string>(p, [&](std::shared_ptr<ProcessGroup> g) {
    const Dataset data = data_of(g->rank());
    RunOptions o = testing::short_run("dpsgd");
    o.process_group = g;
    return testing::error_of([&] { minimize(*model, data, x0, o); });
  });
}

TEST(ProcessGroup, AProcessWithOtherRecordsFailsEveryProcessAlike) {
  const Dataset data = testing::run_data(false), other = testing::run_data(false, 4999);
  const auto got = failures(3, [&](int rank) { return rank == 2 ? other : data; });
  for (const std::string& m : got)
    EXPECT_EQ(m,
              "process 2 of 3: its records, start point or options differ from process 0's (every process "
              "must be given the same ones)");
}

TEST(ProcessGroup, AProcessWhoseChecksFailFailsEveryProcessWithItsMessage) {
  RowMatrix x = testing::run_data(false).dense();
  x(17, 3) = std::nan("");
  const Dataset bad(x, testing::run_data(false).labels()), good = testing::run_data(false);
  const auto got = failures(3, [&](int rank) { return rank >= 1 ? bad : good; });
  for (const std::string& m : got)
    EXPECT_EQ(m, "process 1 of 3: data: record 17 (0-based), feature 3 is nan; NaN and Inf are not allowed");
}

TEST(ProcessGroup, AStopOnOneProcessStopsEveryProcessAtTheSameStep) {
  const Dataset data = testing::run_data(false);
  const auto model = make_model("logistic", data.cols());
  std::atomic<bool> raised{true}, calm{false};
  const auto runs = run_group<Summary>(3, [&](std::shared_ptr<ProcessGroup> g) {
    RunOptions o = testing::short_run("spider-tree-adaptive");
    o.process_group = g;
    o.stop_flag = g->rank() == 1 ? &raised : &calm;
    return minimize(*model, data, Vec::Zero(12), o);
  });
  for (const Summary& s : runs) {
    EXPECT_EQ(s.steps, 1u);
    EXPECT_TRUE(s.interrupted());
    EXPECT_TRUE(same_bits(s.x, runs[0].x));
  }
}

}  // namespace
}  // namespace dpsosp
