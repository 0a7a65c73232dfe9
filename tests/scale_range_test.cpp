// The private box estimate's public range (include/dpsosp/scaling.hpp, step
// 1): [-2^40, 2^40] since it was widened from [-2^20, 2^20]. A column inside
// the old range gets the same box as before, to the bit; a column beyond it
// a box around its bulk; a column at the new top a warning.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "dpsosp/scaling.hpp"
#include "test_keys.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

using testing::test_noise_key;

// Six columns inside [-2^20, 2^20] from raw mt19937_64 words (the same
// numbers on every standard library): about 1000, about 0.002, signed in
// [-3, 3], in [6e5, 1.04e6] with every 40th exactly 2^20 (the old top bin's
// closed edge), negative about -100, about 200.
RowMatrix old_range_columns(Index n) {
  std::mt19937_64 g(11);
  const auto u = [&] { return static_cast<double>(g() >> 11) * 0x1p-53; };
  RowMatrix m(n, 6);
  for (Index i = 0; i < n; ++i) {
    const double a = u(), b = u(), c = u(), d = u(), e = u(), f = u(), h = u(), k = u();
    m(i, 0) = 1000 + 300 * (a + b + c - 1.5);
    m(i, 1) = 0.001 + 0.002 * d;
    m(i, 2) = 6 * (e - 0.5);
    m(i, 3) = i % 40 == 0 ? 1048576.0 : 6e5 + 4.4e5 * f;
    m(i, 4) = -(50 + 100 * h);
    m(i, 5) = 200 + 50 * (k + a - 1);
  }
  return m;
}

void expect_boxes(const std::vector<ColumnBox>& got, const std::vector<ColumnBox>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t c = 0; c < want.size(); ++c) {
    EXPECT_EQ(got[c].lower, want[c].lower) << what << " column " << c;
    EXPECT_EQ(got[c].upper, want[c].upper) << what << " column " << c;
    EXPECT_EQ(got[c].found, want[c].found) << what << " column " << c;
    EXPECT_FALSE(got[c].top) << what << " column " << c;
  }
}

// Two steps of a private run (eps 1, delta 1e-6, the tests' key) of `model`
// with an intercept on `data` scaled as `so` says: what minimize_scaled
// estimates and warns.
ScaledSummary two_scaled_steps(const char* model_name, const Dataset& data, const ScalingOptions& so) {
  ModelOptions mo;
  mo.fit_intercept = true;
  const auto model = make_model(model_name, data.cols(), mo);
  RunOptions o;
  o.privacy = PrivacyTarget{1.0, 1e-6};
  o.seed = 7;
  o.noise_key = test_noise_key();
  o.max_steps = 2;
  return minimize_scaled(*model, data, Vec::Zero(model->dim()), o, so);
}

