// What a user hits at the edges of a run (minimize): defaults that fit small
// data, a run that cannot take a step, and the warnings of a run that took few
// steps or left most records unused.
#include <gtest/gtest.h>

#include <string>

#include "dpsosp/dpsosp.hpp"
#include "optimizers/registry.hpp"
#include "test_errors.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

RunOptions private_run(Algorithm a) {
  RunOptions o;
  o.algorithm = a;
  o.privacy = PrivacyTarget{1.0, 1e-6};
  o.seed = 1;
  o.noise_key = testing::test_noise_key();
  return o;
}

TEST(RunEdges, DpsgdDefaultBatchIsATenthOfSmallData) {
  RunOptions o = private_run(Algorithm::kDpsgd);
  EXPECT_EQ(o.sgd_batch_size(124), 12u);
  EXPECT_EQ(o.sgd_batch_size(5), 1u);
  EXPECT_EQ(o.sgd_batch_size(1000000), 256u);
  o.batch_size = 7;
  EXPECT_EQ(o.sgd_batch_size(124), 7u);
  // 124 records: ten steps of 12 (the records of an 11th batch are not there).
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=124,d=3,seed=1");
  const auto model = make_model("logistic", p.data.cols());
  o.batch_size.reset();
  const Summary s = minimize(*model, p.data, Vec::Zero(3), o);
  EXPECT_EQ(s.steps, 10u);
  EXPECT_EQ(s.samples_used, 120u);
  EXPECT_EQ(s.params.at("batch_size"), 12.0);
  EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
}

TEST(RunEdges, FewStepsAndUnusedRecordsAreWarnedOf) {
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=300,d=3,seed=1");
  const auto model = make_model("logistic", p.data.cols());
  RunOptions o = private_run(Algorithm::kDpsgd);
  o.batch_size = 200;  // one step, 200 of 300 records: few steps, not under half
  Summary s = minimize(*model, p.data, Vec::Zero(3), o);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_CONTAINS(s.warnings[0], "dpsgd took 1 step, fewer than 10");
  o.batch_size = 140;  // two steps, 280 records
  s = minimize(*model, p.data, Vec::Zero(3), o);
  ASSERT_EQ(s.warnings.size(), 1u);
  o.batch_size = 101;  // two steps... of 202 records: still more than half
  s = minimize(*model, p.data, Vec::Zero(3), o);
  EXPECT_EQ(s.warnings.size(), 1u);
  // A run cut short on purpose is as asked: no warning.
  o.batch_size = 10;
  o.max_steps = 3;
  s = minimize(*model, p.data, Vec::Zero(3), o);
  EXPECT_EQ(s.termination, Termination::kMaxSteps);
  EXPECT_TRUE(s.warnings.empty());
}

// spider-tree-adaptive with a small epsilon on 300 records: one O1 batch of
// 54 and nothing more fits (the O2 batches it then asks for are larger).
TEST(RunEdges, UnderHalfTheRecordsIsWarnedOf) {
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=300,d=50,seed=1");
  const auto model = make_model("logistic", p.data.cols());
  RunOptions o = private_run(Algorithm::kSpiderTreeAdaptive);
  o.privacy->epsilon = 0.1;
  const Summary s = minimize(*model, p.data, Vec::Zero(50), o);
  ASSERT_LT(2 * s.samples_used, 300u);
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_CONTAINS(s.warnings[1], "of the 300 records, under half");
}

// An algorithm that ends without a step: minimize refuses to return it as a
// result (SPEC section 7: too few records for one batch is an error).
void run_nothing(const Model&, const Dataset&, const RunOptions&, const NoiseKey&, Summary& s) {
  s.termination = Termination::kDataExhausted;
}

TEST(RunEdges, ARunThatTakesNoStepIsAnError) {
  detail::AlgorithmRow row;
  row.info = {Algorithm{}, "no-step-toy", "a toy that never fits a batch", false, true, MechanismKind::kNone, 0, 0};
  row.run = run_nothing;
  const Algorithm toy = detail::register_algorithm(row);
  const SyntheticProblem p = make_synthetic("gaussian-mixture:n=50,d=3,seed=1");
  const auto model = make_model("logistic", p.data.cols());
  RunOptions o;
  o.algorithm = toy;
  o.seed = 1;
  EXPECT_CONTAINS(testing::error_of([&] { minimize(*model, p.data, Vec::Zero(3), o); }),
                  "no-step-toy could not take one step: its first batch does not fit in the 50 records");
}

}  // namespace
}  // namespace dpsosp
