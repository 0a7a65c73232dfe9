// spider-mf-adaptive (src/optimizers/spider_mf_adaptive.cpp, mf_params.cpp):
// its parameters from public quantities, whole runs (the guarantee is the
// target, bits independent of the thread count, the tail average, the
// horizon), known answers, and the consistent O2 kernel against its
// reference form.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_counting_model.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"
#include "test_phase_retrieval.hpp"

namespace dpsosp {
namespace {

using testing::mf_options;
using testing::PhaseRetrieval;

// The mean of the iterates after the steps whose b1 records each took the
// draws past `records`, and how many there were.
std::pair<Vec, Index> tail_mean(const std::vector<Vec>& trajectory, Index b1, Index records) {
  Vec mean = Vec::Zero(trajectory.front().size());
  Index count = 0;
  for (Index t = 1; t < trajectory.size(); ++t) {
    if (t * b1 > records) {
      mean += trajectory[t];
      ++count;
    }
  }
  return {count > 0 ? Vec(mean / static_cast<double>(count)) : mean, count};
}

// b1 = ceil(0.25 sqrt(n / mu)) within [16, n / 10]; O1 steps only unless O2
// is asked for; the horizon, the sensitivity 2G/b1 and the noise calibrated to it.
TEST(SpiderMfAdaptive, ParametersFollowTheirRules) {
  const ProblemConstants c{6.0, 20.0, 6.0, 1.0};
  for (double eps : {0.5, 1.0, 4.0}) {
    for (Index n : {10000, 100000, 1000000}) {
      const MfParameters p = spider_mf_adaptive_parameters(n, 8, {eps, 1e-6}, c);
      const double mu = privacy::gdp_mu(eps, 1e-6);
      const auto want = static_cast<Index>(std::ceil(0.25 * std::sqrt(static_cast<double>(n) / mu)));
      EXPECT_EQ(p.b1, std::max<Index>(16, want)) << n << " " << eps;
      EXPECT_FALSE(p.o2);
      EXPECT_EQ(p.max_phase_length, 1u);
      EXPECT_EQ(p.horizon, n / p.b1);
      EXPECT_DOUBLE_EQ(p.sensitivity, 12.0 / static_cast<double>(p.b1));
      EXPECT_DOUBLE_EQ(p.sigma, mf_noise_sigma(p.sensitivity, p.horizon, {eps, 1e-6}, 8));
      EXPECT_DOUBLE_EQ(p.column_norm, BltFactorization::square_root(p.horizon).max_column_norm(p.horizon));
      EXPECT_DOUBLE_EQ(p.eta, 1.0 / 20.0);
      EXPECT_DOUBLE_EQ(p.tail, 0.25);
    }
  }
  // Small data: at most a tenth of the records a batch.
  EXPECT_EQ(spider_mf_adaptive_parameters(100, 8, {1.0, 1e-6}, c).b1, 10u);
  // Even with almost no privacy noise, O1 steps only unless asked; with O2,
  // phases of 4 and a horizon of one release a record.
  EXPECT_FALSE(spider_mf_adaptive_parameters(100000, 8, {1e6, 1e-6}, c).o2);
  MfChoices with_o2;
  with_o2.o2 = true;
  const MfParameters loose = spider_mf_adaptive_parameters(100000, 8, {1e6, 1e-6}, c, with_o2);
  EXPECT_TRUE(loose.o2);
  EXPECT_EQ(loose.max_phase_length, 4u);
  EXPECT_EQ(loose.horizon, 1 + (100000 - loose.b1) / loose.b2_min);
  // What the caller fixes.
  MfChoices ch;
  ch.b1 = 300;
  ch.o2 = true;
  ch.max_phase_length = 8;
  ch.tail = 0.0;
  const MfParameters fixed = spider_mf_adaptive_parameters(100000, 8, {1.0, 1e-6}, c, ch);
  EXPECT_EQ(fixed.b1, 300u);
  EXPECT_TRUE(fixed.o2);
  EXPECT_EQ(fixed.max_phase_length, 8u);
  EXPECT_DOUBLE_EQ(fixed.bt_slope, 50.0);  // b1 / G: an O2 release has the O1's sensitivity
  // A phase cap without O2 steps is refused, naming why.
  MfChoices no_o2;
  no_o2.max_phase_length = 8;
  try {
    spider_mf_adaptive_parameters(100000, 8, {1.0, 1e-6}, c, no_o2);
    FAIL() << "a phase cap without O2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_phase_length = 8 needs O2 steps"), std::string::npos) << e.what();
  }
  EXPECT_THROW(spider_mf_adaptive_parameters(100000, 8, {std::numeric_limits<double>::infinity(), 1e-6}, c), Error);
}

