// Tests: a model that records which records its batched calls touch (the
// single-pass contract: every record at most once).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dpsosp/model.hpp"

namespace dpsosp::testing {

// A model wrapper that records which records each batch call touched.
class CountingModel final : public Model {
 public:
  explicit CountingModel(const Model& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  Index dim() const override { return inner_.dim(); }
  Index features() const override { return inner_.features(); }
  Index classes() const override { return inner_.classes(); }
  ModelOptions options() const override { return inner_.options(); }
  void validate(const Dataset& d) const override { inner_.validate(d); }
  double loss(const Vec& x, const Dataset& d, Index i) const override { return inner_.loss(x, d, i); }
  void gradient(const Vec& x, const Dataset& d, Index i, Eigen::Ref<Vec> out) const override {
    single_calls_++;
    inner_.gradient(x, d, i, out);
  }
  void hvp(const Vec& x, const Dataset& d, Index i, const Vec& v, Eigen::Ref<Vec> out) const override {
    inner_.hvp(x, d, i, v, out);
  }
  void batch_gradients(const Vec& x, const Dataset& d, const IndexList& idx, RowMatrix& out) const override {
    calls_.push_back(idx);
    inner_.batch_gradients(x, d, idx, out);
  }
  mutable std::vector<IndexList> calls_;
  mutable Index single_calls_ = 0;

 private:
  const Model& inner_;
};

// Every record is drawn at most once: a batch call either repeats the previous
// call's records (the two gradients of one O2 difference) or touches only
// records never seen before.
inline void expect_single_use(const CountingModel& m, Index n) {
  std::vector<int> seen(n, 0);
  for (std::size_t c = 0; c < m.calls_.size(); ++c) {
    if (c > 0 && m.calls_[c] == m.calls_[c - 1]) continue;
    for (Index i : m.calls_[c]) {
      ASSERT_LT(i, n);
      EXPECT_EQ(seen[i]++, 0) << "record " << i << " used twice";
    }
  }
}

}  // namespace dpsosp::testing
