// Per-record weights (Dataset::set_weights, sample_weight): a record adds its
// weight w in [0, 1] times its clipped vector to every clipped sum, so it moves
// a sum by at most w times the bound (the sensitivity is unchanged), weight 0
// is its contribution dropped, every engine path agrees with the reference
// form, the weighted loss's gradient is the weighted sum's, and unweighted
// data (or all-ones weights) take the unweighted path, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "engine/wide_kernels.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"
#include "test_threads.hpp"

namespace dpsosp {
namespace {

using testing::Labels;

struct Case {
  const char* model;
  Index p;
  Labels labels;
  bool sparse;
};

const Case kCases[] = {
    {"logistic", 37, Labels::kBinary, false}, {"logistic", 37, Labels::kBinary, true},
    {"cauchy", 9, Labels::kReal, false},      {"phase-retrieval", 8, Labels::kReal, false},
    {"pca", 11, Labels::kNone, false},        {"softmax", 29, Labels::kClasses, true},
    {"mlp", 13, Labels::kClasses, false},
};

// n records, record kExtreme's features all 1e200 (its gradient far past any bound).
constexpr Index kExtreme = 7;
Dataset data_with_an_extreme_record(const Case& c, Index n) {
  return testing::make_test_data(n, c.p, c.labels, c.sparse, 23,
                                 [](RowMatrix& x) { x.row(kExtreme).setConstant(1e200); });
}

std::unique_ptr<Model> model_for(const Case& c, const Dataset& data) {
  ModelOptions options;
  options.classes = c.labels == Labels::kClasses ? 3 : 0;
  options.hidden = 5;
  options.rank = 2;
  return make_model(c.model, c.p, options, &data);
}

// A scattered order of every record.
IndexList every_record(Index n) {
  IndexList idx(n);
  for (Index i = 0; i < n; ++i) idx[i] = (i * 7) % n;
  return idx;
}

// The three clipped sums (O1, O2, consistent O2) of the records idx.
struct Sums {
  ClippedSum o1, o2, consistent;
};
Sums sums_of(const Model& m, const Dataset& data, const IndexList& idx, const Vec& x, const Vec& x_prev, double clip,
             bool reference) {
  if (reference) {
    return {m.Model::clipped_gradient_sum(x, data, idx, clip),
            m.Model::clipped_difference_sum(x, x_prev, data, idx, clip),
            m.Model::clipped_consistent_difference_sum(x, x_prev, data, idx, clip, clip)};
  }
  return {m.clipped_gradient_sum(x, data, idx, clip), m.clipped_difference_sum(x, x_prev, data, idx, clip),
          m.clipped_consistent_difference_sum(x, x_prev, data, idx, clip, clip)};
}

void points(const Model& m, Vec& x, Vec& x_prev) {
  const auto d = static_cast<Eigen::Index>(m.dim());
  x.resize(d);
  x_prev.resize(d);
  GaussianStream g(8, StreamPurpose::kTest, 2);
  g.fill(x, 0.4);
  g.fill(x_prev, 0.4);
  x_prev += x;
}

Vec weights_for(Index n, double extreme_weight) {
  Vec w(static_cast<Eigen::Index>(n));
  for (Index i = 0; i < n; ++i) w[static_cast<Eigen::Index>(i)] = 0.25 + 0.5 * static_cast<double>(i % 3) / 2.0;
  w[kExtreme] = extreme_weight;
  return w;
}

TEST(SampleWeight, BadWeightsAreRefusedInOneLineNamingTheFirstBadRecord) {
  Dataset data = testing::make_test_data(10, 3, Labels::kBinary, false, 1);
  for (const double bad : {-0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    Vec w = Vec::Constant(10, 0.5);
    w[3] = bad;
    w[6] = bad;
    try {
      data.set_weights(w);
      FAIL() << "accepted " << bad;
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("sample_weight: the weight of record 3 (0-based)"), std::string::npos) << m;
      EXPECT_NE(m.find("expected a number in [0, 1]"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  }
  EXPECT_THROW(data.set_weights(Vec::Constant(9, 0.5)), Error);
  EXPECT_FALSE(data.has_weights());
}

TEST(SampleWeight, AllOnesStoreNoWeightsAndCopiesKeepTheirOwn) {
  Dataset data = testing::make_test_data(10, 3, Labels::kBinary, false, 1);
  data.set_weights(Vec::Ones(10));
  EXPECT_FALSE(data.has_weights());
  const Dataset copy = data;
  Vec w = Vec::Ones(10);
  w[2] = 0.5;
  data.set_weights(w);
  EXPECT_TRUE(data.has_weights());
  EXPECT_FALSE(copy.has_weights());
  EXPECT_EQ(data.weight(2), 0.5);
  EXPECT_EQ(data.subset({4, 2}).weight(1), 0.5);
  EXPECT_EQ(data.subset({4, 2}).weight(0), 1.0);
  data.set_weights(Vec());
  EXPECT_FALSE(data.has_weights());
}

// Replace-one, the weight part of the record: the extreme record of weight w
// moves each clipped sum by at most w * clip from the sum without it (its
// weight 0), on every engine path and in the reference form.
TEST(SampleWeight, ARecordOfWeightWMovesAClippedSumByAtMostWTimesTheBound) {
  constexpr Index n = 200;
  const double clip = 0.5;
  for (const Case& c : kCases) {
    const std::string name = std::string(c.model) + (c.sparse ? " sparse" : " dense");
    SCOPED_TRACE(name);
    const Dataset base = data_with_an_extreme_record(c, n);
    const auto model = model_for(c, base);
    Vec x, x_prev;
    points(*model, x, x_prev);
    const IndexList idx = every_record(n);
    Dataset without = base;
    without.set_weights(weights_for(n, 0.0));
    for (const double w : {1.0, 0.3}) {
      Dataset with = base;
      with.set_weights(weights_for(n, w));
      for (const bool wide_off : {false, true}) {
        detail::wide::turn_off_for_tests(wide_off);
        for (const int threads : {1, 2}) {
          testing::ForcedThreads forced(threads, threads);
          for (const bool reference : {false, true}) {
            const Sums a = sums_of(*model, with, idx, x, x_prev, clip, reference);
            const Sums b = sums_of(*model, without, idx, x, x_prev, clip, reference);
            for (const auto& [one, other] : {std::make_pair(&a.o1, &b.o1), std::make_pair(&a.o2, &b.o2),
                                             std::make_pair(&a.consistent, &b.consistent)}) {
              ASSERT_TRUE(one->sum.allFinite());
              EXPECT_LE((one->sum - other->sum).norm(), w * clip * (1 + 1e-9));
            }
            // The bound is met: logistic's extreme gradient is clipped to norm clip, then weighed.
            if (std::string(c.model) == "logistic") EXPECT_GE((a.o1.sum - b.o1.sum).norm(), w * clip * (1 - 1e-9));
          }
        }
      }
      detail::wide::turn_off_for_tests(false);
    }
  }
}

// Weight 0 is the record's contribution dropped; and the fused engine gives
// the reference form's values on weighted records, on every path.
TEST(SampleWeight, WeightZeroDropsTheRecordAndEveryPathAgreesWithTheReference) {
  constexpr Index n = 200;
  const double clip = 2.0;
  for (const Case& c : kCases) {
    const std::string name = std::string(c.model) + (c.sparse ? " sparse" : " dense");
    SCOPED_TRACE(name);
    Dataset data = data_with_an_extreme_record(c, n);
    const auto model = model_for(c, data);
    Vec x, x_prev;
    points(*model, x, x_prev);
    const IndexList idx = every_record(n);
    IndexList rest;
    for (Index i : idx)
      if (i != kExtreme) rest.push_back(i);
    const ClippedSum dropped = model->clipped_gradient_sum(x, data, rest, clip);
    Vec zero_one = Vec::Ones(n);
    zero_one[kExtreme] = 0.0;
    Dataset zeroed = data;
    zeroed.set_weights(zero_one);
    const ClippedSum zero = model->clipped_gradient_sum(x, zeroed, idx, clip);
    EXPECT_LE((zero.sum - dropped.sum).norm(), 1e-12 * (1 + dropped.sum.norm()));

    data.set_weights(weights_for(n, 0.6));
    const Sums ref = sums_of(*model, data, idx, x, x_prev, clip, true);
    for (const bool wide_off : {false, true}) {
      detail::wide::turn_off_for_tests(wide_off);
      for (const int threads : {1, 2}) {
        testing::ForcedThreads forced(threads, threads);
        const Sums got = sums_of(*model, data, idx, x, x_prev, clip, false);
        EXPECT_EQ(got.o1.sum, ref.o1.sum);
        EXPECT_EQ(got.o2.sum, ref.o2.sum);
        EXPECT_EQ(got.consistent.sum, ref.consistent.sum);
        EXPECT_EQ(got.o1.clipped, ref.o1.clipped);
      }
    }
    detail::wide::turn_off_for_tests(false);
  }
}

// A data-parallel batch (two shares, the second chained from the first's
// sum) gives the whole weighted batch's values, fused and in the reference form.
TEST(SampleWeight, ChainedSharesGiveTheWholeWeightedBatch) {
  constexpr Index n = 200;
  const double clip = 1.0;
  const Index cut = 2 * Model::share_unit();
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.model) + (c.sparse ? " sparse" : " dense"));
    Dataset data = data_with_an_extreme_record(c, n);
    const auto model = model_for(c, data);
    data.set_weights(weights_for(n, 0.4));
    Vec x, x_prev;
    points(*model, x, x_prev);
    const IndexList idx = every_record(n);
    const IndexList first(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(cut));
    const IndexList second(idx.begin() + static_cast<std::ptrdiff_t>(cut), idx.end());
    for (const bool reference : {false, true}) {
      const ClippedSum whole = reference ? model->Model::clipped_gradient_sum(x, data, idx, clip)
                                         : model->clipped_gradient_sum(x, data, idx, clip);
      const ClippedSum head = reference ? model->Model::clipped_gradient_sum(x, data, first, clip)
                                        : model->clipped_gradient_sum(x, data, first, clip);
      const SumStart start = [&](Vec& s) { s = head.sum; };
      const ClippedSum tail = reference ? model->Model::chained_gradient_sum(x, data, second, clip, start)
                                        : model->chained_gradient_sum(x, data, second, clip, start);
      EXPECT_EQ(tail.sum, whole.sum);
    }
  }
}

// The weighted loss (1/m) sum w_i f(x; z_i): its gradient against central
// differences, the unclipped weighted sum is m times it, and its mean Hessian
// (the certificate's) against differences of the gradient.
TEST(SampleWeight, WeightedGradientAndHessianMatchFiniteDifferencesOfTheWeightedLoss) {
  constexpr Index n = 40;
  for (const Case& c : {Case{"logistic", 5, Labels::kBinary, false}, Case{"softmax", 4, Labels::kClasses, false},
                        Case{"cauchy", 3, Labels::kReal, true}}) {
    SCOPED_TRACE(c.model);
    Dataset data = testing::make_test_data(n, c.p, c.labels, c.sparse, 5);
    const auto model = model_for(c, data);
    data.set_weights(weights_for(n, 0.0));
    Vec x, x_prev;
    points(*model, x, x_prev);
    x *= 0.3;
    IndexList idx(n);
    for (Index i = 0; i < n; ++i) idx[i] = i;
    const Vec g = model->mean_gradient(x, data, idx);
    const double h = 1e-6;
    for (Eigen::Index j = 0; j < x.size(); ++j) {
      Vec up = x, down = x;
      up[j] += h;
      down[j] -= h;
      const double fd = (model->mean_loss(up, data, idx) - model->mean_loss(down, data, idx)) / (2 * h);
      EXPECT_NEAR(g[j], fd, 1e-6 * (1 + std::abs(fd))) << "entry " << j;
    }
    const double kNoClip = std::numeric_limits<double>::infinity();
    const Vec sum = model->clipped_gradient_sum(x, data, idx, kNoClip).sum;
    EXPECT_LE((sum / static_cast<double>(n) - g).norm(), 1e-12 * (1 + g.norm()));
    Vec v = Vec::Ones(x.size());
    Vec hv;
    model->mean_hessian(x, data, idx)(v, hv);
    const Vec fd_hv =
        (model->mean_gradient(x + h * v, data, idx) - model->mean_gradient(x - h * v, data, idx)) / (2 * h);
    EXPECT_LE((hv - fd_hv).norm(), 1e-5 * (1 + fd_hv.norm()));
    EXPECT_LE((model->mean_hvp(x, data, idx, v) - hv).norm(), 1e-12 * (1 + hv.norm()));
  }
}

RunOptions private_run(std::uint64_t seed) {
  RunOptions o;
  o.privacy = PrivacyTarget{2.0, 1e-6};
  o.seed = seed;
  o.noise_key = testing::test_noise_key();
  o.constants.G = 1;
  o.constants.M = 4;
  o.constants.rho = 6;
  o.max_steps = 50;
  return o;
}

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), sizeof(double) * static_cast<std::size_t>(a.size())) == 0;
}

