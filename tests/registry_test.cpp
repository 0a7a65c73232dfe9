// The algorithm table (algorithm.hpp, optimizers/registry.hpp): names,
// option checks in the library (the CLI and Python use the same words), and
// an algorithm added by one row, as an extension would be.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
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

namespace dpsosp {
namespace {

// A number of the figures' JSON as a double (null: NaN).
double figure(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : std::nan("");
}

TEST(MechanismTable, EveryKindHasOneRowWhosePrivacyFormReproducesIt) {
  const std::vector<MechanismKind> kinds = {MechanismKind::kNone,
                                            MechanismKind::kTree,
                                            MechanismKind::kGaussian,
                                            MechanismKind::kPoissonGaussian,
                                            MechanismKind::kMatrixFactorization,
                                            MechanismKind::kBandedPoisson};
  ASSERT_EQ(mechanism_table().size(), kinds.size());
  std::set<std::string> names, forms;
  for (const PrivacyFormInfo& f : privacy_form_table()) forms.insert(f.name);
  for (MechanismKind kind : kinds) {
    const MechanismInfo& row = mechanism_info(kind);
    EXPECT_EQ(row.kind, kind);
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    ASSERT_NE(row.accounting, nullptr) << row.name;
    EXPECT_EQ(mechanism_name(kind), row.name);
    // Every private mechanism's guarantee is reproduced by a privacy form.
    if (kind != MechanismKind::kNone) EXPECT_EQ(forms.count(row.privacy_form), 1u) << row.name;
  }
  // The Gaussian mechanism's row says the tree form (phases of one release)
  // reproduces it, and the Poisson row the Poisson form: their records' epsilon.
  const PrivacyTarget target{1.0, 1e-6};
  const PrivacyRecord gauss = make_gaussian_mechanism(3, testing::test_noise_key(), target, 0.5)->account();
  const nlohmann::json tree =
      privacy_figures({{"noise_multiplier", std::to_string(gauss.noise_multiplier)}, {"steps", "1"}, {"delta", "1e-6"}},
                      FrontEnd::kCli);
  EXPECT_EQ(mechanism_info(gauss.mechanism).privacy_form, tree["form"]);
  EXPECT_NEAR(figure(tree, "epsilon_gdp"), gauss.epsilon, 1e-5);
  const PrivacyRecord poisson =
      make_poisson_gaussian_mechanism(3, testing::test_noise_key(), 1.5, 0.01, 200, {3.0, 1e-6})->account();
  char z[40];
  std::snprintf(z, sizeof z, "%.17g", poisson.noise_multiplier);
  const nlohmann::json figures = privacy_figures(
      {{"noise_multiplier", z}, {"steps", "200"}, {"delta", "1e-6"}, {"sampling_rate", "0.01"}}, FrontEnd::kCli);
  EXPECT_EQ(mechanism_info(poisson.mechanism).privacy_form, "poisson");
  EXPECT_NEAR(figure(figures, "epsilon_pld"), poisson.epsilon, 1e-9);
  EXPECT_EQ(poisson.accounting(), "pld-poisson");
  EXPECT_EQ(gauss.accounting(), "gdp-gaussian");
}

TEST(AccountantTable, RowsNameTheirFormsAndTheRunsChoices) {
  std::set<std::string> forms, names;
  for (const PrivacyFormInfo& f : privacy_form_table()) forms.insert(f.name);
  std::vector<std::string> run_choices;
  for (const AccountantInfo& a : accountant_table()) {
    EXPECT_TRUE(names.insert(a.name).second) << a.name;
    EXPECT_EQ(&accountant_info(a.name), &a);
    EXPECT_FALSE(a.forms.empty()) << a.name;
    for (const std::string& f : a.forms) EXPECT_EQ(forms.count(f), 1u) << a.name << " " << f;
    if (a.run) {
      EXPECT_EQ(accountant_name(*a.run), a.name);
      run_choices.push_back(a.name);
    }
  }
  EXPECT_EQ(accountant_name(Accountant::kPld), "pld");
  EXPECT_EQ(accountant_name(Accountant::kRdp), "rdp");
  for (const OptionSpec& s : run_option_table())
    if (s.key == "accountant") EXPECT_EQ(s.choices, run_choices);
  // An accountant asked of a form it has no figures for is refused in the front end's words.
  const std::map<std::string, std::string> mf = {
      {"noise_multiplier", "1"}, {"steps", "100"}, {"delta", "1e-6"}, {"mechanism", "mf"}, {"accountant", "rdp"}};
  try {
    privacy_figures(mf, FrontEnd::kPython);
    ADD_FAILURE() << "rdp of the mf form was not refused";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "accountant rdp: the mf form has no rdp figures; it is accounted by gdp");
  }
  // Each accountant asked for is the figure stated as "epsilon".
  for (const AccountantInfo& a : accountant_table()) {
    std::map<std::string, std::string> q = {
        {"noise_multiplier", "3"}, {"steps", "64,32"}, {"delta", "1e-6"}, {"accountant", a.name}};
    const nlohmann::json j = privacy_figures(q, FrontEnd::kCli);
    EXPECT_EQ(figure(j, "epsilon"), figure(j, ("epsilon_" + a.name).c_str())) << a.name;
  }
}

}  // namespace
}  // namespace dpsosp

namespace dpsosp {
namespace {

TEST(PrivacyForms, TargetEpsilonCalibratesEachFormToItsTarget) {
  // Each form's calibration gives the noise multiplier whose figure, by the
  // accountant it names, is the target (never above it); the same question
  // asked with that multiplier gives the same figures.
  const std::vector<std::map<std::string, std::string>> questions = {
      {{"steps", "1000,500,256"}},
      {{"steps", "1000,500,256"}, {"accountant", "rdp"}},
      {{"steps", "64"}, {"adjacency", "zero-out"}},
      {{"steps", "256"}, {"mechanism", "mf"}, {"period", "64"}},
      {{"steps", "1000"}, {"sampling_rate", "0.01"}},
      {{"steps", "1000"}, {"sampling_rate", "0.01"}, {"adjacency", "replace-one"}},
      {{"steps", "1000"}, {"sampling_rate", "0.01"}, {"accountant", "rdp"}},
  };
  for (std::map<std::string, std::string> q : questions) {
    q["delta"] = "1e-5";
    std::map<std::string, std::string> calibrated = q;
    calibrated["target_epsilon"] = "2";
    const nlohmann::json j = privacy_figures(calibrated, FrontEnd::kCli);
    const std::string by = j["calibrated_by"].get<std::string>();
    const double eps = figure(j, ("epsilon_" + by).c_str());
    EXPECT_LE(eps, 2 * (1 + 1e-9)) << j.dump();
    EXPECT_GE(eps, 2 * (1 - 1e-3)) << j.dump();
    char z[40];
    std::snprintf(z, sizeof z, "%.17g", j["noise_multiplier"].get<double>());
    q["noise_multiplier"] = z;
    const nlohmann::json again = privacy_figures(q, FrontEnd::kCli);
    EXPECT_NEAR(figure(again, ("epsilon_" + by).c_str()), eps, 1e-9 * eps) << again.dump();
  }
  const std::map<std::string, std::string> both = {
      {"noise_multiplier", "1"}, {"target_epsilon", "1"}, {"steps", "10"}, {"delta", "1e-5"}};
  try {
    privacy_figures(both, FrontEnd::kCli);
    ADD_FAILURE() << "a noise multiplier and a target were both taken";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--noise-multiplier: give it or --target-epsilon (the noise multiplier for a target), one of the two");
  }
}

}  // namespace
}  // namespace dpsosp