// A run: the guarantee is the target, the steps stop at the horizon (every
// record at most once), the same bits on one and two threads, and x is the
// mean of the iterates after the tail's start.
TEST(SpiderMfAdaptive, RunsAreWithinTheTargetReproducibleAndTailAveraged) {
  PhaseRetrieval pr(60000, 2);
  RunOptions o = mf_options(2.0, 3);
  o.record_trajectory = true;
  o.threads = 1;
  const Summary a = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  o.threads = 2;
  const Summary b = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.privacy.accounting(), "gdp-mf");
  EXPECT_NEAR(a.privacy.epsilon, 2.0, 1e-9);
  EXPECT_LE(a.privacy.epsilon, 2.0 + 1e-12);
  const auto b1 = static_cast<Index>(a.params.at("b1"));
  EXPECT_EQ(a.steps, 60000 / b1);
  EXPECT_EQ(a.o1_calls, a.steps);
  EXPECT_EQ(a.samples_used, a.steps * b1);
  EXPECT_EQ(a.privacy.horizon, a.steps);
  // The tail: the iterates after steps whose records passed 3/4 of n.
  const auto [mean, count] = tail_mean(a.trajectory, b1, 45000);
  EXPECT_GT(count, 0u);
  EXPECT_LT((a.x - mean).norm(), 1e-12);
  EXPECT_NE(a.x, a.trajectory.back());
  // tail = 0: the last iterate.
  o.tail = 0.0;
  const Summary last = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(last.x, last.trajectory.back());
}

// Several passes over one order: every record of the order's first T b1
// positions is used exactly `epochs` times (the rest never), the run makes
// epochs * T steps, its guarantee is the target with the sensitivity of a
// record in every pass, its bits do not depend on the thread count, and x is
// the mean of the iterates over the last quarter of all the draws. O2 steps
// and part passes are refused with one line.
TEST(SpiderMfAdaptive, SeveralPassesUseEveryRecordOnceAPass) {
  PhaseRetrieval pr(20000, 6);
  RunOptions o = mf_options(2.0, 7);
  o.epochs = 3;
  o.sampling = Sampling::kOrder;
  o.record_trajectory = true;
  o.threads = 1;
  testing::CountingModel counting(*pr.model);
  const Summary a = minimize(counting, pr.problem.data, pr.problem.saddle, o);
  const auto b1 = static_cast<Index>(a.params.at("b1"));
  const Index pass = 20000 / b1;
  EXPECT_EQ(static_cast<Index>(a.params.at("steps_per_epoch")), pass);
  EXPECT_EQ(a.steps, 3 * pass);
  EXPECT_EQ(a.o1_calls, a.steps);
  EXPECT_EQ(a.termination, Termination::kPlannedSteps);
  EXPECT_EQ(a.samples_used, pass * b1);
  std::vector<int> uses(20000, 0);
  for (const IndexList& call : counting.calls_)
    for (Index i : call) ++uses[i];
  const IndexList order = SamplePool(20000, a.seed).draw(20000);
  Index wrong = 0;
  for (Index k = 0; k < 20000; ++k) wrong += uses[order[k]] != (k < pass * b1 ? 3 : 0);
  EXPECT_EQ(wrong, 0u);
  EXPECT_NEAR(a.privacy.epsilon, 2.0, 1e-9);
  EXPECT_LE(a.privacy.epsilon, 2.0 + 1e-12);
  EXPECT_EQ(a.privacy.horizon, a.steps);
  EXPECT_DOUBLE_EQ(a.privacy.column_norm,
                   BltFactorization::square_root(a.steps).cyclic_participation_norm(a.steps, pass));
  EXPECT_GT(a.privacy.column_norm, 1.5 * BltFactorization::square_root(a.steps).max_column_norm(a.steps));
  EXPECT_NEAR(a.privacy.mu, a.privacy.sensitivity * a.privacy.column_norm / a.privacy.sigma, 1e-12);
  const auto [mean, count] = tail_mean(a.trajectory, b1, 45000);
  EXPECT_GT(count, 0u);
  EXPECT_LT((a.x - mean).norm(), 1e-12);
  o.threads = 2;
  const Summary b = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.x, b.x);
  EXPECT_TRUE(a.x.allFinite());
  auto refused = [&](const RunOptions& bad, const std::string& needle) {
    try {
      minimize(*pr.model, pr.problem.data, pr.problem.saddle, bad);
      ADD_FAILURE() << "accepted; expected " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  };
  RunOptions bad = o;
  bad.o2 = true;
  refused(bad, "o2 = on with epochs = 3");
  bad = o;
  bad.epochs = 2.5;
  refused(bad, "whole number of epochs");
}

