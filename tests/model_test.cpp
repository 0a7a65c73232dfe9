// Tests of the per-example models: derivatives against finite differences,
// exact agreement of the batched form, dense vs sparse storage, label rules and
// closed-form values.
#include <gtest/gtest.h>

#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/gradient_check.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"

namespace dpsosp {
namespace {

constexpr Index kRecords = 12;
constexpr Index kFeatures = 6;
constexpr Index kClasses = 3;
constexpr Index kZeroRow = 3;  // an all-zero record: an empty row in CSR

ModelOptions test_options() {
  ModelOptions o;
  o.classes = kClasses;
  o.hidden = 4;
  o.rank = 2;
  return o;
}

Vec gaussian(Index size, std::uint32_t stream, double scale = 1.0) {
  Vec v(static_cast<Eigen::Index>(size));
  GaussianStream(2024, StreamPurpose::kTest, stream).fill(v, scale);
  return v;
}

// Features with about 40% zeros (so that CSR storage differs from dense) and one
// all-zero row.
RowMatrix test_features() {
  RowMatrix a(kRecords, kFeatures);
  GaussianStream rng(7, StreamPurpose::kTest, 1);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) {
      const double value = rng.next();
      a(i, j) = rng.uniform() < 0.4 ? 0.0 : value;
    }
  }
  a.row(kZeroRow).setZero();
  return a;
}

// Labels that fit the model: signs, real targets, classes, or none (pca).
Vec test_labels(const std::string& model, const RowMatrix& a) {
  const Eigen::Index n = a.rows();
  Vec y(n);
  if (model == "pca") return Vec();
  if (model == "logistic" || model == "sigmoid") {
    const double signs[] = {1.0, 0.0, -1.0, 1.0};
    for (Eigen::Index i = 0; i < n; ++i) y[i] = signs[i % 4];
  } else if (model == "cauchy") {
    y = gaussian(kRecords, 2, 2.0);
  } else if (model == "phase-retrieval") {
    const Vec planted = gaussian(kFeatures, 3);
    const Vec noise = gaussian(kRecords, 4, 0.3);
    for (Eigen::Index i = 0; i < n; ++i) y[i] = std::pow(a.row(i).dot(planted), 2) + noise[i];
  } else {
    for (Eigen::Index i = 0; i < n; ++i) y[i] = static_cast<double>((i * 7) % kClasses);
  }
  return y;
}

struct Problem {
  std::unique_ptr<Model> model;
  Dataset dense;
  Dataset sparse;
};

Problem make_problem(const std::string& name) {
  const RowMatrix a = test_features();
  const Vec y = test_labels(name, a);
  Problem p;
  p.dense = Dataset(a, y);
  p.sparse = Dataset(SparseRowMatrix(a.sparseView()), y);
  p.model = make_model(name, kFeatures, test_options(), &p.dense);
  return p;
}

// A random point of moderate scale (tanh and sigmoid not saturated, margins O(1)).
Vec test_point(const Model& model, std::uint32_t k) { return gaussian(model.dim(), 100 + k, 0.6); }

class ModelAllTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelAllTest, GradientAndHvpMatchFiniteDifferences) {
  const Problem p = make_problem(GetParam());
  GradientCheckOptions options;  // Richardson-extrapolated central differences, step 1e-4
  options.tolerance = 1e-7;
  double worst_gradient = 0.0, worst_hvp = 0.0;
  for (const Dataset* data : {&p.dense, &p.sparse}) {
    p.model->validate(*data);
    for (std::uint32_t k = 0; k < 3; ++k) {
      const Vec x = test_point(*p.model, k);
      const Vec v = gaussian(p.model->dim(), 200 + k);
      for (Index i : {Index{0}, Index{2}, kZeroRow, Index{7}, Index{11}}) {
        const GradientCheckResult r = check_model_derivatives(*p.model, *data, i, x, v, options);
        EXPECT_TRUE(r.ok) << r.message;
        worst_gradient = std::max(worst_gradient, r.gradient_error);
        worst_hvp = std::max(worst_hvp, r.hvp_error);
      }
    }
  }
  // Plain central differences (step 1e-6, no extrapolation) as a second,
  // independent estimate at the looser tolerance they allow.
  GradientCheckOptions plain;
  plain.step = 1e-6;
  plain.richardson = false;
  plain.tolerance = 1e-5;
  const Vec x = test_point(*p.model, 9);
  const GradientCheckResult r =
      check_model_derivatives(*p.model, p.dense, 5, x, gaussian(p.model->dim(), 209), plain);
  EXPECT_TRUE(r.ok) << r.message;
  std::ostringstream worst;
  worst << std::scientific << std::setprecision(2) << "gradient " << worst_gradient << ", hvp " << worst_hvp;
  RecordProperty("worst_relative_errors", worst.str());
}

