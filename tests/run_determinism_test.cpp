// Whole runs of every algorithm give the same bits alone and shared between
// threads, and with the records stored in a sample order (the speed work
// changes no bits; the recorded checksums are in perf_determinism_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"
#include "test_threads.hpp"

namespace dpsosp {
namespace {

using testing::Labels;

// The options of the whole-run tests below: algorithm `algo` (epochs > 0:
// dpsgd with Poisson sampling), epsilon 2 for the private ones.
RunOptions whole_run_options(const std::string& algo, double epochs, std::uint64_t seed, double G, double M,
                             Index max_steps) {
  RunOptions o;
  o.algorithm = parse_algorithm(algo);
  if (is_private_algorithm(o.algorithm)) o.privacy = PrivacyTarget{2.0, 1e-6};
  o.seed = seed;
  o.noise_key = testing::test_noise_key();
  o.constants.G = G;
  o.constants.M = M;
  o.constants.rho = 6;
  if (epochs > 0) o.epochs = epochs;
  if (algo != "spider-tree-adaptive") o.batch_size = 300;
  o.max_steps = max_steps;
  return o;
}

TEST(PerfDeterminism, EveryAlgorithmGivesTheSameBitsAloneAndShared) {
  const SyntheticProblem pr = make_synthetic("phase-retrieval:n=60000,d=8,seed=3");
  const auto pr_model = make_model("phase-retrieval", 8);
  const Dataset mix = testing::make_test_data(20000, 29, Labels::kClasses, false, 4);
  ModelOptions classes;
  classes.classes = 3;
  classes.hidden = 6;
  const auto softmax = make_model("softmax", 29, classes, &mix);
  const auto mlp = make_model("mlp", 29, classes, &mix);
  struct Problem {
    const Model* model;
    const Dataset* data;
    double G, M;
  };
  for (const Problem& p :
       {Problem{pr_model.get(), &pr.data, 6, 20}, Problem{softmax.get(), &mix, 1, 4}, Problem{mlp.get(), &mix, 1, 4}}) {
    for (const std::string& algo : algorithm_names()) {
      for (double epochs : {0.0, 1.0}) {
        if (epochs > 0 && algo != "dpsgd") continue;
        SCOPED_TRACE(p.model->name() + " " + algo + (epochs > 0 ? " poisson" : ""));
        RunOptions o = whole_run_options(algo, epochs, 17, p.G, p.M, 200);
        const Vec x0 = Vec::Constant(static_cast<Eigen::Index>(p.model->dim()), 0.01);
        Summary alone, shared;
        {
          testing::ForcedThreads forced(1, 1);
          o.threads = 1;
          alone = minimize(*p.model, *p.data, x0, o);
        }
        {
          testing::ForcedThreads forced(2, 2);
          o.threads = 2;
          shared = minimize(*p.model, *p.data, x0, o);
        }
        ASSERT_GT(alone.steps, 0u);
        EXPECT_EQ(alone.steps, shared.steps);
        EXPECT_EQ(alone.gradient_evaluations, shared.gradient_evaluations);
        EXPECT_EQ(alone.diagnostics.clipped_o1 + alone.diagnostics.clipped_o2,
                  shared.diagnostics.clipped_o1 + shared.diagnostics.clipped_o2);
        EXPECT_EQ(alone.privacy.epsilon, shared.privacy.epsilon);
        ASSERT_EQ(alone.x.size(), shared.x.size());
        EXPECT_EQ(
            std::memcmp(alone.x.data(), shared.x.data(), sizeof(double) * static_cast<std::size_t>(alone.x.size())), 0);
      }
    }
  }
}

// Whole runs on records stored in a sample order (the run's own seed, as
// `dpsosp run --synthetic` stores them, or another seed) give the bits of the
// same runs on the records as built, for every algorithm, one thread or two.
TEST(PerfDeterminism, EveryAlgorithmGivesTheSameBitsWithRecordsInASampleOrder) {
  constexpr std::uint64_t kSeed = 17;
  const std::string spec = "phase-retrieval:n=40000,d=8,seed=3";
  const SyntheticProblem pr = make_synthetic(spec);
  const SyntheticProblem pr_stored = make_synthetic(spec, kSeed);
  const auto pr_model = make_model("phase-retrieval", 8);
  const Dataset mix = testing::make_test_data(12000, 29, Labels::kClasses, false, 4);
  Dataset mix_other = mix;
  mix_other.store_in_sample_order(kSeed + 1);
  ModelOptions classes;
  classes.classes = 3;
  classes.hidden = 6;
  const auto mlp = make_model("mlp", 29, classes, &mix);
  const Dataset sparse = testing::make_test_data(12000, 37, Labels::kBinary, true, 5);
  Dataset sparse_stored = sparse;
  sparse_stored.store_in_sample_order(kSeed);
  const auto logistic = make_model("logistic", 37);
  struct Problem {
    const Model* model;
    const Dataset* plain;
    const Dataset* stored;
    double G, M;
  };
  for (const Problem& p :
       {Problem{pr_model.get(), &pr.data, &pr_stored.data, 6, 20}, Problem{mlp.get(), &mix, &mix_other, 1, 4},
        Problem{logistic.get(), &sparse, &sparse_stored, 1, 4}}) {
    for (const std::string& algo : algorithm_names()) {
      for (double epochs : {0.0, 1.0}) {
        if (epochs > 0 && algo != "dpsgd") continue;
        SCOPED_TRACE(p.model->name() + " " + algo + (epochs > 0 ? " poisson" : ""));
        RunOptions o = whole_run_options(algo, epochs, kSeed, p.G, p.M, 150);
        const Vec x0 = Vec::Constant(static_cast<Eigen::Index>(p.model->dim()), 0.01);
        for (const int threads : {1, 2}) {
          testing::ForcedThreads forced(threads, threads);
          o.threads = threads;
          const Summary plain = minimize(*p.model, *p.plain, x0, o);
          const Summary stored = minimize(*p.model, *p.stored, x0, o);
          ASSERT_GT(plain.steps, 0u);
          EXPECT_EQ(plain.steps, stored.steps) << "threads " << threads;
          EXPECT_EQ(plain.samples_used, stored.samples_used);
          EXPECT_EQ(plain.gradient_evaluations, stored.gradient_evaluations);
          EXPECT_EQ(plain.diagnostics.clipped_o1 + plain.diagnostics.clipped_o2,
                    stored.diagnostics.clipped_o1 + stored.diagnostics.clipped_o2);
          ASSERT_EQ(plain.x.size(), stored.x.size());
          EXPECT_EQ(
              std::memcmp(plain.x.data(), stored.x.data(), sizeof(double) * static_cast<std::size_t>(plain.x.size())),
              0)
              << "threads " << threads;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dpsosp