// The boxes the estimate gave these columns before the range was widened: the
// values printed (%a) by estimate_boxes of commit 3cad76f (grid [-2^20, 2^20])
// on old_range_columns(3000) and the tests' key. Float mode with two
// histograms (sigma 9.8, the last column 6), the first histogram alone (its
// one-sided boxes since bounded below by the lowest octave kept, where the
// kept counts hold 80% of the records: scaling.hpp),
// secure mode (discrete scale 10), and hopeless noise (20 records, sigma
// 1000: nothing stands out, the fallback's guess) in both modes. The hopeless
// rows are noise alone, and since the guess takes the public prior that a
// column is non-negative (odds 20 to 1, weighing sigma^2 log 20 / n = 1.5e5
// counts here) they are the largest positive pairs (before: four negative).
TEST(ScaleRange, ColumnsInsideTheOldRangeKeepTheirBoxesToTheBit) {
  const RowMatrix m = old_range_columns(3000);
  const NoiseKey key = test_noise_key();
  expect_boxes(estimate_boxes(m, 9.8, false, 0, key, false, 6.0),
               {{0x1.4a5a9ea958fb4p+9, 0x1.4f49df5fdeb7bp+10, true},
                {0x1.e9472c760195cp-11, 0x1.8d392aa664625p-9, true},
                {-0x1.70a7fbd3eac91p+1, 0x1.72306bc1cd2d7p+1, true},
                {0x1.1d6da546a85bep+19, 0x1p+20, true},
                {-0x1.35f075005700ap+7, -0x1.764776a2f3e9p+5, true},
                {0x1.3b74b08b860a1p+7, 0x1.e4ec3ff265a47p+7, true}},
               "float");
  expect_boxes(estimate_boxes(m, 9.8, false, 0, key, true, 6.0),
               {{0x1p+9, 0x1p+11, true},
                {0x1p-10, 0x1p-8, true},
                {-0x1p+2, 0x1p+2, true},
                {0x1p+19, 0x1p+20, true},
                {-0x1p+8, -0x1p+5, true},
                {0x1p+7, 0x1p+8, true}},
               "float, magnitude only");
  expect_boxes(estimate_boxes(m, 10.0, true, 10, key),
               {{0x1.575604189374cp+9, 0x1.488463a2b2237p+10, true},
                {0x1.daf5623029578p-11, 0x1.8fc02152c9adp-9, true},
                {-0x1.71c6f74f6e6fcp+1, 0x1.70809770119fcp+1, true},
                {0x1.2318c6318c632p+19, 0x1p+20, true},
                {-0x1.34479dff5f2cfp+7, -0x1.764da523902e8p+5, true},
                {0x1.3b40d81b902f7p+7, 0x1.e602c47f4ee03p+7, true}},
               "secure");
  const RowMatrix few = m.topRows(20);
  expect_boxes(estimate_boxes(few, 1000.0, false, 0, key),
               {{0, 0x1p-9, false},
                {0, 0x1p-15, false},
                {0, 0x1p-19, false},
                {0x1p-11, 0x1.4p-11, false},
                {0, 0x1p-1, false},
                {0, 0x1p+15, false}},
               "hopeless float");
  expect_boxes(estimate_boxes(few, 1000.0, true, 1000, key),
               {{0, 0x1p+15, false},
                {0, 0x1p-5, false},
                {0, 0x1p+9, false},
                {0, 0x1p+11, false},
                {0, 0x1p-14, false},
                {0, 0x1p+17, false}},
               "hopeless secure");
}

// Columns around +-3e6 (clamped near 1.05e6 before) and around 5e11 get a box
// around their bulk, exactly and with noise, in both modes; none is at the top.
TEST(ScaleRange, ColumnsBeyondTheOldRangeGetABoxAroundTheirBulk) {
  std::mt19937_64 g(5);
  std::normal_distribution<double> z(0, 1);
  const Index n = 2000;
  RowMatrix m(n, 3);
  for (Index i = 0; i < n; ++i) m.row(i) << 3e6 + 3e5 * z(g), -(3e6 + 3e5 * z(g)), 2e11 + 2e10 * z(g);
  const NoiseKey key = test_noise_key();
  for (const auto& [sigma, secure] : {std::pair{0.0, false}, std::pair{9.0, false}, std::pair{9.0, true}}) {
    const std::vector<ColumnBox> b = estimate_boxes(m, sigma, secure, secure ? 9 : 0, key);
    // The 2% and 98% points are 2.38e6 and 3.62e6; S = 2^22, bins of 262144.
    EXPECT_LT(b[0].lower, 2.7e6) << sigma << secure;
    EXPECT_GT(b[0].lower, 2.0e6) << sigma << secure;
    EXPECT_GT(b[0].upper, 3.4e6) << sigma << secure;
    EXPECT_LE(b[0].upper, 0x1p+22) << sigma << secure;
    EXPECT_GT(b[1].upper, -2.7e6) << sigma << secure;
    EXPECT_LT(b[1].lower, -3.4e6) << sigma << secure;
    EXPECT_GE(b[1].lower, -0x1p+22) << sigma << secure;
    EXPECT_LT(b[2].lower, 1.8e11) << sigma << secure;
    EXPECT_GT(b[2].upper, 2.2e11) << sigma << secure;
    for (const ColumnBox& c : b) {
      EXPECT_TRUE(c.found);
      EXPECT_FALSE(c.top);
    }
  }
}

