// Scale as part of the privacy contract (include/dpsosp/scaling.hpp): the
// private box estimate's known answers, the unit map and its round trip to the
// user's units, and that nothing but the covered
// estimate depends on the records.
#include "dpsosp/scaling.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"
#include "test_scaling_data.hpp"

namespace dpsosp {
namespace {

using testing::estimate_every_box;
using testing::private_run;
using testing::r_squared;
using testing::regression;
using testing::test_noise_key;
using testing::with_intercept;

// n records: column 0 ~ N(1000, 100^2) (a large feature, far from 0), column 1
// ~ U(0.001, 0.003) (a small one), column 2 ~ N(0, 1).
RowMatrix columns(Index n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> z(0, 1);
  std::uniform_real_distribution<double> u(0.001, 0.003);
  RowMatrix m(n, 3);
  for (Index i = 0; i < n; ++i) m.row(i) << 1000 + 100 * z(g), u(g), z(g);
  return m;
}

// Known answers without noise: the 2% and 98% points of each column, to within
// the 16-bin grid on [-S, S] (S the octave edge above the 98% point of |x|).
TEST(Scaling, ExactBoxesFindTheBulkOfEachColumn) {
  const RowMatrix m = columns(20000, 1);
  const std::vector<ColumnBox> b = estimate_boxes(m, 0.0, false, 0, test_noise_key());
  ASSERT_EQ(b.size(), 3u);
  // N(1000, 100): 2% / 98% points 795 / 1205; S = 2048, bins of 256.
  EXPECT_NEAR(b[0].lower, 795, 256);
  EXPECT_NEAR(b[0].upper, 1205, 256);
  EXPECT_GT(b[0].lower, 500);
  // U(0.001, 0.003): 0.00104 / 0.00296; S = 2^-8 = 0.0039, bins of 0.00049.
  EXPECT_NEAR(b[1].lower, 0.00104, 0.0005);
  EXPECT_NEAR(b[1].upper, 0.00296, 0.0005);
  // N(0, 1): -2.05 / 2.05; S = 4, bins of 0.5.
  EXPECT_NEAR(b[2].lower, -2.05, 0.5);
  EXPECT_NEAR(b[2].upper, 2.05, 0.5);
  for (const ColumnBox& c : b) EXPECT_TRUE(c.found);
}

// With noise (sigma = 2 sqrt(3) / mu at mu = 0.5: about 7 on counts of 2000),
// fixed key: the same answers within the tolerance of one more bin, and the
// same bits for the same key.
TEST(Scaling, PrivateBoxesAtFixedKeyMatchTheExactOnesWithinABin) {
  const RowMatrix m = columns(2000, 2);
  const double sigma = 2 * std::sqrt(3.0) / 0.5;
  const std::vector<ColumnBox> exact = estimate_boxes(m, 0.0, false, 0, test_noise_key());
  const std::vector<ColumnBox> a = estimate_boxes(m, sigma, false, 0, test_noise_key());
  const std::vector<ColumnBox> again = estimate_boxes(m, sigma, false, 0, test_noise_key());
  const double widths[3] = {256, 0.0005, 0.5};
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(a[c].lower, exact[c].lower, 2 * widths[c]) << c;
    EXPECT_NEAR(a[c].upper, exact[c].upper, 2 * widths[c]) << c;
    EXPECT_EQ(a[c].lower, again[c].lower);
    EXPECT_EQ(a[c].upper, again[c].upper);
  }
}

// A column with no count above the threshold (noise far above n) falls back
// to the pair of octaves with the largest noisy count... or whatever the noise
// alone put above it: in every case a box inside the public range, never NaN;
// the fallback's guess within [-2^20, 2^20] (scaling.hpp).
TEST(Scaling, HopelessNoiseGivesABoxInsideThePublicRange) {
  const RowMatrix m = columns(20, 3);
  const std::vector<ColumnBox> b = estimate_boxes(m, 1000.0, false, 0, test_noise_key());
  for (const ColumnBox& c : b) {
    EXPECT_TRUE(std::isfinite(c.lower) && std::isfinite(c.upper));
    EXPECT_LT(c.lower, c.upper);
    EXPECT_GE(c.lower, c.found ? -kScaleRangeTop : -1048576.0);
    EXPECT_LE(c.upper, c.found ? kScaleRangeTop : 1048576.0);
  }
}

// Where no count of n records could clear step 1's threshold (n < 4 sigma),
// step 1 counts octave pairs, one noise draw each (scaling.hpp). 200 columns
// of 100 records at +3 (even columns) or -3 (odd), sigma 30: every box is a
// pair, [S / 4, S] or [-S, -S / 4] with S an even power of two (or the pair
// [0, 2^-20] at 0), and the right one, [1, 4] or [-4, -1], wins where the
// true pair's count (100 plus noise) beats the 41 others' noise, the negative
// pairs' less the prior's sigma^2 log(20) / n = 27 (a column is non-negative
// with odds 20 to 1): probability 0.898 for a positive column and 0.678 for
// a negative one (without the prior 0.853 both; the octaves' argmax, two
// draws a pair, 0.65; numpy, 4e5 draws). So at least 76 of the 100 positive
// and 48 of the 100 negative columns (binomial false failures 1.8e-5 and
// 1.4e-5 a mode). At sigma 20 (n >= 4 sigma) the octaves are counted as
// before, and the threshold keeps the count of 100 in most columns
// (probability 0.84).
TEST(Scaling, WhereNoCountCanClearTheThresholdOctavePairsAreCounted) {
  const Index n = 100, C = 200;
  RowMatrix m(n, C);
  for (Index c = 0; c < C; ++c) m.col(c).setConstant(c % 2 ? -3.0 : 3.0);
  for (const bool secure : {false, true}) {
    const std::vector<ColumnBox> b = estimate_boxes(m, 30.0, secure, secure ? 30 : 0, test_noise_key(), true);
    int positive = 0, negative = 0;
    for (Index c = 0; c < C; ++c) {
      const ColumnBox& x = b[static_cast<std::size_t>(c)];
      EXPECT_FALSE(x.found) << c;
      int e = 0;
      const double S = std::max(x.upper, -x.lower), L = std::min(std::abs(x.lower), std::abs(x.upper));
      EXPECT_EQ(std::frexp(S, &e), 0.5) << c;  // S = 2^(e - 1)
      EXPECT_EQ((e - 1) % 2, 0) << c << " S " << S;
      EXPECT_EQ(L, S == 0x1p-20 ? 0.0 : S / 4) << c;
      if (c % 2)
        negative += x.lower == -4 && x.upper == -1;
      else
        positive += x.lower == 1 && x.upper == 4;
    }
    EXPECT_GE(positive, 76) << secure;
    EXPECT_GE(negative, 48) << secure;
  }
  int found = 0;
  for (const ColumnBox& x : estimate_boxes(m, 20.0, false, 0, test_noise_key(), true)) found += x.found;
  EXPECT_GE(found, 140);
}

// Step 1 keeps the octaves above its threshold in the bulk's cluster only:
// the largest one above octave 0 and those reached from it across gaps of at
// most one octave, and octave 0 (scaling.hpp). 10000 columns of 200 records
// in [2, 4) at sigma 10 (two histograms): a lone count of noise above 4 sigma
// among the 120 other bins (3.2e-5 a bin) far above the bulk set the box's
// end there before, in about 0.25% of the columns (78 bins above it: about 25
// columns here; the chance of none, 1e-11); now no box reaches past 16 (the
// bulk's octave and a gap). Exact counts (sigma 0): 4% of the records at 1e9
// no longer stretch the box to 2^30 (they are clipped to it), a gap of one
// octave joins two modes, and the zeros of a mostly-zero column stay in.
TEST(Scaling, OnlyTheBulksOctavesSetTheBox) {
  const Index n = 200, C = 10000;
  RowMatrix m(n, C);
  std::mt19937_64 g(8);
  std::uniform_real_distribution<double> u(2.0, 4.0);
  for (Index c = 0; c < C; ++c)
    for (Index i = 0; i < n; ++i) m(i, c) = u(g);
  int far = 0;
  for (const ColumnBox& x : estimate_boxes(m, 10.0, false, 0, test_noise_key())) far += x.upper > 16 || x.lower < -16;
  EXPECT_EQ(far, 0);
  RowMatrix e(1000, 3);
  for (Index i = 0; i < 1000; ++i)
    e.row(i) << (i < 40 ? 1e9 : 64 + 0.06 * static_cast<double>(i)), (i % 2 ? 1.5 : 5.0), (i % 10 < 7 ? 0.0 : 9.0);
  for (const bool one : {false, true}) {
    const std::vector<ColumnBox> b = estimate_boxes(e, 0.0, false, 0, test_noise_key(), one);
    EXPECT_LE(b[0].upper, 128) << one;
    EXPECT_GE(b[0].lower, 0) << one;
    EXPECT_GE(b[1].upper, 5.0) << one;
    EXPECT_LE(b[1].lower, 1.5) << one;
    EXPECT_LE(b[2].lower, 0.0) << one;
    EXPECT_GE(b[2].upper, 9.0) << one;
  }
}

// Octaves are closed above: a power of two is the top of its octave, so
// that integer data reaching 16 (a digit's pixel) or a proportion reaching 1
// keeps S = 16 or 1 rather than twice it (with [2^k, 2^(k+1)) octaves the map
// sent a pixel's 16 to -0.33 of [8, 32]). Step 1 alone, exact counts: a
// column of values 9 to 16, each once in 8 records; 0 or 1 with one in
// three at 0; 1 or 0.25. And where octave 0 (the zeros) holds half the
// records, the median is 0 and the box is [-S, S] (zeros map to 0): 70% zeros
// and values 9 to 16; at 40% zeros the box stays [0, S].
TEST(Scaling, PowersOfTwoTopTheirOctaveAndZeroMediansCentreTheBox) {
  const Index n = 800;
  RowMatrix m(n, 5);
  for (Index i = 0; i < n; ++i) {
    const double pixel = static_cast<double>(9 + i % 8);
    m.row(i) << pixel, (i % 3 == 0 ? 0.0 : 1.0), (i % 2 ? 1.0 : 0.25), (i % 10 < 7 ? 0.0 : pixel),
        (i % 10 < 4 ? 0.0 : pixel);
  }
  const std::vector<ColumnBox> b = estimate_boxes(m, 0.0, false, 0, test_noise_key(), true);
  EXPECT_EQ(b[0].lower, 8);
  EXPECT_EQ(b[0].upper, 16);
  EXPECT_EQ(b[1].lower, 0);
  EXPECT_EQ(b[1].upper, 1);
  EXPECT_EQ(b[2].lower, 0.125);
  EXPECT_EQ(b[2].upper, 1);
  EXPECT_EQ(b[3].lower, -16);
  EXPECT_EQ(b[3].upper, 16);
  EXPECT_EQ(b[4].lower, 0);
  EXPECT_EQ(b[4].upper, 16);
}

// The box is centred on the column's median, so that the map onto [-1, 1]
// sends the bulk near 0. A column of mostly zeros (a dark pixel: 90% at 0,
// the rest in [0.5, 1]) is centred on exactly 0 (the atom at the domain's
// edge holds the zeros): a zero stays 0, exactly and with noise; a skewed
// column (10 + Exp(1), median 10.69) is centred within a bin (S = 16, bins of
// 1) of its median.
TEST(Scaling, BoxesAreCentredOnTheMedian) {
  const Index n = 10000;
  std::mt19937_64 g(4);
  std::uniform_real_distribution<double> lit(0.5, 1.0);
  std::exponential_distribution<double> e(1.0);
  RowMatrix m(n, 2);
  for (Index i = 0; i < n; ++i) m.row(i) << (i % 10 == 0 ? lit(g) : 0.0), 10 + e(g);
  for (double sigma : {0.0, 2 * std::sqrt(2.0) / 0.5}) {
    const std::vector<ColumnBox> b = estimate_boxes(m, sigma, false, 0, test_noise_key());
    EXPECT_EQ(b[0].lower, -b[0].upper) << sigma;
    EXPECT_GT(b[0].upper, 0) << sigma;
    EXPECT_NEAR(0.5 * (b[1].lower + b[1].upper), 10 + std::log(2.0), 1.0) << sigma;
    EXPECT_GT(b[1].upper, 13) << sigma;  // the 98% point, 13.9, within a bin
    Scaling s;
    s.lower = {b[0].lower, b[1].lower};
    s.upper = {b[0].upper, b[1].upper};
    const Dataset unit = s.apply(Dataset(RowMatrix(m.topRows(2)), Vec()));
    EXPECT_EQ(unit.dense()(1, 0), 0.0) << sigma;  // record 1's zero
  }
}

// The unit map round trip: x_user on raw records inside the box gives the
// predictions of x on their unit records, mapped back to the user's units.
TEST(Scaling, UserUnitsPointReproducesThePredictions) {
  const Dataset data = regression(400, 4);
  ModelOptions mo;
  mo.fit_intercept = true;
  const auto model = make_model("linear", 2, mo);
  Scaling s;
  s.lower = {0, -1};
  s.upper = {100, 1};
  s.has_target = true;
  s.y_lower = 0;
  s.y_upper = 500;
  const Vec x = (Vec(3) << 0.3, -0.2, 0.05).finished();
  const std::optional<Vec> xu = user_units_point(*model, x, s);
  ASSERT_TRUE(xu.has_value());
  const Dataset unit = s.apply(data);
  const Vec unit_pred = predict(*model, x, unit);
  const Vec raw_pred = predict(*model, *xu, data);
  for (Index i = 0; i < data.rows(); ++i)
    EXPECT_NEAR(raw_pred[i], s.target_to_user(unit_pred[i]), 1e-9 * (1 + std::abs(raw_pred[i])));
  // The unit records lie in [-1, 1], the labels too.
  EXPECT_LE(unit.dense().cwiseAbs().maxCoeff(), 1.0);
  EXPECT_LE(unit.labels().cwiseAbs().maxCoeff(), 1.0);
  // softmax: every class's row.
  ModelOptions so;
  so.fit_intercept = true;
  so.classes = 3;
  const auto soft = make_model("softmax", 2, so);
  Scaling f = s;
  f.has_target = false;
  const Vec xs = (Vec(9) << 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, -0.8, 0.9).finished();
  const Vec xsu = *user_units_point(*soft, xs, f);
  const RowMatrix pu = predict_proba(*soft, xs, f.apply(data));
  const RowMatrix pr = predict_proba(*soft, xsu, data);
  EXPECT_LT((pu - pr).cwiseAbs().maxCoeff(), 1e-12);
  // No intercept (no place for the offset) or normalize: no user-units point.
  EXPECT_FALSE(user_units_point(*make_model("linear", 2), Vec::Zero(2), s).has_value());
  Scaling n = s;
  n.normalize = true;
  EXPECT_FALSE(user_units_point(*model, x, n).has_value());
}

// scale "auto" where the estimate cannot work, from public facts alone: at
// n = 500, eps 1, 2000 columns give counts' noise sigma = 2 sqrt(C) / mu_s of
// about 660 >= n, so the features run as they are with a warning, and the
// target (one column, sigma about 15) is still estimated; asked for
// explicitly, the same run is refused. A sparse X is never mapped by auto.
TEST(Scaling, AutoLeavesWhatItCannotEstimateAsItIs) {
  RunOptions o = private_run(1.0);
  o.estimate.G = o.estimate.M = false;  // G = M = 1: the test is about the scale
  const double mu_s = 0.5 * privacy::gdp_mu(1.0, 1e-6);
  EXPECT_NEAR(scale_count_noise(2000, o, 0.25), 2 * std::sqrt(2000.0) / mu_s, 1e-9);
  EXPECT_GE(scale_count_noise(2000, o, 0.25), 500.0);
  EXPECT_LT(scale_count_noise(1, o, 0.25), 500.0);
  const Index p = 2000, n = 500;
  RowMatrix X = RowMatrix::Zero(n, p);
  Vec y(n);
  for (Index i = 0; i < n; ++i) {
    X(i, i % p) = 1;
    y[i] = 100 + static_cast<double>(i % 7);
  }
  const Dataset data(X, y);
  ModelOptions mo;
  mo.fit_intercept = true;
  const auto model = make_model("linear", p, mo);
  ScalingOptions so;
  so.target = so.estimate_features = so.estimate_target = true;
  so.automatic = true;
  o.max_steps = 2;
  const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(p + 1), o, so);
  EXPECT_FALSE(r.scaling.maps_features());
  EXPECT_EQ(r.scaling.feature_source, "none");
  EXPECT_EQ(r.scaling.target_source, "private");
  EXPECT_EQ(r.scaling.columns, 1);
  bool warned = false;
  for (const std::string& w : r.summary.warnings) warned |= w.rfind("scale: the 2000 features run as they are", 0) == 0;
  EXPECT_TRUE(warned);
  so.automatic = false;
  EXPECT_THROW(minimize_scaled(*model, data, Vec::Zero(p + 1), o, so), Error);
  // Sparse records: auto leaves them as they are (no warning: the documented default); explicit is refused.
  std::vector<Eigen::Triplet<double, std::int64_t>> t;
  for (Index i = 0; i < n; ++i) t.emplace_back(i, i % 3, 1.0 + static_cast<double>(i % 5));
  SparseRowMatrix S(n, 3);
  S.setFromTriplets(t.begin(), t.end());
  const Dataset sparse(S, y);
  const auto small = make_model("linear", 3, mo);
  so.automatic = true;
  const ScaledSummary q = minimize_scaled(*small, sparse, Vec::Zero(4), o, so);
  EXPECT_FALSE(q.scaling.maps_features());
  so.automatic = false;
  EXPECT_THROW(minimize_scaled(*small, sparse, Vec::Zero(4), o, so), Error);
}

