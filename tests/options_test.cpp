// The option table and RunRequest (options.hpp): one rule per option, its
// error in each front end's words, the defaults both front ends share.
#include <gtest/gtest.h>

#include <set>

#include "dpsosp/algorithm.hpp"
#include "dpsosp/options.hpp"

namespace dpsosp {
namespace {

std::string refusal(const OptionValues& v, FrontEnd fe, const std::map<std::string, std::string>& overrides = {}) {
  try {
    RunRequest r(v, overrides, fe, false);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OptionTable, EveryKnobIsAnOptionAndEveryOptionHasWords) {
  std::set<std::string> keys, flags;
  for (const OptionSpec& s : run_option_table()) {
    EXPECT_TRUE(keys.insert(s.key).second) << s.key;
    EXPECT_TRUE(flags.insert(s.flag).second) << s.flag;
    EXPECT_EQ(s.flag.rfind("--", 0), 0u) << s.flag;
    EXPECT_FALSE(s.help.empty()) << s.key;
    EXPECT_FALSE(option_rule_text(s).empty()) << s.key;
    EXPECT_EQ(option_word(s.key, FrontEnd::kCli), s.flag);
    EXPECT_EQ(option_word(s.key, FrontEnd::kPython), s.key);
  }
  // Every option an algorithm may not read is in the table, with that knob.
  unsigned knobs = 0;
  for (const OptionSpec& s : run_option_table()) knobs |= s.knob;
  unsigned read = 0;
  for (const AlgorithmInfo& info : algorithm_table()) read |= info.knobs;
  EXPECT_EQ(knobs, read);
  EXPECT_EQ(option_word("overrides.b", FrontEnd::kCli), "--set b");
  EXPECT_THROW(run_option("batchsize"), Error);
}

TEST(RunRequest, TheDefaultsAreTheDefaultRun) {
  const RunRequest r({}, {}, FrontEnd::kPython, false);
  const RunOptions& o = r.options;
  EXPECT_EQ(algorithm_name(o.algorithm), "spider-mf-adaptive");
  ASSERT_TRUE(o.privacy.has_value());
  EXPECT_EQ(o.privacy->epsilon, 1.0);
  EXPECT_EQ(o.privacy->delta, 1e-6);
  EXPECT_TRUE(o.estimate.G && o.estimate.M);
  EXPECT_EQ(o.sampling, Sampling::kPoisson);  // choose_default_sampling
  EXPECT_TRUE(o.default_passes);
  EXPECT_EQ(r.scale, "auto");
  EXPECT_FALSE(r.scale_share.has_value());  // auto: the public rule (automatic_scale_share)
  EXPECT_TRUE(r.scaling("softmax", 4, true, false, {}, std::nullopt).automatic_share);
  const RunRequest given({{"scale_share", "0.3"}}, {}, FrontEnd::kCli, false);
  const ScalingOptions so = given.scaling("softmax", 4, true, false, {}, std::nullopt);
  EXPECT_FALSE(so.automatic_share);
  EXPECT_EQ(so.share, 0.3);
  // A non-private algorithm takes no target, and G = M = 1.
  const RunRequest sgd({{"algo", "sgd"}}, {}, FrontEnd::kCli, false);
  EXPECT_FALSE(sgd.options.privacy.has_value());
  EXPECT_FALSE(sgd.options.estimate.any());
  EXPECT_EQ(sgd.options.constants.G, 1.0);
}

TEST(RunRequest, OneRuleInEachFrontEndsWords) {
  const struct {
    OptionValues given;
    std::string cli, python;
  } cases[] = {
      {{{"epsilon", "-1"}},
       "--epsilon: expected a number > 0 (or inf), got '-1'",
       "epsilon: expected a number > 0 (or inf), got -1"},
      {{{"accountant", "gdp"}},
       "--accountant: expected pld or rdp, got 'gdp'",
       "accountant: expected pld or rdp, got 'gdp'"},
      {{{"algo", "dpsgd"}, {"tail", "0.5"}},
       "--tail: applies to spider-mf-adaptive, not dpsgd",
       "tail: applies to spider-mf-adaptive, not dpsgd"},
      {{{"algo", "spider"}, {"epsilon", "1"}},
       "--epsilon = 1: spider is non-private",
       "epsilon = 1: spider is non-private"},
      {{{"tail", "1"}}, "--tail = 1: must lie in [0, 1)", "tail = 1: must lie in [0, 1)"},
      {{{"algo", "sgd"}, {"G", "auto"}},
       "--G auto: the constants are estimated privately",
       "G auto: the constants are estimated privately"},
      {{{"sampling", "order"}, {"order", "file"}, {"epochs", "2"}, {"bands", "4"}},
       "--bands = 4: applies to spider-mf-adaptive with sampling = poisson",
       "bands = 4: applies to spider-mf-adaptive with sampling = poisson"},
      {{{"batch_size", "0"}},
       "--batch-size: expected an integer in [1, 9007199254740992], got '0'",
       "batch_size: expected an integer in [1, 9007199254740992], got 0"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(refusal(c.given, FrontEnd::kCli).rfind(c.cli, 0), 0u) << refusal(c.given, FrontEnd::kCli);
    EXPECT_EQ(refusal(c.given, FrontEnd::kPython).rfind(c.python, 0), 0u) << refusal(c.given, FrontEnd::kPython);
  }
  EXPECT_EQ(refusal({{"algo", "dpsgd"}}, FrontEnd::kCli, {{"sigma", "1"}}).rfind("--set sigma: dpsgd reads only", 0),
            0u);
  EXPECT_EQ(refusal({}, FrontEnd::kPython, {{"gamma", "1"}}).rfind("overrides: unknown parameter 'gamma'", 0), 0u);
  // No C++ names in what a user reads.
  for (const auto& c : cases) {
    for (const FrontEnd fe : {FrontEnd::kCli, FrontEnd::kPython}) {
      const std::string m = refusal(c.given, fe);
      EXPECT_EQ(m.find("RunOptions"), std::string::npos) << m;
      EXPECT_EQ(m.find("privacy."), std::string::npos) << m;
    }
  }
}

TEST(RunRequest, TheRecordsCountRulesSayWhatWasGiven) {
  const RunRequest defaults({}, {}, FrontEnd::kCli, false);
  try {
    defaults.check_records(500000);  // 1e-6 is not below 1/n? it is: no error
  } catch (const Error& e) {
    ADD_FAILURE() << e.what();
  }
  const RunRequest given({{"delta", "0.01"}}, {}, FrontEnd::kPython, false);
  try {
    given.check_records(2000);
    ADD_FAILURE() << "delta 0.01 accepted for 2000 records";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("delta = 0.01: not below 1/n = 0.0005 for the 2000 records", 0), 0u)
        << e.what();
  }
  try {
    defaults.check_records(2000000);
    ADD_FAILURE() << "the default delta accepted for 2e6 records";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--delta (the default, 1e-6) is not below 1/n for the 2000000 records", 0),
              0u)
        << e.what();
  }
}

TEST(RunRequest, AStreamedRunRefusesWhatDrawsByIndex) {
  try {
    RunRequest r({{"epochs", "2"}}, {}, FrontEnd::kCli, true);
    ADD_FAILURE() << "a streamed Poisson run accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("give --sampling order"), std::string::npos) << e.what();
  }
  const RunRequest streamed({}, {}, FrontEnd::kCli, true);
  EXPECT_FALSE(streamed.options.poisson());  // the default run streams in order
}

}  // namespace
}  // namespace dpsosp
