// Model::correct / accuracy: the classifiers' predictions on hand-made records.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/model.hpp"

namespace dpsosp {
namespace {

TEST(ModelAccuracy, BinaryClassifiersUseTheSignOfTheMargin) {
  RowMatrix X(4, 2);
  X << 1, 0, -1, 0, 0, 1, 2, 2;
  Vec y(4);
  y << 1, 0, -1, 1;  // 0 and -1 are the same class
  const Dataset data(X, y);
  Vec x(2);
  x << 1, -0.5;  // margins 1, -1, -0.5, 1
  for (const char* name : {"logistic", "sigmoid"}) {
    const auto m = make_model(name, 2);
    EXPECT_TRUE(*m->correct(x, data, 0));
    EXPECT_TRUE(*m->correct(x, data, 1));
    EXPECT_TRUE(*m->correct(x, data, 2));
    EXPECT_TRUE(*m->correct(x, data, 3));
    EXPECT_DOUBLE_EQ(m->accuracy(-x, data), 0.0);
  }
}

TEST(ModelAccuracy, SoftmaxAndMlpUseTheArgmax) {
  RowMatrix X(3, 2);
  X << 1, 0, 0, 1, -1, -1;
  Vec y(3);
  y << 0, 1, 2;
  const Dataset data(X, y);
  ModelOptions o;
  o.classes = 3;
  const auto softmax = make_model("softmax", 2, o);
  Vec w(6);  // W rows: class 0 = (1,0), class 1 = (0,1), class 2 = (-1,-1)
  w << 1, 0, 0, 1, -1, -1;
  EXPECT_DOUBLE_EQ(softmax->accuracy(w, data), 1.0);
  Vec w2 = w;
  w2.segment(4, 2) << 0, 0;  // record 2: logits (-1,-1,0) -> class 2 still wins
  EXPECT_DOUBLE_EQ(softmax->accuracy(w2, data), 1.0);
  w2.segment(0, 2) << -5, -5;  // record 0: logits (-5, 0, 0), record 2: (10, -1, 0): both wrong
  EXPECT_FALSE(*softmax->correct(w2, data, 0));
  EXPECT_TRUE(*softmax->correct(w2, data, 1));
  EXPECT_FALSE(*softmax->correct(w2, data, 2));
  EXPECT_NEAR(softmax->accuracy(w2, data), 1.0 / 3.0, 1e-15);

  o.hidden = 4;
  const auto mlp = make_model("mlp", 2, o);
  const Vec zero = Vec::Zero(static_cast<Eigen::Index>(mlp->dim()));
  // All logits equal: argmax picks class 0, so only record 0 is right.
  EXPECT_NEAR(mlp->accuracy(zero, data), 1.0 / 3.0, 1e-15);
}

TEST(ModelAccuracy, RegressionModelsDoNotClassify) {
  RowMatrix X(1, 2);
  X << 1, 2;
  Vec y(1);
  y << 0.5;
  const Dataset data(X, y);
  const auto m = make_model("cauchy", 2);
  EXPECT_FALSE(m->correct(Vec::Zero(2), data, 0).has_value());
  EXPECT_TRUE(std::isnan(m->accuracy(Vec::Zero(2), data)));
}

}  // namespace
}  // namespace dpsosp
