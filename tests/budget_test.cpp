// The budget shared by runs (include/dpsosp/budget.hpp): a run's curve is
// planned before it reads a record and equals the run's own; charges compose
// as dp_accounting composes the same mechanisms; a run past the budget is
// refused before any noise; the ledger's text round-trips.
#include "dpsosp/budget.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

#include "budget_reference_figures.inc"

using testing::estimate_every_box;
using testing::private_run;
using testing::regression;
using testing::with_intercept;

PrivacyCurve reference_curve(const BudgetReferenceRun& r) {
  PrivacyCurve c;
  c.form = r.form;
  c.mu = r.mu;
  c.sampling_rate = r.q;
  c.noise_multiplier = r.z;
  c.steps = r.steps;
  c.prior_mu = r.prior_mu;
  return c;
}

// Gaussians are ordered by mu; a Poisson curve and the Gaussian of the same
// (epsilon, delta) cross (neither dominates: the Poisson curve's tail is
// heavier), and the cover found for them dominates both.
TEST(Budget, DominanceDecidesWhichCurveCovers) {
  using privacy::gaussian_pld;
  EXPECT_TRUE(gaussian_pld(1, 0.5).dominates(gaussian_pld(1, 0.4)));
  EXPECT_FALSE(gaussian_pld(1, 0.4).dominates(gaussian_pld(1, 0.5)));
  EXPECT_TRUE(gaussian_pld(1, 0.5).dominates(gaussian_pld(1, 0.5)));
  PrivacyCurve c;
  c.form = "poisson";
  c.sampling_rate = 0.0984182776801406;
  c.noise_multiplier = 4.720415950291717;
  c.steps = 31;
  c.prior_mu = 0.134;
  const privacy::PrivacyLossDistribution run = c.pld();
  const double mu = privacy::gdp_mu(run.epsilon(1e-5), 1e-5);
  EXPECT_FALSE(run.dominates(gaussian_pld(1, mu)));
  EXPECT_FALSE(gaussian_pld(1, mu).dominates(run));
  c.estimate_mu = mu;
  const double cover = c.cover_mu();
  EXPECT_GT(cover, 0);
  EXPECT_LT(cover, 0.2 * mu);
  EXPECT_TRUE(c.pld().dominates(run));
  EXPECT_TRUE(c.pld().dominates(gaussian_pld(1, mu)));
  // The cover is the smallest to 1e-3: 1% less does not dominate.
  EXPECT_FALSE(run.compose(gaussian_pld(1, 0.99 * cover)).dominates(gaussian_pld(1, mu)));
  // An estimate below the prior is dominated by the run, which composes the prior.
  PrivacyCurve small = c;
  small.estimate_mu = 0.05;
  EXPECT_EQ(small.cover_mu(), 0);
  EXPECT_THROW(
      privacy::poisson_gaussian_pld(0.1, 1, 1, privacy::Neighbouring::kAddRemove).dominates(gaussian_pld(1, 0.1)),
      Error);
}

// dp_accounting's PLDAccountant composes the same ledgers (tests/budget_reference.py) to within 1e-5.
TEST(Budget, ComposesAsDpAccounting) {
  for (const BudgetReferenceLedger& l : kBudgetReferenceLedgers) {
    Budget b(100, l.delta);
    for (const BudgetReferenceRun& r : l.runs) b.charge(reference_curve(r), "run");
    EXPECT_NEAR(b.spent(), l.epsilon, 1e-5 * l.epsilon);
    EXPECT_EQ(b.ledger().size(), l.runs.size());
  }
  // Far below adding the runs' epsilons (basic composition): 7 runs at eps 1 are eps 2.95 together.
  const BudgetReferenceLedger& grid = kBudgetReferenceLedgers[0];
  const double one = reference_curve(grid.runs[0]).pld().epsilon(grid.delta);
  EXPECT_NEAR(one, 1.0, 1e-6);
  EXPECT_LT(grid.epsilon, 0.45 * 7 * one);
}

struct Case {
  const char* name;
  RunOptions options;
  ScalingOptions scaling;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  RunOptions poisson = private_run(1.0);
  EXPECT_TRUE(choose_default_sampling(poisson, false));
  out.push_back({"default run, scale estimated", poisson, estimate_every_box()});
  out.push_back({"default run, G/M estimated", poisson, ScalingOptions{}});
  RunOptions zero_out = poisson;
  zero_out.privacy->adjacency = Adjacency::kZeroOut;
  out.push_back({"zero-out", zero_out, ScalingOptions{}});
  out.push_back({"single pass (GDP)", private_run(1.0), estimate_every_box()});
  RunOptions dpsgd = private_run(2.0);
  dpsgd.algorithm = Algorithm::kDpsgd;
  dpsgd.epochs = 2;  // Poisson-sampled
  out.push_back({"dpsgd, Poisson", dpsgd, ScalingOptions{}});
  return out;
}