TEST_P(ModelAllTest, BatchGradientsEqualGradientBitForBit) {
  const Problem p = make_problem(GetParam());
  const IndexList idx = {5, 0, kZeroRow, 11, 5, 7, 1};  // unsorted, with a repeat
  for (const Dataset* data : {&p.dense, &p.sparse}) {
    const Vec x = test_point(*p.model, 1);
    RowMatrix batch(1, 1);
    p.model->batch_gradients(x, *data, idx, batch);
    ASSERT_EQ(batch.rows(), static_cast<Eigen::Index>(idx.size()));
    ASSERT_EQ(batch.cols(), static_cast<Eigen::Index>(p.model->dim()));
    Vec g(p.model->dim());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      p.model->gradient(x, *data, idx[k], g);
      const Vec row = batch.row(static_cast<Eigen::Index>(k)).transpose();
      EXPECT_EQ((row - g).cwiseAbs().maxCoeff(), 0.0) << "row " << k;
      for (Eigen::Index j = 0; j < g.size(); ++j) ASSERT_EQ(row[j], g[j]) << "row " << k << " entry " << j;
    }
    // Reusing the output buffer (as the oracles do) changes nothing.
    RowMatrix again = batch;
    p.model->batch_gradients(x, *data, idx, again);
    EXPECT_EQ((again - batch).cwiseAbs().maxCoeff(), 0.0);
    // An empty batch gives an empty matrix of the right width.
    p.model->batch_gradients(x, *data, {}, again);
    EXPECT_EQ(again.rows(), 0);
    EXPECT_EQ(again.cols(), static_cast<Eigen::Index>(p.model->dim()));
  }
}

TEST_P(ModelAllTest, DenseAndSparseStorageAgree) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 2);
  const Vec v = gaussian(p.model->dim(), 300);
  Vec gd(p.model->dim()), gs(p.model->dim()), hd(p.model->dim()), hs(p.model->dim());
  for (Index i = 0; i < kRecords; ++i) {
    const double ld = p.model->loss(x, p.dense, i);
    EXPECT_NEAR(ld, p.model->loss(x, p.sparse, i), 1e-12 * std::max(1.0, std::abs(ld))) << "record " << i;
    p.model->gradient(x, p.dense, i, gd);
    p.model->gradient(x, p.sparse, i, gs);
    EXPECT_LE(relative_error(gd, gs, 1.0), 1e-12) << "record " << i;
    p.model->hvp(x, p.dense, i, v, hd);
    p.model->hvp(x, p.sparse, i, v, hs);
    EXPECT_LE(relative_error(hd, hs, 1.0), 1e-12) << "record " << i;
  }
}

TEST_P(ModelAllTest, HvpIsSymmetricAndLinear) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 3);
  const Vec u = gaussian(p.model->dim(), 400);
  const Vec v = gaussian(p.model->dim(), 401);
  Vec hu(p.model->dim()), hv(p.model->dim()), hsum(p.model->dim());
  for (Index i = 0; i < kRecords; ++i) {
    p.model->hvp(x, p.sparse, i, u, hu);
    p.model->hvp(x, p.sparse, i, v, hv);
    const double scale = std::max(1.0, hu.norm() * v.norm());
    EXPECT_NEAR(v.dot(hu), u.dot(hv), 1e-12 * scale) << "record " << i;
    p.model->hvp(x, p.sparse, i, Vec(2.0 * u - v), hsum);
    EXPECT_LE(relative_error(hsum, Vec(2.0 * hu - hv), 1.0), 1e-12) << "record " << i;
  }
}

