// Chained clipped sums (Model::chained_gradient_sum and the O2 forms, the
// shares of a data-parallel run): a batch's sum computed share after share,
// each starting from the sum of the shares before it, has the bits of the whole batch's sum,
// for every model, dense and sparse, alone and shared between threads, and the
// base class's reference form too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_errors.hpp"
#include "test_threads.hpp"

namespace dpsosp {
namespace {

using testing::Labels;
constexpr double kInf = std::numeric_limits<double>::infinity();

bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

struct Case {
  const char* model;
  Index p;
  Labels labels;
  ModelOptions options;
};

std::vector<Case> cases() {
  ModelOptions classes;
  classes.classes = 3;
  classes.hidden = 4;
  ModelOptions pca;
  pca.rank = 2;
  return {{"logistic", 37, Labels::kBinary, {}},
          {"cauchy", 9, Labels::kReal, {}},
          {"pca", 11, Labels::kNone, pca},
          {"softmax", 29, Labels::kClasses, classes},
          {"mlp", 13, Labels::kClasses, classes}};
}

// The sum over idx cut at `cuts` (batch rows, multiples of the share unit),
// each piece chained after the one before.
ClippedSum chained(const Model& m, const Dataset& data, const IndexList& idx, const std::vector<Index>& cuts,
                   const Vec& x, const Vec* x_prev, double clip, bool base_form, bool consistent = false) {
  ClippedSum total;
  total.sum = Vec::Zero(static_cast<Eigen::Index>(m.dim()));
  Index begin = 0;
  std::vector<Index> ends = cuts;
  ends.push_back(idx.size());
  for (Index end : ends) {
    const IndexList part(idx.begin() + static_cast<std::ptrdiff_t>(begin),
                         idx.begin() + static_cast<std::ptrdiff_t>(end));
    const Vec before = total.sum;
    int calls = 0;
    const SumStart start = [&](Vec& s) {
      ++calls;
      s = before;
    };
    const ClippedSum piece =
        consistent ? (base_form ? m.Model::chained_consistent_difference_sum(x, *x_prev, data, part, 0.5, clip, start)
                                : m.chained_consistent_difference_sum(x, *x_prev, data, part, 0.5, clip, start))
        : x_prev   ? (base_form ? m.Model::chained_difference_sum(x, *x_prev, data, part, clip, start)
                                : m.chained_difference_sum(x, *x_prev, data, part, clip, start))
                   : (base_form ? m.Model::chained_gradient_sum(x, data, part, clip, start)
                                : m.chained_gradient_sum(x, data, part, clip, start));
    EXPECT_EQ(calls, 1) << "the start is taken once";
    total.sum = piece.sum;
    total.clipped += piece.clipped;
    total.nonfinite += piece.nonfinite;
    begin = end;
  }
  return total;
}

TEST(ChainedSum, SharesChainedGiveTheWholeBatchBits) {
  const Index unit = Model::share_unit();
  ASSERT_GE(unit, 1u);
  for (const Case& c : cases()) {
    for (bool sparse : {false, true}) {
      if (sparse && std::string(c.model) == "pca") continue;
      SCOPED_TRACE(std::string(c.model) + (sparse ? " sparse" : " dense"));
      const Dataset data = testing::make_test_data(800, c.p, c.labels, sparse, 11);
      const auto model = make_model(c.model, c.p, c.options, &data);
      Vec x(static_cast<Eigen::Index>(model->dim())), x_prev(x.size());
      GaussianStream g(12, StreamPurpose::kTest, 1);
      g.fill(x, 0.4);
      g.fill(x_prev, 0.4);
      x_prev += x;
      // Below the sharing threshold, above it and above a stretch.
      for (Index b : {Index{1}, Index{9}, Index{700}}) {
        const IndexList idx = SamplePool(data.rows(), b).draw(b);
        // The shares of 2, 3 and 4 processes, and a cut every unit.
        std::vector<std::vector<Index>> cut_sets;
        for (int p : {2, 3, 4}) {
          std::vector<Index> cuts;
          for (int r = 1; r < p; ++r) cuts.push_back(batch_share(b, r, p).first);
          cut_sets.push_back(cuts);
        }
        if (b <= 40) {
          std::vector<Index> every;
          for (Index k = unit; k < b; k += unit) every.push_back(k);
          cut_sets.push_back(every);
        }
        for (double clip : {kInf, 0.3}) {
          if (clip == kInf && b != 700) continue;
          for (int mode : {1, 2}) {
            if (clip == kInf && mode == 2) continue;  // the unclipped path once
            testing::ForcedThreads forced(mode, mode);
            const ClippedSum whole1 = model->clipped_gradient_sum(x, data, idx, clip);
            const ClippedSum whole2 = model->clipped_difference_sum(x, x_prev, data, idx, clip);
            // spider-mf-adaptive's consistent O2, inner clip 0.5
            const ClippedSum whole3 = model->clipped_consistent_difference_sum(x, x_prev, data, idx, 0.5, clip);
            for (const auto& cuts : cut_sets) {
              for (bool base : {false, true}) {
                if (base && mode == 2) continue;  // the base form has no threads
                SCOPED_TRACE("b " + std::to_string(b) + " clip " + std::to_string(clip) + " threads " +
                             std::to_string(mode) + " pieces " + std::to_string(cuts.size() + 1) +
                             (base ? " base form" : ""));
                const ClippedSum got1 = chained(*model, data, idx, cuts, x, nullptr, clip, base);
                const ClippedSum got2 = chained(*model, data, idx, cuts, x, &x_prev, clip, base);
                EXPECT_TRUE(same_bits(got1.sum, whole1.sum));
                EXPECT_TRUE(same_bits(got2.sum, whole2.sum));
                EXPECT_EQ(got1.clipped, whole1.clipped);
                EXPECT_EQ(got2.clipped, whole2.clipped);
                const ClippedSum got3 = chained(*model, data, idx, cuts, x, &x_prev, clip, base, true);
                EXPECT_TRUE(same_bits(got3.sum, whole3.sum));
                EXPECT_EQ(got3.clipped, whole3.clipped);
              }
            }
          }
        }
      }
    }
  }
}

TEST(ChainedSum, BatchSharesCoverTheBatchInUnits) {
  const Index unit = Model::share_unit();
  for (Index b : {Index{1}, Index{3}, Index{8}, Index{9}, Index{100}, Index{1001}}) {
    for (int p : {1, 2, 3, 4, 7}) {
      Index next = 0;
      for (int r = 0; r < p; ++r) {
        const BatchShare s = batch_share(b, r, p);
        EXPECT_EQ(s.first, next) << "b " << b << " p " << p << " r " << r;
        EXPECT_LE(s.first, s.end);
        EXPECT_TRUE(s.first % unit == 0 || s.first == b);
        next = s.end;
      }
      EXPECT_EQ(next, b);
    }
  }
}

TEST(ChainedSum, AStartOfTheWrongSizeIsRefused) {
  const Dataset data = testing::make_test_data(50, 5, Labels::kBinary, false, 3);
  const auto model = make_model("logistic", 5);
  const IndexList idx = {0, 1, 2};
  const SumStart wrong = [](Vec& s) { s = Vec::Zero(4); };
  EXPECT_CONTAINS(testing::error_of([&] { model->chained_gradient_sum(Vec::Zero(5), data, idx, 1.0, wrong); }),
                  "the start has 4 entries, expected 5");
}

}  // namespace
}  // namespace dpsosp