// Same key, same seed: no weights and all-ones weights give the same bits; a
// weighted run gives the same bits with its records stored in the sample
// order (weights moved with them), and differs from the unweighted one.
TEST(SampleWeight, RunsAreDeterministicAndAllOnesIsTheUnweightedRun) {
  constexpr std::uint64_t kSeed = 17;
  const Dataset plain = testing::make_test_data(20000, 12, Labels::kBinary, false, 4);
  const auto model = make_model("logistic", 12);
  const Vec x0 = Vec::Zero(static_cast<Eigen::Index>(model->dim()));
  const Summary unweighted = minimize(*model, plain, x0, private_run(kSeed));
  Dataset ones = plain;
  ones.set_weights(Vec::Ones(20000));
  EXPECT_TRUE(same_bits(minimize(*model, ones, x0, private_run(kSeed)).x, unweighted.x));

  Dataset weighted = plain;
  Vec w(20000);
  for (Eigen::Index i = 0; i < w.size(); ++i) w[i] = plain.label(static_cast<Index>(i)) > 0.5 ? 1.0 : 0.2;
  weighted.set_weights(w);
  const Summary a = minimize(*model, weighted, x0, private_run(kSeed));
  EXPECT_FALSE(same_bits(a.x, unweighted.x));
  Dataset stored = weighted;
  stored.store_in_sample_order(kSeed);
  ASSERT_TRUE(stored.has_weights());
  EXPECT_EQ(stored.record_weights(), w);
  const Summary b = minimize(*model, stored, x0, private_run(kSeed));
  EXPECT_TRUE(same_bits(a.x, b.x));
  EXPECT_EQ(a.privacy.epsilon, unweighted.privacy.epsilon);  // the guarantee does not depend on the weights
}

}  // namespace
}  // namespace dpsosp