TEST_P(ModelAllTest, MeanHelpersAverageThePerExampleValues) {
  const Problem p = make_problem(GetParam());
  const Vec x = test_point(*p.model, 4);
  const Vec v = gaussian(p.model->dim(), 500);
  const IndexList idx = {1, 4, 9, 10};
  double loss = 0.0;
  Vec grad = Vec::Zero(p.model->dim()), hess_v = Vec::Zero(p.model->dim()), work(p.model->dim());
  for (Index i : idx) {
    loss += p.model->loss(x, p.dense, i) / 4.0;
    p.model->gradient(x, p.dense, i, work);
    grad += work / 4.0;
    p.model->hvp(x, p.dense, i, v, work);
    hess_v += work / 4.0;
  }
  EXPECT_NEAR(p.model->mean_loss(x, p.dense, idx), loss, 1e-12 * std::max(1.0, std::abs(loss)));
  EXPECT_LE(relative_error(p.model->mean_gradient(x, p.dense, idx), grad, 1.0), 1e-12);
  EXPECT_LE(relative_error(p.model->mean_hvp(x, p.dense, idx, v), hess_v, 1.0), 1e-12);
  EXPECT_THROW(p.model->mean_loss(x, p.dense, {}), Error);
}

TEST_P(ModelAllTest, RejectsPointsOfTheWrongSizeAndForeignFeatureCounts) {
  const Problem p = make_problem(GetParam());
  const Vec wrong = Vec::Zero(p.model->dim() + 1);
  Vec out(p.model->dim());
  EXPECT_THROW(p.model->loss(wrong, p.dense, 0), Error);
  EXPECT_THROW(p.model->gradient(wrong, p.dense, 0, out), Error);
  EXPECT_THROW(p.model->hvp(test_point(*p.model, 0), p.dense, 0, wrong, out), Error);
  const Dataset wide(RowMatrix::Zero(2, kFeatures + 1), p.dense.has_labels() ? Vec::Zero(2) : Vec());
  try {
    p.model->validate(wide);
    FAIL() << "validate accepted 7 features for a 6-feature model";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), (GetParam() + ": the data have 7 features per record, expected 6 "
                                         "(the model was built for that many)").c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Model, ModelAllTest, ::testing::ValuesIn(model_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string s = info.param;
                           for (char& c : s) if (c == '-') c = '_';
                           return s;
                         });

// ---------------------------------------------------------------- factory

TEST(ModelFactory, NamesDimensionsAndUnknownNames) {
  EXPECT_EQ(model_names().size(), 7u);
  const ModelOptions o = test_options();  // K = 3, h = 4, r = 2
  const Index p = 5;
  EXPECT_EQ(make_model("logistic", p, o)->dim(), p);
  EXPECT_EQ(make_model("sigmoid", p, o)->dim(), p);
  EXPECT_EQ(make_model("cauchy", p, o)->dim(), p);
  EXPECT_EQ(make_model("phase-retrieval", p, o)->dim(), p);
  EXPECT_EQ(make_model("pca", p, o)->dim(), p * 2);
  EXPECT_EQ(make_model("softmax", p, o)->dim(), 3 * p);
  EXPECT_EQ(make_model("mlp", p, o)->dim(), 4 * p + 4 + 3 * 4 + 3);
  for (const auto& name : model_names()) {
    const auto m = make_model(name, p, o);
    EXPECT_EQ(m->name(), name);
    EXPECT_EQ(m->features(), p);
  }
  try {
    make_model("lasso", p, o);
    FAIL() << "unknown model accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "make_model: unknown model 'lasso', expected one of logistic, sigmoid, cauchy, "
                           "phase-retrieval, pca, softmax, mlp");
  }
  EXPECT_THROW(make_model("logistic", 0, o), Error);
}

TEST(ModelFactory, OptionsValidateNamesTheField) {
  ModelOptions o;
  EXPECT_NO_THROW(o.Validate());
  o.classes = 1;
  EXPECT_THROW(
      {
        try {
          o.Validate();
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "ModelOptions::Validate: classes is 1, expected 0 (infer from the labels) "
                                 "or at least 2");
          throw;
        }
      },
      Error);
  o = ModelOptions();
  o.hidden = 0;
  EXPECT_THROW(make_model("mlp", 3, o), Error);
  o = ModelOptions();
  o.rank = 0;
  try {
    make_model("pca", 3, o);
    FAIL() << "rank 0 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "ModelOptions::Validate: rank is 0, expected at least 1");
  }
}