// Regression that works: on y = 200 + 3 (x0 - 50) + 1000 x1 + noise (R^2 about
// 0.95 for the true line), raw units, everything estimated privately at eps 3,
// the fit explains most of the variance in the user's units.
TEST(Scaling, PrivateLinearRegressionOnRawUnitsFits) {
  const Dataset train = regression(4000, 6), test = regression(2000, 7);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  const ScaledSummary r = minimize_scaled(*model, train, Vec::Zero(3), private_run(3.0), so);
  EXPECT_GT(r_squared(*model, *r.x_user, test), 0.6);
}

// Neighbouring datasets (one record replaced by an extreme one): every field
// fixed before the noise is the same; only the covered estimate (the box) and
// what follows from it may differ.
TEST(Scaling, NeighboursShareEverythingFixedBeforeTheNoise) {
  Dataset a = regression(1000, 8);
  RowMatrix X = a.dense();
  Vec y = a.labels();
  X.row(0) << 1e9, -1e9;
  y[0] = 1e12;
  const Dataset b(X, y);
  const auto model = with_intercept("linear", 2);
  ScalingOptions so = estimate_every_box();
  const ScaledSummary ra = minimize_scaled(*model, a, Vec::Zero(3), private_run(1.0), so);
  const ScaledSummary rb = minimize_scaled(*model, b, Vec::Zero(3), private_run(1.0), so);
  EXPECT_EQ(ra.scaling.mu, rb.scaling.mu);
  EXPECT_EQ(ra.scaling.count_noise, rb.scaling.count_noise);
  EXPECT_EQ(ra.scaling.columns, rb.scaling.columns);
  EXPECT_EQ(ra.scaling.share, rb.scaling.share);
  EXPECT_EQ(ra.summary.privacy.epsilon, rb.summary.privacy.epsilon);
  EXPECT_EQ(ra.summary.privacy.mu, rb.summary.privacy.mu);
  EXPECT_EQ(ra.summary.privacy.sigma, rb.summary.privacy.sigma);
  EXPECT_EQ(ra.summary.reserved_records, rb.summary.reserved_records);
  // The extreme record moves counts by one: it cannot drag the box out to 1e9.
  EXPECT_LT(rb.scaling.upper[0], 1e4);
  EXPECT_LT(rb.scaling.y_upper, 1e4);
}