// Poisson passes (the default beyond one pass): the optimizer's records, in
// the sample order, form `bands` groups of m = floor(n / bands); step t is an
// O1 on a Poisson sample of group t mod bands (every call of the model's
// kernel reads records of one group, the groups in turn); every record is
// used at most `cycles` times and the n mod bands left over never; the run
// makes bands x cycles steps; the mean batch is b1 within 5 standard errors
// (a false failure about once in 1.7 million); the guarantee is the cycles'
// Poisson-subsampled Gaussian at the target (zero-out); the batch sizes stay
// out of the release; the bits do not depend on the thread count.
TEST(SpiderMfAdaptive, PoissonPassesCycleThroughTheGroups) {
  const Index n = 20003;
  PhaseRetrieval pr(n, 6);
  RunOptions o = mf_options(2.0, 7);
  o.epochs = 3;
  o.bands = 4;
  o.threads = 1;
  testing::CountingModel counting(*pr.model);
  const Summary a = minimize(counting, pr.problem.data, pr.problem.saddle, o);
  const Index m = n / 4;
  const auto b1 = static_cast<Index>(a.params.at("b1"));
  const double q = a.params.at("sampling_rate");
  const auto cycles = static_cast<Index>(a.params.at("cycles"));
  EXPECT_EQ(a.params.at("bands"), 4.0);
  EXPECT_EQ(a.params.at("group_size"), static_cast<double>(m));
  EXPECT_DOUBLE_EQ(q, static_cast<double>(b1) / static_cast<double>(m));
  EXPECT_EQ(cycles, static_cast<Index>(std::ceil(3.0 / q)));
  EXPECT_EQ(a.steps, 4 * cycles);
  EXPECT_EQ(a.termination, Termination::kPlannedSteps);
  EXPECT_EQ(a.samples_used, 4 * m);
  EXPECT_FALSE(a.gradient_evaluations.has_value());
  EXPECT_EQ(a.privacy.mechanism, MechanismKind::kBandedPoisson);
  EXPECT_EQ(a.privacy.adjacency, Adjacency::kZeroOut);
  EXPECT_NEAR(a.privacy.epsilon, 2.0, 1e-6);
  EXPECT_LE(a.privacy.epsilon, 2.0);
  EXPECT_DOUBLE_EQ(a.privacy.epsilon, privacy::dpsgd_pld_epsilon(q, a.privacy.noise_multiplier, cycles, 1e-6));
  const IndexList order = SamplePool(n, a.seed).draw(n);
  std::vector<Index> position(n);
  for (Index k = 0; k < n; ++k) position[order[k]] = k;
  std::vector<Index> uses(n, 0);
  Index last_group = 3, total = 0;
  for (const IndexList& call : counting.calls_) {
    const Index g = position[call.front()] / m;
    for (Index i : call) {
      EXPECT_EQ(position[i] / m, g);
      ++uses[i];
    }
    EXPECT_TRUE(g == last_group || g == (last_group + 1) % 4) << g << " after " << last_group;
    last_group = g;
    total += static_cast<Index>(call.size());
  }
  Index over = 0;
  for (Index k = 0; k < n; ++k) over += k >= 4 * m ? uses[order[k]] : uses[order[k]] > cycles;
  EXPECT_EQ(over, 0u);
  const double steps = static_cast<double>(a.steps);
  EXPECT_NEAR(static_cast<double>(total) / steps, static_cast<double>(b1),
              5 * std::sqrt(static_cast<double>(b1) * (1 - q) / steps));
  o.threads = 2;
  const Summary b = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.x, b.x);
  EXPECT_TRUE(a.x.allFinite());
  // Part epochs are expected passes; bands need groups that hold the batch.
  RunOptions part = o;
  part.epochs = 2.5;
  const Summary c = minimize(*pr.model, pr.problem.data, pr.problem.saddle, part);
  EXPECT_EQ(c.params.at("cycles"), std::ceil(2.5 / c.params.at("sampling_rate")));
  RunOptions wide = o;
  wide.bands = n / b1 + 1;
  try {
    minimize(*pr.model, pr.problem.data, pr.problem.saddle, wide);
    ADD_FAILURE() << "bands above n / b1 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold the expected batch"), std::string::npos) << e.what();
  }
}