// A column around 1e13 reaches the top octave: its box is clamped at 2^40 and
// flagged, so that minimize_scaled warns (a feature by its 0-based index, the
// target by name); a column inside the range is not flagged.
TEST(ScaleRange, TheTopOfTheRangeIsFlaggedAndWarned) {
  const Index n = 3000;
  std::mt19937_64 g(6);
  std::normal_distribution<double> z(0, 1);
  RowMatrix X(n, 2);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    X(i, 0) = 5 + z(g);
    X(i, 1) = 1e13 * (1 + 0.1 * z(g));
    y[i] = 2 * X(i, 0) + 1e13 + 1e11 * z(g);
  }
  const std::vector<ColumnBox> b = estimate_boxes(X, 9.0, false, 0, test_noise_key());
  EXPECT_FALSE(b[0].top);
  EXPECT_TRUE(b[1].top);
  EXPECT_EQ(b[1].upper, kScaleRangeTop);
  EXPECT_GE(b[1].lower, 0x1p+39);

  ScalingOptions so;
  so.target = so.estimate_features = so.estimate_target = true;
  const ScaledSummary r = two_scaled_steps("linear", Dataset(X, y), so);
  EXPECT_EQ(r.scaling.upper[1], kScaleRangeTop);
  EXPECT_EQ(r.scaling.y_upper, kScaleRangeTop);
  int feature = 0, target = 0, other = 0;
  for (const std::string& w : r.summary.warnings) {
    if (w.find("top octave") == std::string::npos) continue;
    feature += w.rfind("scale: feature 1 (0-based) reaches the top octave", 0) == 0;
    target += w.rfind("scale: the target reaches the top octave", 0) == 0;
    other += w.find("feature 0 ") != std::string::npos;
    EXPECT_NE(w.find("beyond +-2^40"), std::string::npos) << w;
  }
  EXPECT_EQ(feature, 1);
  EXPECT_EQ(target, 1);
  EXPECT_EQ(other, 0);
}