// Declared bounds cost nothing: the run gets the whole target and the box is
// the declared one; a bad declaration is refused in the option's words.
TEST(Scaling, DeclaredBoundsAreUsedAsGivenAndChecked) {
  const Dataset data = regression(3000, 9);
  ModelOptions mo;
  mo.fit_intercept = true;
  const auto model = make_model("linear", 2, mo);
  ScalingOptions so;
  so.target = true;
  so.bounds = {{0, 100}, {-0.05, 0.05}};
  so.y_bounds = Interval{0, 500};
  const ScaledSummary r = minimize_scaled(*model, data, Vec::Zero(3), private_run(1.0), so);
  EXPECT_EQ(r.scaling.feature_source, "declared");
  EXPECT_EQ(r.scaling.lower[1], -0.05);
  EXPECT_TRUE(r.scaling.composition.empty());
  EXPECT_NEAR(r.summary.privacy.epsilon, 1.0, 1e-9);
  ScalingOptions bad = so;
  bad.bounds = {{1, 0}};
  try {
    bad.Validate(2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bounds: expected finite lower < upper, got 1:0");
  }
  bad.bounds = {{0, 1}, {0, 1}, {0, 1}};
  EXPECT_THROW(bad.Validate(2), Error);
}

}  // namespace
}  // namespace dpsosp
