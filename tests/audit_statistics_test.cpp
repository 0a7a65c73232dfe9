// The audit's statistics (src/audit/statistics.cpp): the incomplete beta
// function, Clopper-Pearson intervals and the epsilon bound from counts,
// against closed forms and known intervals.
#include <gtest/gtest.h>

#include <cmath>

#include "dpsosp/audit.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::audit {
namespace {

TEST(AuditStatistics, IncompleteBetaClosedForms) {
  for (double x : {0.0, 0.1, 0.37, 0.5, 0.9, 1.0}) {
    EXPECT_NEAR(incomplete_beta(1, 1, x), x, 1e-14);
    EXPECT_NEAR(incomplete_beta(3, 1, x), x * x * x, 1e-14);
    EXPECT_NEAR(incomplete_beta(1, 4, x), 1 - std::pow(1 - x, 4), 1e-14);
  }
  EXPECT_NEAR(incomplete_beta(7.5, 7.5, 0.5), 0.5, 1e-14);
  EXPECT_NEAR(incomplete_beta(500, 500, 0.5), 0.5, 1e-12);
  EXPECT_THROW(incomplete_beta(0, 1, 0.5), Error);
  EXPECT_THROW(incomplete_beta(1, 1, 1.5), Error);
}

TEST(AuditStatistics, ClopperPearsonMatchesKnownIntervals) {
  // R: binom.test(5, 20)$conf.int = 0.08657147 0.49104587 (two-sided 95%).
  EXPECT_NEAR(clopper_pearson_lower(5, 20, 0.025), 0.08657147, 1e-8);
  EXPECT_NEAR(clopper_pearson_upper(5, 20, 0.025), 0.49104587, 1e-8);
  // k = 0 and k = n have closed forms.
  EXPECT_EQ(clopper_pearson_lower(0, 1000, 0.025), 0.0);
  EXPECT_NEAR(clopper_pearson_upper(0, 1000, 0.025), 1 - std::pow(0.025, 1.0 / 1000), 1e-12);
  EXPECT_NEAR(clopper_pearson_lower(1000, 1000, 0.025), std::pow(0.025, 1.0 / 1000), 1e-12);
  EXPECT_EQ(clopper_pearson_upper(1000, 1000, 0.025), 1.0);
  // Symmetry: lower(k, n) = 1 - upper(n - k, n).
  for (Index k : {1, 17, 500, 999})
    EXPECT_NEAR(clopper_pearson_lower(k, 1000, 0.01), 1 - clopper_pearson_upper(1000 - k, 1000, 0.01), 1e-12);
  EXPECT_THROW(clopper_pearson_lower(3, 2, 0.05), Error);
  EXPECT_THROW(clopper_pearson_upper(1, 0, 0.05), Error);
}

TEST(AuditStatistics, EpsilonBoundFromCounts) {
  // No separation, no evidence.
  EXPECT_EQ(epsilon_lower_bound(500, 1000, 500, 1000, 1e-5, 0.025), 0.0);
  // Perfect separation over 1000 runs each: log(TPR_lo / FPR_hi) with TPR_lo = 0.025^(1/1000).
  const double tpr = std::pow(0.025, 1.0 / 1000), fpr = 1 - std::pow(0.025, 1.0 / 1000);
  EXPECT_NEAR(epsilon_lower_bound(1000, 1000, 0, 1000, 1e-5, 0.025), std::log((tpr - 1e-5) / fpr), 1e-9);
  // delta above the true positive rate: no bound.
  EXPECT_EQ(epsilon_lower_bound(1, 1000, 0, 1000, 0.5, 0.025), 0.0);
}

}  // namespace
}  // namespace dpsosp::audit