// The plan, on zeros, is the run's curve, field for field; the curve
// reproduces the run's replace-one figure (to the PLD's rounding), or covers
// it a little above where the G/M estimate's records need a cover.
TEST(Budget, APlanIsTheRunsCurve) {
  const Dataset data = regression(3000, 5);
  const auto model = with_intercept("linear", 2);
  const Vec x0 = Vec::Zero(3);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::optional<PrivacyCurve> planned = planned_privacy_curve(*model, data, x0, c.options, c.scaling);
    const ScaledSummary run = minimize_scaled(*model, data, x0, c.options, c.scaling);
    const std::optional<PrivacyCurve> curve = run_privacy_curve(run);
    ASSERT_TRUE(planned && curve);
    EXPECT_EQ(planned->to_json(), curve->to_json());
    const double stated = run.summary.privacy.epsilon_replace_one;
    const double charged = curve->pld().epsilon(run.summary.privacy.delta);
    EXPECT_GE(charged, stated * (1 - 1e-4));
    EXPECT_LE(charged, stated * (curve->cover_mu() > 0 ? 1.02 : 1 + 1e-4));
  }
}

// A run past the budget is refused before its first step (no step callback,
// nothing charged); one within it is charged its curve.
TEST(Budget, ARunPastTheBudgetIsRefusedBeforeAnyNoise) {
  const Dataset data = regression(3000, 5);
  const auto model = with_intercept("linear", 2);
  RunOptions o = private_run(1.0);
  ASSERT_TRUE(choose_default_sampling(o, false));
  int steps = 0;
  o.on_step = [&steps](const Iteration&) { return ++steps > 0; };
  Budget small(0.9, 1e-6);
  try {
    minimize_charged(small, "the run", *model, data, Vec::Zero(3), o, estimate_every_box());
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the run would take the budget's spending to epsilon 1"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(steps, 0);
  EXPECT_TRUE(small.ledger().empty());
  Budget b(2.5, 1e-6);
  const ScaledSummary r = minimize_charged(b, "first", *model, data, Vec::Zero(3), o, estimate_every_box());
  EXPECT_GT(steps, 0);
  ASSERT_EQ(b.ledger().size(), 1u);
  EXPECT_GE(b.spent(), r.summary.privacy.epsilon * (1 - 1e-4));
  EXPECT_LE(b.spent(), r.summary.privacy.epsilon * 1.02);  // its G/M estimate's records covered
  minimize_charged(b, "second", *model, data, Vec::Zero(3), o, estimate_every_box());
  EXPECT_LT(b.spent(), 1.5);  // two runs at eps 1 compose to about 1.46
  EXPECT_GT(b.remaining(), 0.5);
  EXPECT_LT(b.remaining(), 2.5);
  RunOptions open = o;
  open.privacy.reset();
  open.algorithm = Algorithm::kSpider;
  EXPECT_THROW(minimize_charged(b, "non-private", *model, data, Vec::Zero(3), open, ScalingOptions{}), Error);
}

TEST(Budget, ItsTextRoundTripsAndBadTextIsRefused) {
  Budget b(3, 1e-5);
  for (const BudgetReferenceRun& r : kBudgetReferenceLedgers[1].runs) b.charge(reference_curve(r), "a run");
  const Budget back = Budget::from_json(b.to_json(), "budget.json");
  EXPECT_EQ(back.to_json(), b.to_json());
  EXPECT_EQ(back.spent(), b.spent());
  auto refused = [](const nlohmann::json& j, const std::string& words) {
    try {
      Budget::from_json(j, "b.json");
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("b.json: ", 0), 0u) << e.what();
    }
  };
  refused(nlohmann::json::array(), "not a budget");
  refused({{"format", "dpsosp-budget"}, {"epsilon", 1}}, "no numbers");
  nlohmann::json j = b.to_json();
  j["ledger"][0]["curve"]["form"] = "laplace";
  refused(j, "unknown curve form");
  j = b.to_json();
  j["ledger"][0]["curve"]["sampling_rate"] = -1;
  refused(j, "ledger entry 1: the curve's sampling_rate");
  EXPECT_THROW(Budget(0, 1e-5), Error);
  EXPECT_THROW(Budget(1, 1), Error);
}

}  // namespace
}  // namespace dpsosp
