// An interrupted run (Ctrl-C: RunOptions::stop_flag) releases the first steps
// of the planned run and nothing else: its iterates are bit for bit the first
// ones of the uninterrupted run with the same seed and key, and its guarantee
// is the planned one. So (T, the first T releases) is a post-processing of
// the planned releases, which the guarantee covers (docs/privacy-accounting.md
// section 7, "Interrupted runs").
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"
#include "test_phase_retrieval.hpp"

namespace dpsosp {
namespace {

struct Recorded {
  Summary summary;
  std::vector<Vec> iterates;
};

// `stop_after`: the stop flag is raised in the callback of that step, as a
// signal arriving then would be (the loop sees it after its next step); 0 = never.
Recorded run(const testing::PhaseRetrieval& p, const std::string& algo, double epochs, Index stop_after) {
  RunOptions o;
  o.algorithm = parse_algorithm(algo);
  o.privacy = PrivacyTarget{2.0, 1e-6};
  o.seed = 5;
  o.noise_key = testing::test_noise_key();
  o.constants.G = 1;
  o.constants.M = 1;
  o.constants.rho = 6;
  if (epochs > 0) o.epochs = epochs;
  std::atomic<bool> stop{false};
  o.stop_flag = &stop;
  Recorded r;
  o.on_step = [&](const Iteration& it) {
    if (it.step > 0) r.iterates.push_back(*it.x);
    if (stop_after > 0 && it.step == stop_after) stop = true;
    return true;
  };
  r.summary = minimize(*p.model, p.problem.data, Vec::Ones(8) * 1e-3, o);
  return r;
}

TEST(InterruptedRun, ReleasesAPrefixOfThePlannedRunUnderThePlannedGuarantee) {
  const testing::PhaseRetrieval p(20000);
  for (const auto& [algo, epochs] : std::vector<std::pair<std::string, double>>{
           {"spider-mf-adaptive", 0}, {"spider-mf-adaptive", 3}, {"dpsgd", 2}, {"spider-tree-adaptive", 0}}) {
    SCOPED_TRACE(algo + " epochs " + std::to_string(epochs));
    const Recorded full = run(p, algo, epochs, 0);
    ASSERT_GT(full.summary.steps, 8);
    const Index stop_after = 4;
    const Recorded cut = run(p, algo, epochs, stop_after);
    EXPECT_TRUE(cut.summary.interrupted());
    EXPECT_FALSE(full.summary.interrupted());
    // The flag raised in the callback after step 4 is seen before the callback
    // of step 5: five steps, the callback shown the first four.
    ASSERT_EQ(cut.summary.steps, stop_after + 1);
    ASSERT_EQ(cut.iterates.size(), static_cast<std::size_t>(stop_after));
    for (std::size_t t = 0; t < cut.iterates.size(); ++t) EXPECT_EQ(cut.iterates[t], full.iterates[t]) << "step " << t;
    // Before any tail average begins, the result is the last iterate: the full run's fifth.
    EXPECT_EQ(cut.summary.x, full.iterates[stop_after]);
    // The guarantee is the planned run's, fixed before it.
    const PrivacyRecord &a = cut.summary.privacy, &b = full.summary.privacy;
    EXPECT_EQ(a.epsilon, b.epsilon);
    EXPECT_EQ(a.sigma, b.sigma);
    EXPECT_EQ(a.noise_multiplier, b.noise_multiplier);
    EXPECT_EQ(a.horizon, b.horizon);
    EXPECT_EQ(a.epsilon_replace_one, b.epsilon_replace_one);
    EXPECT_EQ(a.epsilon_zero_out, b.epsilon_zero_out);
  }
}

}  // namespace
}  // namespace dpsosp
