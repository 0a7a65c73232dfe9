// The model factory and each model's label rules: names, dimensions, options
// validated by field, class counts, and the records a model refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>
#include <string>

#include "dpsosp/error.hpp"
#include "dpsosp/gradient_check.hpp"
#include "dpsosp/model.hpp"
#include "dpsosp/noise.hpp"
#include "model_test_data.hpp"
#include "test_errors.hpp"

namespace dpsosp {
namespace {

using namespace testing::model_data;

// ---------------------------------------------------------------- factory

TEST(ModelFactory, NamesDimensionsAndUnknownNames) {
  EXPECT_EQ(model_names().size(), 8u);
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
    EXPECT_STREQ(e.what(),
                 "unknown model 'lasso', expected one of logistic, sigmoid, cauchy, "
                 "phase-retrieval, linear, softmax, mlp, pca");
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
          EXPECT_STREQ(e.what(),
                       "ModelOptions::Validate: classes is 1, expected 0 (infer from the labels) "
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
    EXPECT_STREQ(e.what(),
                 "mlp needs the number of classes: declare them (classes), or pass the data to infer "
                 "them from the labels");
  }
  const Dataset unlabelled(a, Vec());
  EXPECT_THROW(make_model("softmax", 2, {}, &unlabelled), Error);
  const Dataset fractional(a, (Vec(4) << 0, 1, 1.5, 2).finished());
  try {
    make_model("softmax", 2, {}, &fractional);
    FAIL() << "class count inferred from a fractional label";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "softmax: label of record 2 (0-based) is 1.5, expected a non-negative integer "
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
            "logistic: a record's label is not 0, 1, -1 or +1 (0 is read as -1); which record is not said, as "
            "a refusal must not depend on it");
  EXPECT_EQ(validate_message("sigmoid", with_labels((Vec(3) << 1, -1, 0.5).finished())),
            "sigmoid: a record's label is not 0, 1, -1 or +1 (0 is read as -1); which record is not said, as "
            "a refusal must not depend on it");
  // The same words whichever record holds which bad label (the public-shape rule).
  EXPECT_EQ(validate_message("logistic", with_labels((Vec(3) << 7, 1, 0).finished())),
            validate_message("logistic", with_labels((Vec(3) << 1, 0, -3).finished())));
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
  const std::string says =
      ": a record's label is not an integer in [0, 10) (the classes); which record is not "
      "said, as a refusal must not depend on it";
  EXPECT_EQ(validate_message("softmax", with_labels(y), o), "softmax" + says);
  y[17] = 10;
  EXPECT_EQ(validate_message("mlp", with_labels(y), o), "mlp" + says);
  y[17] = 0;
  y[3] = -1;
  EXPECT_EQ(validate_message("mlp", with_labels(y), o), "mlp" + says);
  y[3] = 0;
  y[17] = -1;
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

// validate_rows checks the listed records as validate checks a dataset of them
// (data.subset(rows), the default), in place, for every built-in model: the
// same verdict and message, each record named by its place in the list.
TEST(ModelValidate, RowsAreCheckedAsTheSubsetWouldBe) {
  ModelOptions o;
  o.classes = 3;
  const Vec y = (Vec(6) << 0, 1, std::nan(""), 1, 0.5, 1).finished();  // 2: bad for all; 4: for classifiers
  const Dataset data = with_labels(y);
  const Dataset unlabelled(RowMatrix::Ones(6, 2), Vec());
  const std::vector<IndexList> lists = {{0, 1, 3, 5}, {5, 4, 0}, {3, 2}, {}};
  for (const std::string& name : model_names()) {
    const bool pca = name == "pca";
    const Dataset& d = pca ? unlabelled : data;
    const auto m = make_model(name, 2, name == "softmax" || name == "mlp" ? o : ModelOptions{});
    for (const IndexList& rows : lists) {
      SCOPED_TRACE(name + " on " + std::to_string(rows.size()) + " rows");
      std::string in_place = "no error", subset = "no error";
      try {
        m->validate_rows(d, rows);
      } catch (const Error& e) {
        in_place = e.what();
      }
      try {
        m->validate(d.subset(rows));
      } catch (const Error& e) {
        subset = e.what();
      }
      EXPECT_EQ(in_place, subset);
      const bool has_bad = std::find(rows.begin(), rows.end(), 2) != rows.end() ||
                           (std::find(rows.begin(), rows.end(), 4) != rows.end() && name != "cauchy" &&
                            name != "linear" && name != "phase-retrieval");
      EXPECT_EQ(in_place != "no error", has_bad && !pca);
    }
  }
  // Record 4 of {5, 4, 0} is refused (in words that name no record).
  EXPECT_CONTAINS(testing::error_of([&] {
                    make_model("logistic", 2)->validate_rows(data, {5, 4, 0});
                  }),
                  "logistic: a record's label is not 0, 1, -1 or +1");
}

}  // namespace
}  // namespace dpsosp

namespace dpsosp {
namespace {

TEST(ModelTable, EachRowBuildsItsModel) {
  std::set<std::string> names;
  for (const ModelInfo& info : model_table()) {
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(names.insert(info.name).second);
    EXPECT_FALSE(info.summary.empty());
    ASSERT_NE(info.make, nullptr);
    ASSERT_NE(info.parameters, nullptr);
    EXPECT_FALSE(info.classifier && info.binary);
    EXPECT_TRUE(info.labeled || !(info.classifier || info.binary || info.regression));
    EXPECT_TRUE(!info.intercept_by_default || info.no_intercept.empty());  // a default it would refuse
    ModelOptions o;
    o.classes = info.classifier ? 3 : 0;
    o.fit_intercept = info.no_intercept.empty();
    const auto model = make_model(info.name, 5, o);
    EXPECT_EQ(model->name(), info.name);
    EXPECT_EQ(static_cast<double>(model->dim()), info.parameters(5, o, o.classes));
    EXPECT_EQ(&model_info(info.name), &info);
  }
  EXPECT_EQ(model_names().size(), model_table().size());
  EXPECT_THROW(model_info("lasso"), Error);
}

}  // namespace
}  // namespace dpsosp