// Step 1's octave pairs (few records: n < 4 sigma) reach 2^20: a column at
// 3e6 takes their top pair, (2^18, 2^20], flagged so that minimize_scaled
// warns that its values beyond +-2^20 are clamped (declare its bounds). 100
// records at sigma 26: a column at 3e6 wins the top pair with probability
// 0.956, a column at 5 with 0.002 (the 41 other pairs' noise, the negative
// ones less the prior's 20.3; numpy, 4e5 draws), so at least 85 of 100 and at
// most 3 of 100 (binomial false failures 8e-6 and 7e-5). Then a run of 120
// records of 20 columns (10 at 3e6, 10 at 5; the pairs at the 0.4 share,
// sigma 42) warns for exactly the features whose box is the top pair's, and
// for some (each about 0.7: none in 10, 1e-5).
TEST(ScaleRange, TheTopOfTheFewRecordsPairsIsFlaggedAndWarned) {
  std::mt19937_64 g(9);
  std::uniform_real_distribution<double> u(0, 1);
  RowMatrix m(100, 200);
  for (Index i = 0; i < 100; ++i)
    for (Index c = 0; c < 200; ++c) m(i, c) = c < 100 ? 3e6 * (1 + 0.1 * u(g)) : 4 + 2 * u(g);
  int big = 0, small = 0;
  const std::vector<ColumnBox> b = estimate_boxes(m, 26.0, false, 0, test_noise_key(), true);
  for (Index c = 0; c < 200; ++c) {
    const ColumnBox& x = b[static_cast<std::size_t>(c)];
    (c < 100 ? big : small) += x.pairs_top;
    if (x.pairs_top) EXPECT_EQ(x.upper, 0x1p+20) << c;
    EXPECT_FALSE(x.top) << c;
  }
  EXPECT_GE(big, 85);
  EXPECT_LE(small, 3);

  const Index n = 120;
  RowMatrix X(n, 20);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < 20; ++c) X(i, c) = c % 2 ? 3e6 * (1 + 0.1 * u(g)) : 4 + 2 * u(g);
    y[i] = u(g) < 0.5 ? 0.0 : 1.0;
  }
  ScalingOptions so;
  so.estimate_features = true;
  so.automatic_share = true;
  const ScaledSummary r = two_scaled_steps("logistic", Dataset(X, y), so);
  EXPECT_EQ(r.scaling.histograms, 1);
  EXPECT_EQ(r.scaling.share, 0.4);
  int flagged = 0;
  for (Index c = 0; c < 20; ++c) {
    const std::string head = "scale: feature " + std::to_string(c) + " (0-based) reaches the top of the few-records";
    int warned = 0;
    for (const std::string& w : r.summary.warnings)
      if (w.rfind(head, 0) == 0) {
        ++warned;
        EXPECT_NE(w.find("beyond +-2^20"), std::string::npos) << w;
      }
    const bool top_pair = r.scaling.lower[static_cast<std::size_t>(c)] == 0x1p+18 &&
                          r.scaling.upper[static_cast<std::size_t>(c)] == 0x1p+20;
    EXPECT_EQ(warned, top_pair ? 1 : 0) << c;
    flagged += top_pair;
  }
  EXPECT_GE(flagged, 1);
}

// A regression whose target is about 3e6 (and one of whose features is): the
// boxes hold the bulk, and the private fit explains most of the variance in
// the user's units (before the widening: a target box [983040, 1048576]).
TEST(ScaleRange, ARegressionAroundThreeMillionFits) {
  const auto table = [](Index n, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::normal_distribution<double> z(0, 1);
    RowMatrix X(n, 2);
    Vec y(n);
    for (Index i = 0; i < n; ++i) {
      X(i, 0) = 3e6 + 5e5 * z(g);
      X(i, 1) = 2 * z(g);
      y[i] = 3e6 + 0.8 * (X(i, 0) - 3e6) + 1e5 * X(i, 1) + 5e4 * z(g);
    }
    return Dataset(std::move(X), std::move(y));
  };
  const Dataset train = table(4000, 1), test = table(2000, 2);
  const auto model = testing::with_intercept("linear", 2);
  const ScaledSummary r =
      minimize_scaled(*model, train, Vec::Zero(3), testing::private_run(3.0), testing::estimate_every_box());
  EXPECT_LT(r.scaling.y_lower, 2.2e6);
  EXPECT_GT(r.scaling.y_upper, 3.8e6);
  EXPECT_LT(r.scaling.lower[0], 2.2e6);
  EXPECT_GT(r.scaling.upper[0], 3.8e6);
  for (const std::string& w : r.summary.warnings) EXPECT_EQ(w.find("top octave"), std::string::npos) << w;
  EXPECT_GT(testing::r_squared(*model, *r.x_user, test), 0.6);
}

// Secure mode draws column c's counts of release r from discrete stream
// 100 + 100000 r + c: 100000 columns or more are refused before any noise.
TEST(ScaleRange, SecureStreamsStayDistinct) {
  const RowMatrix wide = RowMatrix::Zero(1, 100000);
  EXPECT_THROW(estimate_boxes(wide, 10.0, true, 10, test_noise_key()), Error);
  EXPECT_NO_THROW(estimate_boxes(RowMatrix::Zero(1, 3), 10.0, true, 10, test_noise_key()));
}

}  // namespace
}  // namespace dpsosp