// The automatic bands (docs/parameters.md): a power of two up to 128 whose
// groups hold the expected batch, the one with the least noise in the
// iterates among them, checked against every candidate calibrated by the
// run's accountant: RDP (cheap) at three eps, exactly; PLD at eps 0.5, within
// 2% (the rule ranks by a coarser PLD, which may swap near ties). More bands
// at weaker privacy, where amplification matters less.
TEST(SpiderMfAdaptive, AutomaticBandsCarryTheLeastNoise) {
  const ProblemConstants c{1.0, 1.0, 1.0, 1.0};
  const Index n = 20000;
  Index previous = 0;
  for (const auto& [eps, accountant] : {std::pair{0.5, Accountant::kRdp}, std::pair{0.5, Accountant::kPld},
                                        std::pair{3.0, Accountant::kRdp}, std::pair{8.0, Accountant::kRdp}}) {
    MfChoices ch;
    ch.epochs = 2;
    ch.accountant = accountant;
    const PrivacyTarget target{eps, 1e-5};
    const MfParameters p = spider_mf_adaptive_parameters(n, 7850, target, c, ch);
    EXPECT_EQ(p.sampling, Sampling::kPoisson);
    if (accountant == Accountant::kRdp) {
      EXPECT_GE(p.bands, previous) << eps;
      previous = p.bands;
    }
    const auto noise = [&](Index bands) {
      MfChoices fixed = ch;
      fixed.bands = bands;
      const MfParameters f = spider_mf_adaptive_parameters(n, 7850, target, c, fixed);
      return f.noise_multiplier * f.noise_multiplier * f.column_norm * f.column_norm *
             BandedFactorization::square_root(bands).mean_prefix_variance(f.horizon);
    };
    const double chosen = noise(p.bands), slack = accountant == Accountant::kPld ? 1.02 : 1.0;
    for (Index bands = 1; bands <= 128 && n / bands >= p.b1; bands *= 2)
      EXPECT_LE(chosen, slack * noise(bands)) << eps << " " << bands;
    EXPECT_GE(n / p.bands, p.b1);
  }
  EXPECT_GT(previous, 1u);
}

