// The algorithm table (algorithm.hpp, optimizers/registry.hpp): names,
// option checks in the library (the CLI and Python use the same words), and
// an algorithm added by one row, as an extension would be.
#include <gtest/gtest.h>

#include <string>

#include "dpsosp/dpsosp.hpp"
#include "optimizers/registry.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

std::string refusal(const RunOptions& o) {
  try {
    o.Validate();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AlgorithmTable, NamesParseAndEveryRowRuns) {
  const std::vector<AlgorithmInfo> table = algorithm_table();
  ASSERT_GE(table.size(), 6u);
  EXPECT_EQ(table[0].name, "spider-mf-adaptive");  // the default first
  EXPECT_EQ(RunOptions{}.algorithm, table[0].id);
  for (const AlgorithmInfo& info : table) {
    EXPECT_EQ(parse_algorithm(info.name), info.id);
    EXPECT_EQ(algorithm_name(info.id), info.name);
    EXPECT_EQ(is_private_algorithm(info.id), info.mechanism != MechanismKind::kNone);
    EXPECT_NE(detail::algorithm_row(info.id).run, nullptr);
  }
  EXPECT_THROW(parse_algorithm("adam"), Error);
}

// What the table says an algorithm does not read is refused, naming the field.
TEST(AlgorithmTable, ValidateRefusesWhatAnAlgorithmDoesNotRead) {
  RunOptions o;
  o.algorithm = Algorithm::kSpiderTreeAdaptive;
  o.privacy = PrivacyTarget{1.0, 1e-6};
  EXPECT_EQ(refusal(o), "");
  o.batch_size = 8;
  EXPECT_EQ(refusal(o).find("RunOptions: batch_size: applies to "), 0u) << refusal(o);
  EXPECT_NE(refusal(o).find("not spider-tree-adaptive"), std::string::npos);
  o.batch_size.reset();
  o.overrides.noise_multiplier = 2.0;
  o.overrides.sigma = 1.0;
  EXPECT_NE(refusal(o).find("give one"), std::string::npos) << refusal(o);
  o.overrides = {};
  o.algorithm = Algorithm::kDpsgd;
  o.overrides.sigma = 1.0;  // dpsgd has no tree
  EXPECT_EQ(refusal(o).find("RunOptions: overrides.sigma: dpsgd reads only noise_multiplier"), 0u) << refusal(o);
  o.overrides = {};
  o.alpha_scale = 2.0;
  EXPECT_NE(refusal(o).find("alpha_scale: applies to"), std::string::npos);
  o.alpha_scale.reset();
  o.privacy.reset();
  EXPECT_NE(refusal(o).find("privacy.epsilon: dpsgd is a private algorithm"), std::string::npos) << refusal(o);
  o.privacy = PrivacyTarget{std::numeric_limits<double>::infinity(), 1e-6};
  EXPECT_NE(refusal(o).find("needs a finite epsilon"), std::string::npos) << refusal(o);
  o.algorithm = Algorithm::kSgd;
  o.privacy = PrivacyTarget{1.0, 1e-6};
  EXPECT_NE(refusal(o).find("sgd is non-private"), std::string::npos) << refusal(o);
  o.privacy.reset();
  EXPECT_EQ(refusal(o), "");
  o.epochs = 2.0;
  EXPECT_NE(refusal(o).find("epochs: applies to spider-mf-adaptive, dpsgd, not sgd"), std::string::npos) << refusal(o);
}

// A toy algorithm added by one row: gradient descent on O1 batches with the
// Gaussian mechanism. The table, parsing, validation and minimize take it
// like a built-in one.
void run_toy(const Model& model, const Dataset& data, const RunOptions& o, const NoiseKey& key, Summary& s) {
  SamplePool pool(data, s.seed);
  GradientOracles oracles(model, data, pool);
  const Index batch = o.batch_size.value_or(100);
  const double clip = o.constants.G;
  const auto noise = make_gaussian_mechanism(model.dim(), key, *o.privacy, 2 * clip / static_cast<double>(batch));
  Vec released(model.dim());
  while (pool.remaining() >= batch && (o.max_steps == 0 || s.steps < o.max_steps)) {
    const OracleOutput g = oracles.o1(s.x, batch, clip);
    noise->release(g.value, true, 2 * clip / static_cast<double>(batch), released);
    s.x -= released / o.constants.M;
    ++s.steps;
  }
  s.samples_used = pool.used();
  s.termination = Termination::kDataExhausted;
  s.privacy = noise->account();
}

TEST(AlgorithmTable, OneRowAddsAnAlgorithm) {
  detail::AlgorithmRow row;
  row.info = {Algorithm{},    "toy-gd", "a toy: noisy gradient descent", true, false, MechanismKind::kGaussian,
              kKnobBatchSize, 0};
  row.run = run_toy;
  const Algorithm toy = detail::register_algorithm(row);
  EXPECT_EQ(parse_algorithm("toy-gd"), toy);
  EXPECT_EQ(algorithm_names().back(), "toy-gd");
  EXPECT_THROW(detail::register_algorithm(row), Error);  // the name is taken

  const SyntheticProblem p = make_synthetic("phase-retrieval:n=5000,d=4,seed=2");
  const auto model = make_model(p.model, p.data.cols());
  RunOptions o;
  o.algorithm = toy;
  o.privacy = PrivacyTarget{1.0, 1e-6};
  o.constants = {6, 20, 6, 1};
  o.seed = 1;
  o.noise_key = testing::test_noise_key();
  o.period = 3;  // not read by the toy
  EXPECT_THROW(minimize(*model, p.data, p.saddle, o), Error);
  o.period.reset();
  o.batch_size = 500;
  const Summary s = minimize(*model, p.data, p.saddle, o);
  EXPECT_EQ(s.algorithm, "toy-gd");
  EXPECT_EQ(s.steps, 10u);
  EXPECT_NEAR(s.privacy.epsilon, 1.0, 1e-9);
  EXPECT_TRUE(s.x.allFinite());
}

}  // namespace
}  // namespace dpsosp