TEST(ModelFactory, ClassCountFromOptionsOrLabels) {
  const RowMatrix a = RowMatrix::Ones(4, 2);
  const Dataset data(a, (Vec(4) << 0, 4, 1, 2).finished());
  EXPECT_EQ(make_model("softmax", 2, {}, &data)->dim(), 5u * 2u);  // K = max label + 1 = 5
  ModelOptions o;
  o.classes = 7;
  EXPECT_EQ(make_model("softmax", 2, o, &data)->dim(), 7u * 2u);  // the option wins
  const Dataset zeros(a, Vec::Zero(4));
  EXPECT_EQ(make_model("softmax", 2, {}, &zeros)->dim(), 2u * 2u);  // at least 2 classes
  try {
    make_model("mlp", 2);
    FAIL() << "mlp built without a class count";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "make_model: mlp needs the number of classes: set ModelOptions::classes or pass "
                           "the data to infer it from the labels");
  }
  const Dataset unlabelled(a, Vec());
  EXPECT_THROW(make_model("softmax", 2, {}, &unlabelled), Error);
  const Dataset fractional(a, (Vec(4) << 0, 1, 1.5, 2).finished());
  try {
    make_model("softmax", 2, {}, &fractional);
    FAIL() << "class count inferred from a fractional label";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "softmax: label of record 2 (0-based) is 1.5, expected a non-negative integer "
                           "(a class index)");
  }
}

// ---------------------------------------------------------------- label rules