// Known answer: from the strict saddle, with the noise all but gone (eps =
// 1e4), the run ends near the planted solution; at eps = 2 on 4e5 records its
// gap is below spider-tree-adaptive's bound in optimizer_test (0.25), for
// three seeds.
TEST(SpiderMfAdaptive, EscapesTheSaddleAndEndsNearTheSolution) {
  PhaseRetrieval pr(400000, 1);
  const Summary quiet = minimize(*pr.model, pr.problem.data, pr.problem.saddle, mf_options(1e4, 1));
  EXPECT_LT(pr.gap(quiet.x), 0.01);
  EXPECT_LT(std::min((quiet.x - pr.problem.x_star).norm(), (quiet.x + pr.problem.x_star).norm()), 0.01);
  for (std::uint64_t seed : {1, 2, 3}) {
    const Summary s = minimize(*pr.model, pr.problem.data, pr.problem.saddle, mf_options(2.0, seed));
    EXPECT_LT(pr.gap(s.x), 0.05) << seed;
  }
}

// The consistent O2 kernel: the fused, threaded forms (softmax, mlp, pca)
// give the bits of the reference form; with an infinite inner clip it is the
// paper's O2; and a margin model's (the reference form) clips each gradient
// before the difference.
TEST(SpiderMfAdaptive, ConsistentO2MatchesItsReferenceForm) {
  struct Case {
    const char* model;
    testing::Labels labels;
  };
  for (const Case& c : {Case{"softmax", testing::Labels::kClasses}, Case{"mlp", testing::Labels::kClasses},
                        Case{"pca", testing::Labels::kNone}, Case{"logistic", testing::Labels::kBinary}}) {
    SCOPED_TRACE(c.model);
    const Dataset data = testing::make_test_data(700, 12, c.labels, false, 5);
    ModelOptions mo;
    mo.hidden = 6;
    const auto model = make_model(c.model, 12, mo, &data);
    GaussianStream g(9, StreamPurpose::kTest);
    Vec x(model->dim()), x_prev(model->dim());
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      x[j] = 0.3 * g.next();
      x_prev[j] = x[j] + 0.05 * g.next();
    }
    IndexList idx;
    for (Index i = 0; i < 700; i += 2) idx.push_back(i);
    for (double inner : {0.05, 1.0}) {
      const ClippedSum ref = model->Model::clipped_consistent_difference_sum(x, x_prev, data, idx, inner, 0.02);
      const ClippedSum fused = model->clipped_consistent_difference_sum(x, x_prev, data, idx, inner, 0.02);
      EXPECT_EQ(fused.sum, ref.sum);
      EXPECT_EQ(fused.clipped, ref.clipped);
      // By hand: clip each gradient, subtract, clip, add in order.
      Vec want = Vec::Zero(model->dim()), a(model->dim()), b(model->dim());
      for (Index i : idx) {
        model->gradient(x, data, i, a);
        model->gradient(x_prev, data, i, b);
        clip_to_norm(a, inner);
        clip_to_norm(b, inner);
        Vec diff = a - b;
        clip_to_norm(diff, 0.02);
        want += diff;
      }
      EXPECT_LT((want - ref.sum).norm(), 1e-12 * (1 + want.norm()));
    }
    const ClippedSum raw = model->clipped_difference_sum(x, x_prev, data, idx, 0.02);
    const ClippedSum unclipped =
        model->clipped_consistent_difference_sum(x, x_prev, data, idx, std::numeric_limits<double>::infinity(), 0.02);
    EXPECT_LT((raw.sum - unclipped.sum).norm(), 1e-12 * (1 + raw.sum.norm()));
  }
}

// Secure noise: the run's guarantee is zCDP's, at most the target, and its
// bits do not depend on the thread count.
TEST(SpiderMfAdaptive, SecureRunsAreWithinTheTarget) {
  PhaseRetrieval pr(30000, 4);
  RunOptions o = mf_options(2.0, 5);
  o.privacy->noise = NoiseMode::kSecure;
  o.threads = 1;
  const Summary a = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  o.threads = 2;
  const Summary b = minimize(*pr.model, pr.problem.data, pr.problem.saddle, o);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.privacy.accounting(), "zcdp-mf-discrete");
  EXPECT_LE(a.privacy.epsilon, 2.0);
  EXPECT_GE(a.privacy.epsilon, 1.99);
  EXPECT_TRUE(a.x.allFinite());
}

}  // namespace
}  // namespace dpsosp
