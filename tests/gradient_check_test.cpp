// Tests of the public finite-difference checker: it passes correct models and
// catches deliberately wrong gradients and Hessian-vector products.
#include <gtest/gtest.h>

#include "dpsosp/error.hpp"
#include "dpsosp/gradient_check.hpp"
#include "dpsosp/model.hpp"

namespace dpsosp {
namespace {

// Wraps a model and perturbs one coordinate of its gradient or its HVP.
class BrokenModel : public Model {
 public:
  BrokenModel(std::unique_ptr<Model> inner, double gradient_factor, double hvp_factor)
      : inner_(std::move(inner)), gradient_factor_(gradient_factor), hvp_factor_(hvp_factor) {}
  std::string name() const override { return "broken-" + inner_->name(); }
  Index dim() const override { return inner_->dim(); }
  Index features() const override { return inner_->features(); }
  void validate(const Dataset& data) const override { inner_->validate(data); }
  double loss(const Vec& x, const Dataset& data, Index i) const override { return inner_->loss(x, data, i); }
  void gradient(const Vec& x, const Dataset& data, Index i, Eigen::Ref<Vec> out) const override {
    inner_->gradient(x, data, i, out);
    out[1] *= gradient_factor_;
  }
  void hvp(const Vec& x, const Dataset& data, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    inner_->hvp(x, data, i, v, out);
    out[2] *= hvp_factor_;
  }

 private:
  std::unique_ptr<Model> inner_;
  double gradient_factor_, hvp_factor_;
};

Dataset small_data() {
  const RowMatrix a = (RowMatrix(2, 3) << 1.0, -0.5, 2.0, 0.3, 1.5, -1.0).finished();
  return Dataset(a, (Vec(2) << 1.0, -1.0).finished());
}

const Vec kX = (Vec(3) << 0.2, -0.4, 0.7).finished();
const Vec kV = (Vec(3) << 1.0, 0.5, -2.0).finished();

TEST(ModelGradientCheck, PassesACorrectModel) {
  const Dataset data = small_data();
  const auto m = make_model("sigmoid", 3);
  const GradientCheckResult r = check_model_derivatives(*m, data, 0, kX, kV);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.message, "ok");
  EXPECT_LT(r.gradient_error, 1e-9);
  EXPECT_LT(r.hvp_error, 1e-9);
  EXPECT_EQ(r.numeric_gradient.size(), 3);
  EXPECT_EQ(r.numeric_hvp.size(), 3);
}

TEST(ModelGradientCheck, CatchesAWrongGradient) {
  const Dataset data = small_data();
  const BrokenModel m(make_model("logistic", 3), 1.001, 1.0);  // 0.1% off in coordinate 1
  const GradientCheckResult r = check_model_derivatives(m, data, 0, kX, kV);
  EXPECT_FALSE(r.ok);
  EXPECT_GT(r.gradient_error, 1e-5);
  EXPECT_EQ(r.worst_gradient_coordinate, 1u);
  EXPECT_NE(r.message.find("check_model_derivatives: broken-logistic record 0: gradient relative error"),
            std::string::npos)
      << r.message;
  // The HVP is checked against differences of the (wrong) gradient, so it is flagged too;
  // what matters is that the gradient is named.
}

TEST(ModelGradientCheck, CatchesAWrongHvp) {
  const Dataset data = small_data();
  const BrokenModel m(make_model("cauchy", 3), 1.0, -1.0);  // sign error in coordinate 2
  const GradientCheckResult r = check_model_derivatives(m, data, 1, kX, kV);
  EXPECT_FALSE(r.ok);
  EXPECT_LT(r.gradient_error, 1e-9);
  EXPECT_GT(r.hvp_error, 1e-2);
  EXPECT_EQ(r.worst_hvp_coordinate, 2u);
  EXPECT_NE(r.message.find("hvp relative error"), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find("gradient relative error"), std::string::npos) << r.message;
}

TEST(ModelGradientCheck, RejectsBadArgumentsAndOptions) {
  const Dataset data = small_data();
  const auto m = make_model("logistic", 3);
  EXPECT_THROW(check_model_derivatives(*m, data, 0, Vec::Zero(2), kV), Error);
  EXPECT_THROW(check_model_derivatives(*m, data, 0, kX, Vec::Zero(3)), Error);
  EXPECT_THROW(check_model_derivatives(*m, data, 2, kX, kV), Error);
  GradientCheckOptions o;
  o.step = 0.0;
  try {
    check_model_derivatives(*m, data, 0, kX, kV, o);
    FAIL() << "step 0 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "GradientCheckOptions::Validate: step is 0, expected a number in (0, 1)");
  }
  o = GradientCheckOptions();
  o.tolerance = -1.0;
  EXPECT_THROW(o.Validate(), Error);
}

TEST(ModelGradientCheck, RelativeErrorUsesTheFloorForTinyVectors) {
  const Vec a = (Vec(2) << 3.0, 4.0).finished();
  EXPECT_DOUBLE_EQ(relative_error(a, Vec::Zero(2)), 1.0);
  EXPECT_DOUBLE_EQ(relative_error(Vec::Zero(2), Vec::Zero(2)), 0.0);
  EXPECT_DOUBLE_EQ(relative_error((Vec(1) << 1e-12).finished(), Vec::Zero(1), 1e-8), 1e-4);
}

}  // namespace
}  // namespace dpsosp