std::string validate_message(const std::string& model, const Dataset& data, ModelOptions o = {}) {
  try {
    make_model(model, data.cols(), o, &data)->validate(data);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

Dataset with_labels(Vec labels) {
  const Eigen::Index n = labels.size();
  return Dataset(RowMatrix::Ones(n, 2), std::move(labels));
}

TEST(ModelValidate, BinaryClassifiersAcceptSignsAndZeroOneOnly) {
  EXPECT_EQ(validate_message("logistic", with_labels((Vec(4) << 0, 1, -1, 1).finished())), "no error");
  EXPECT_EQ(validate_message("logistic", with_labels((Vec(3) << 1, 2, 0).finished())),
            "logistic: label of record 1 (0-based) is 2, expected 0, 1, -1 or +1 (0 is read as -1)");
  EXPECT_EQ(validate_message("sigmoid", with_labels((Vec(3) << 1, -1, 0.5).finished())),
            "sigmoid: label of record 2 (0-based) is 0.5, expected 0, 1, -1 or +1 (0 is read as -1)");
  EXPECT_EQ(validate_message("logistic", Dataset(RowMatrix::Ones(3, 2), Vec())),
            "logistic: the data have no labels, expected one label per record (logistic is a supervised model)");
}

TEST(ModelValidate, RegressionTargetsMustBeFinite) {
  EXPECT_EQ(validate_message("cauchy", with_labels((Vec(3) << -1e300, 0.25, 7).finished())), "no error");
  EXPECT_EQ(validate_message("cauchy", with_labels((Vec(3) << 1, 2, std::nan("")).finished())),
            "cauchy: label of record 2 (0-based) is nan, expected a finite number");
  EXPECT_EQ(validate_message("phase-retrieval", with_labels((Vec(2) << -HUGE_VAL, 1).finished())),
            "phase-retrieval: label of record 0 (0-based) is -inf, expected a finite number");
}

TEST(ModelValidate, ClassLabelsMustBeIntegersInRange) {
  ModelOptions o;
  o.classes = 10;
  Vec y = Vec::Zero(20);
  y[17] = 2.5;
  EXPECT_EQ(validate_message("softmax", with_labels(y), o),
            "softmax: label of record 17 (0-based) is 2.5, expected an integer in [0, 10)");
  y[17] = 10;
  EXPECT_EQ(validate_message("mlp", with_labels(y), o),
            "mlp: label of record 17 (0-based) is 10, expected an integer in [0, 10)");
  y[17] = -1;
  EXPECT_EQ(validate_message("mlp", with_labels(y), o),
            "mlp: label of record 17 (0-based) is -1, expected an integer in [0, 10)");
  // The per-example methods refuse such a label too, instead of reading out of bounds.
  const Dataset bad = with_labels(y);
  const auto m = make_model("softmax", 2, o);
  EXPECT_THROW(m->loss(Vec::Zero(m->dim()), bad, 17), Error);
}

TEST(ModelValidate, PcaIsUnsupervised) {
  EXPECT_EQ(validate_message("pca", Dataset(RowMatrix::Ones(3, 2), Vec())), "no error");
  EXPECT_EQ(validate_message("pca", with_labels(Vec::Zero(3))),
            "pca: the data have labels, expected none (pca is unsupervised and reads every column as a "
            "coordinate of z; load the data without a label column)");
}

// ---------------------------------------------------------------- closed forms

TEST(ModelLogistic, ValuesAtZeroAndStableAtExtremeMargins) {
  const RowMatrix a = (RowMatrix(2, 3) << 1, -2, 0.5, 3, 0, -1).finished();
  const Dataset data(a, (Vec(2) << 1, 0).finished());  // second label 0 = -1
  const auto m = make_model("logistic", 3);
  const Vec zero = Vec::Zero(3);
  const Vec v = (Vec(3) << 0.5, 1, -1).finished();
  Vec g(3), h(3);
  for (Index i = 0; i < 2; ++i) {
    const double y = i == 0 ? 1.0 : -1.0;
    const Vec ai = a.row(static_cast<Eigen::Index>(i)).transpose();
    EXPECT_DOUBLE_EQ(m->loss(zero, data, i), std::log(2.0));
    m->gradient(zero, data, i, g);
    EXPECT_LE(relative_error(g, Vec(-0.5 * y * ai)), 1e-15);
    m->hvp(zero, data, i, v, h);
    EXPECT_LE(relative_error(h, Vec(0.25 * ai.dot(v) * ai)), 1e-15);
  }
  // Margin +-1000: exp(1000) overflows, the stable forms do not.
  const Vec far = (Vec(3) << 1000, 0, 0).finished();  // z = 1000 for record 0
  EXPECT_EQ(m->loss(far, data, 0), 0.0);               // log(1 + e^-1000) underflows to 0
  EXPECT_DOUBLE_EQ(m->loss(-far, data, 0), 1000.0);
  m->gradient(-far, data, 0, g);
  EXPECT_DOUBLE_EQ(g[0], -1.0);  // -y sigma(1000) a
  m->hvp(-far, data, 0, v, h);
  EXPECT_TRUE(h.allFinite());
  EXPECT_EQ(h.norm(), 0.0);
}

TEST(ModelSigmoid, ValuesAtZeroAndSaturation) {
  const RowMatrix a = (RowMatrix(1, 2) << 2, -1).finished();
  const Dataset data(a, (Vec(1) << -1).finished());
  const auto m = make_model("sigmoid", 2);
  const Vec v = (Vec(2) << 1, 3).finished();
  Vec g(2), h(2);
  EXPECT_DOUBLE_EQ(m->loss(Vec::Zero(2), data, 0), 0.5);
  m->gradient(Vec::Zero(2), data, 0, g);
  EXPECT_LE(relative_error(g, Vec(0.25 * a.row(0).transpose())), 1e-15);  // -y a / 4
  m->hvp(Vec::Zero(2), data, 0, v, h);
  EXPECT_EQ(h.norm(), 0.0);  // the sigmoid loss has an inflection at margin 0
  const Vec far = (Vec(2) << 500, 0).finished();  // y z = -1000: loss -> 1
  EXPECT_DOUBLE_EQ(m->loss(far, data, 0), 1.0);
  m->gradient(far, data, 0, g);
  m->hvp(far, data, 0, v, h);
  EXPECT_TRUE(g.allFinite() && h.allFinite());
  EXPECT_LT(g.norm(), 1e-300);
}

TEST(ModelCauchy, ValuesAndHugeResiduals) {
  const RowMatrix a = (RowMatrix(2, 2) << 1, 2, 1, 0).finished();
  const Dataset data(a, (Vec(2) << 3, -1e200).finished());
  const auto m = make_model("cauchy", 2);
  const Vec x = (Vec(2) << 1, 1).finished();  // z = 3 = y for record 0
  const Vec v = (Vec(2) << 2, -1).finished();
  Vec g(2), h(2);
  EXPECT_EQ(m->loss(x, data, 0), 0.0);
  m->gradient(x, data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
  m->hvp(x, data, 0, v, h);  // f''(0) = 1: hess v = (a.v) a
  EXPECT_LE(relative_error(h, Vec(a.row(0).dot(v) * a.row(0).transpose())), 1e-15);
  const Vec shifted = (Vec(2) << 3, 1).finished();  // r = 5 - 3 = 2
  EXPECT_DOUBLE_EQ(m->loss(shifted, data, 0), std::log(3.0));
  m->gradient(shifted, data, 0, g);  // f'(2) = 4 / 6
  EXPECT_LE(relative_error(g, Vec(2.0 / 3.0 * a.row(0).transpose())), 1e-15);
  // r = 1 + 1e200: r^2 overflows, the loss is 2 log r - log 2 and stays finite.
  EXPECT_NEAR(m->loss(x, data, 1), 2.0 * 200.0 * std::log(10.0) - std::log(2.0), 1e-12);
  m->gradient(x, data, 1, g);
  m->hvp(x, data, 1, v, h);
  EXPECT_TRUE(g.allFinite() && h.allFinite());
  EXPECT_NEAR(g[0], 2e-200, 1e-214);
}

TEST(ModelPhaseRetrieval, PlantedSignalIsAStationaryPointOfZeroLoss) {
  const RowMatrix a = test_features();
  const Vec planted = gaussian(kFeatures, 3);
  Vec y(kRecords);
  const Dataset unlabelled(a, Vec());
  for (Index i = 0; i < kRecords; ++i) y[static_cast<Eigen::Index>(i)] = std::pow(unlabelled.row_dot(i, planted), 2);
  const Dataset data(a, y);
  const auto m = make_model("phase-retrieval", kFeatures);
  const Vec v = gaussian(kFeatures, 600);
  Vec g(kFeatures), h(kFeatures);
  for (Index i = 0; i < kRecords; ++i) {
    EXPECT_EQ(m->loss(planted, data, i), 0.0);
    m->gradient(planted, data, i, g);
    EXPECT_EQ(g.norm(), 0.0);
    // hess = (3 z^2 - y) a a^T = 2 z^2 a a^T at the planted point.
    const Vec ai = a.row(static_cast<Eigen::Index>(i)).transpose();
    const double z = ai.dot(planted);
    m->hvp(planted, data, i, v, h);
    EXPECT_LE(relative_error(h, Vec(2.0 * z * z * ai.dot(v) * ai), 1e-300), 1e-13);
  }
  // x = 0 is a stationary point too (a saddle when y > 0): gradient 0, hess = -y a a^T.
  m->gradient(Vec::Zero(kFeatures), data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
}

TEST(ModelSoftmax, UniformAtZeroAndShiftInvariant) {
  const RowMatrix a = test_features();
  const Vec y = test_labels("softmax", a);
  const Dataset data(a, y);
  ModelOptions o;
  o.classes = 4;
  const auto m = make_model("softmax", kFeatures, o);
  Vec g(m->dim());
  for (Index i = 0; i < kRecords; ++i) {
    EXPECT_NEAR(m->loss(Vec::Zero(m->dim()), data, i), std::log(4.0), 1e-15);
    m->gradient(Vec::Zero(m->dim()), data, i, g);
    const auto label = static_cast<Eigen::Index>(y[static_cast<Eigen::Index>(i)]);
    for (Eigen::Index k = 0; k < 4; ++k) {  // row k of grad W = (1/K - [k = y]) a
      const Vec expected = (0.25 - (k == label ? 1.0 : 0.0)) * a.row(static_cast<Eigen::Index>(i)).transpose();
      EXPECT_LE((g.segment(k * kFeatures, kFeatures) - expected).norm(), 1e-15);
    }
  }
  // Adding one vector to every row of W adds the same number to every logit:
  // the loss does not change, even when the shift makes the logits ~1e4.
  const Vec w = gaussian(m->dim(), 700);
  const Vec shift = gaussian(kFeatures, 701, 3000.0);
  Vec shifted = w;
  for (Eigen::Index k = 0; k < 4; ++k) shifted.segment(k * kFeatures, kFeatures) += shift;
  for (Index i = 0; i < kRecords; ++i) {
    const double l = m->loss(w, data, i);
    EXPECT_NEAR(m->loss(shifted, data, i), l, 1e-9 * std::max(1.0, l));
    m->gradient(shifted, data, i, g);
    EXPECT_TRUE(g.allFinite());
  }
}

TEST(ModelPca, ClosedFormsOfTheFactorisationLoss) {
  // z = (1, 2, 0, 0), U (4 x 2) with columns orthogonal to z.
  const RowMatrix z = (RowMatrix(1, 4) << 1, 2, 0, 0).finished();
  const Dataset data(z, Vec());
  ModelOptions o;
  o.rank = 2;
  const auto m = make_model("pca", 4, o);
  Eigen::MatrixXd u(4, 2);
  u << 2, 0, -1, 0, 0, 1, 0, 3;
  const Vec x = Eigen::Map<const Vec>(u.data(), 8);
  // z^T U = 0, so f = (||U^T U||^2 + ||z||^4) / 4 and grad = U (U^T U).
  const Eigen::MatrixXd gram = u.transpose() * u;
  EXPECT_NEAR(m->loss(x, data, 0), (gram.squaredNorm() + 25.0) / 4.0, 1e-13);
  Vec g(8);
  m->gradient(x, data, 0, g);
  const Eigen::MatrixXd expected = u * gram;
  EXPECT_LE(relative_error(g, Eigen::Map<const Vec>(expected.data(), 8)), 1e-15);
  // At U = [z, 0] the factorisation is exact: zero loss and zero gradient.
  Vec exact = Vec::Zero(8);
  exact.head(4) = z.row(0).transpose();
  EXPECT_EQ(m->loss(exact, data, 0), 0.0);
  m->gradient(exact, data, 0, g);
  EXPECT_EQ(g.norm(), 0.0);
  // At U = 0 the loss is ||z||^4 / 4 and the Hessian vanishes.
  EXPECT_DOUBLE_EQ(m->loss(Vec::Zero(8), data, 0), 25.0 / 4.0);
  Vec h(8);
  m->hvp(Vec::Zero(8), data, 0, x, h);
  EXPECT_LE(h.norm(), 0.0 + 1e-300);
  // At U = 0 with a rank-one direction V = [z, 0]: hess V = -z z^T V = -||z||^2 V.
  m->hvp(Vec::Zero(8), data, 0, exact, h);
  EXPECT_LE(relative_error(h, Vec(-5.0 * exact)), 1e-15);
}

TEST(ModelMlp, OutputLayerAloneIsSoftmaxOfTheBias) {
  const RowMatrix a = test_features();
  const Vec y = test_labels("mlp", a);
  const Dataset data(a, y);
  const auto m = make_model("mlp", kFeatures, test_options());  // h = 4, K = 3
  const Eigen::Index p = kFeatures, hidden = 4, k = 3;
  const Eigen::Index off_b1 = hidden * p, off_w2 = off_b1 + hidden, off_b2 = off_w2 + k * hidden;
  ASSERT_EQ(static_cast<Eigen::Index>(m->dim()), off_b2 + k);
  // W2 = 0: the logits are b2 whatever the input; the hidden layer gets no gradient.
  Vec x = gaussian(m->dim(), 800);
  x.segment(off_w2, k * hidden).setZero();
  const Vec b2 = x.tail(k);
  const double lse = std::log(b2.array().exp().sum());
  Vec g(m->dim());
  for (Index i = 0; i < kRecords; ++i) {
    const auto label = static_cast<Eigen::Index>(y[static_cast<Eigen::Index>(i)]);
    EXPECT_NEAR(m->loss(x, data, i), lse - b2[label], 1e-14);
    m->gradient(x, data, i, g);
    Vec expected = (b2.array() - lse).exp().matrix();
    expected[label] -= 1.0;
    EXPECT_LE((g.tail(k) - expected).norm(), 1e-15);
    EXPECT_EQ(g.head(off_w2).norm(), 0.0);
    // grad W2 row c = g2_c tanh(W1 a + b1).
    Vec t(hidden);
    for (Eigen::Index j = 0; j < hidden; ++j) {
      t[j] = std::tanh(a.row(static_cast<Eigen::Index>(i)).dot(x.segment(j * p, p)) + x[off_b1 + j]);
    }
    for (Eigen::Index c = 0; c < k; ++c) {
      EXPECT_LE((g.segment(off_w2 + c * hidden, hidden) - expected[c] * t).norm(), 1e-14);
    }
  }
  // All weights zero: uniform prediction, loss log K.
  EXPECT_NEAR(m->loss(Vec::Zero(m->dim()), data, 0), std::log(3.0), 1e-15);
}

}  // namespace
}  // namespace dpsosp
