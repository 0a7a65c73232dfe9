// Model::mean_hessian, the certificate's operator: the mean of hvp() over the
// records, for every model and storage, with the same bits for any thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_threads.hpp"

namespace dpsosp {
namespace {

using testing::Labels;

struct Case {
  const char* model;
  Labels labels;
  bool sparse;
  bool intercept;
};

TEST(ModelHessian, IsTheMeanOfThePerRecordProducts) {
  const Case cases[] = {{"logistic", Labels::kBinary, false, false}, {"logistic", Labels::kBinary, false, true},
                        {"logistic", Labels::kBinary, true, false},  {"cauchy", Labels::kReal, false, true},
                        {"softmax", Labels::kClasses, false, false}, {"softmax", Labels::kClasses, false, true},
                        {"softmax", Labels::kClasses, true, true},   {"mlp", Labels::kClasses, false, false},
                        {"pca", Labels::kNone, false, false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.model) + (c.sparse ? " sparse" : " dense") + (c.intercept ? " intercept" : ""));
    const Dataset data = testing::make_test_data(2500, 7, c.labels, c.sparse, 4);  // 3 chunks of records
    ModelOptions o;
    o.classes = c.labels == Labels::kClasses ? 3 : 0;
    o.hidden = 4;
    o.rank = 2;
    o.fit_intercept = c.intercept;
    const auto model = make_model(c.model, 7, o);
    Vec x(static_cast<Eigen::Index>(model->dim())), v(x.size());
    GaussianStream g(3, StreamPurpose::kTest, 1);
    g.fill(x, 0.5);
    g.fill(v, 1.0);
    IndexList all(data.rows()), some;
    for (Index i = 0; i < all.size(); ++i) all[i] = i;
    for (Index i = 0; i < all.size(); i += 3) some.push_back(all.size() - 1 - i);  // not consecutive: copied
    for (const IndexList* idx : {&all, &some}) {
      const Vec want = model->mean_hvp(x, data, *idx, v);
      Vec got[2];
      for (int mode : {1, 2}) {
        testing::ForcedThreads forced(mode, mode);
        model->mean_hessian(x, data, *idx)(v, got[mode - 1]);
      }
      EXPECT_LT((got[0] - want).norm(), 1e-12 * want.norm());
      ASSERT_EQ(got[0].size(), got[1].size());
      EXPECT_EQ(std::memcmp(got[0].data(), got[1].data(), sizeof(double) * got[0].size()), 0) << "1 vs 2 threads";
    }
  }
}

}  // namespace
}  // namespace dpsosp
