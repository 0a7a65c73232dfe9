// The clipping rule on extreme records (SPEC sections 2.2 and 8): a per-example
// vector whose squared norm overflows is scaled to the clip bound through its
// largest entry, one with a NaN or infinite entry contributes zero and is
// counted, and every path of the fused engine (serial and shared, wide
// kernels on and off, dense and sparse) agrees with the reference form bit for
// bit, so no record can make a sum non-finite.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "engine/wide_kernels.hpp"
#include "engine/work_sharing.hpp"
#include "test_data.hpp"

namespace dpsosp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ClipRule, FiniteVectorWhoseSquaredNormOverflowsIsScaledToTheBound) {
  Vec v(4);
  v << 3e200, -4e200, 0.0, 1e150;  // ||v||^2 = 2.5e401 overflows
  ASSERT_FALSE(std::isfinite(v.squaredNorm()));
  const Vec direction = v / 5e200;
  EXPECT_TRUE(clip_to_norm(v, 2.0));
  EXPECT_NEAR(v.norm(), 2.0, 1e-14);
  EXPECT_LT((v / 2.0 - direction).norm(), 1e-14);
}

TEST(ClipRule, VectorsWithNaNOrInfiniteEntriesBecomeZero) {
  for (const double bad : {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf}) {
    Vec v(3);
    v << 1.0, bad, -2.0;
    EXPECT_TRUE(clip_to_norm(v, 1.0));
    EXPECT_EQ(v, Vec::Zero(3));
    EXPECT_FALSE(std::signbit(v[0]));  // +0, as zeroing by clip c = 0 gives
  }
  // The non-private references do not clip: c = inf leaves any vector as it is.
  Vec w(2);
  w << std::numeric_limits<double>::quiet_NaN(), 1.0;
  EXPECT_FALSE(clip_to_norm(w, kInf));
  EXPECT_TRUE(std::isnan(w[0]));
}

using testing::Labels;

// n records of p features, a few of them extreme (every feature +-1e120,
// 1e200 or 1e300); sparse: entries below 0.8 in magnitude dropped.
Dataset extreme_data(Index n, Index p, Labels labels, bool sparse) {
  return testing::make_test_data(n, p, labels, sparse, 17, [](RowMatrix& x) {
    const double extremes[] = {1e120, -1e120, 1e200, 1e300, -1e300};
    for (int k = 0; k < 5; ++k) x.row(7 + 61 * k).setConstant(extremes[k]);
  });
}

struct Case {
  const char* model;
  Index p;
  Labels labels;
  bool sparse;
};

void expect_same(const ClippedSum& got, const ClippedSum& want, const std::string& what) {
  EXPECT_EQ(got.clipped, want.clipped) << what;
  EXPECT_EQ(got.nonfinite, want.nonfinite) << what;
  ASSERT_EQ(got.sum.size(), want.sum.size());
  for (Eigen::Index i = 0; i < got.sum.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got.sum[i], &want.sum[i], sizeof(double)), 0) << what << " entry " << i;
  }
}

// Every model, both oracles, a batch holding all the extreme records: the sum
// is finite and within b times the clip bound, and the fused engine gives the
// reference form's bits and counts on every path.
TEST(ClipRule, EveryEnginePathAgreesWithTheReferenceOnExtremeRecords) {
  const Case cases[] = {
      {"logistic", 37, Labels::kBinary, false},     {"logistic", 37, Labels::kBinary, true},
      {"sigmoid", 20, Labels::kBinary, false},      {"cauchy", 9, Labels::kReal, false},
      {"phase-retrieval", 8, Labels::kReal, false}, {"pca", 11, Labels::kNone, false},
      {"softmax", 29, Labels::kClasses, true},      {"mlp", 13, Labels::kClasses, false},
  };
  const int previous_threads = omp_get_max_threads();
  for (const Case& c : cases) {
    const std::string name = std::string(c.model) + (c.sparse ? " sparse" : " dense");
    SCOPED_TRACE(name);
    const Dataset data = extreme_data(600, c.p, c.labels, c.sparse);
    ModelOptions options;
    options.classes = c.labels == Labels::kClasses ? 3 : 0;
    options.hidden = 5;
    options.rank = 2;
    const auto model = make_model(c.model, c.p, options, &data);
    const auto d = static_cast<Eigen::Index>(model->dim());
    Vec x(d), x_prev(d);
    GaussianStream g(8, StreamPurpose::kTest, 2);
    g.fill(x, 0.4);
    g.fill(x_prev, 0.4);
    x_prev += x;
    IndexList idx(600);
    for (Index i = 0; i < 600; ++i) idx[i] = (i * 7) % 600;  // every record, in a scattered order
    for (const double clip : {0.5, 3.0}) {
      const ClippedSum ref_o1 = model->Model::clipped_gradient_sum(x, data, idx, clip);
      const ClippedSum ref_o2 = model->Model::clipped_difference_sum(x, x_prev, data, idx, clip);
      for (const ClippedSum* r : {&ref_o1, &ref_o2}) {
        EXPECT_TRUE(r->sum.allFinite());
        EXPECT_LE(r->sum.norm(), 600 * clip * (1 + 1e-9));
      }
      // (sigmoid's and the MLP's gradients vanish on extreme records: saturation)
      if (std::string(c.model) != "sigmoid" && std::string(c.model) != "mlp") EXPECT_GT(ref_o1.clipped, 0u);
      if (std::string(c.model) == "phase-retrieval" || std::string(c.model) == "pca") {
        EXPECT_GT(ref_o1.nonfinite, 0u) << "the 1e300 records overflow inside the model";
      }
      for (const bool wide_off : {false, true}) {
        detail::wide::turn_off_for_tests(wide_off);
        for (const int threads : {1, 2}) {
          omp_set_num_threads(threads);
          detail::ThreadChoice::force(threads);
          const std::string path = " threads " + std::to_string(threads) + (wide_off ? " wide off" : "");
          expect_same(model->clipped_gradient_sum(x, data, idx, clip), ref_o1, "O1" + path);
          expect_same(model->clipped_difference_sum(x, x_prev, data, idx, clip), ref_o2, "O2" + path);
        }
      }
      detail::ThreadChoice::force(0);
      detail::wide::turn_off_for_tests(false);
      omp_set_num_threads(previous_threads);
    }
  }
}

// An oracle's counts: the record whose gradient overflows to infinity (phase
// retrieval, features 1e120: (a.x)^3 a) is clipped to zero and counted as
// non-finite; the output stays finite.
TEST(ClipRule, OracleCountsTheNonFiniteVectorAndStaysFinite) {
  RowMatrix X = RowMatrix::Zero(4, 2);
  X << 1, 0, 0, 1, 1e120, 1e120, 1, 1;
  Vec y = Vec::Ones(4);
  const Dataset data(std::move(X), std::move(y));
  const auto model = make_model("phase-retrieval", 2);
  SamplePool pool(4, 3);
  GradientOracles oracles(*model, data, pool);
  const Vec x = Vec::Constant(2, 0.5);
  const OracleOutput o = oracles.o1(x, 4, 1.0);
  EXPECT_EQ(o.nonfinite, 1u);
  EXPECT_GE(o.clipped, 1u);
  EXPECT_TRUE(o.value.allFinite());
  EXPECT_LE(o.value.norm(), 1.0 + 1e-12);
}

}  // namespace
}  // namespace dpsosp
