// Internal: the audit's statistics: Clopper-Pearson bounds, the lower bound
// on epsilon, and the choice of the best threshold test.
#pragma once
#include <cstddef>
#include <limits>
#include <map>
#include <vector>

#include "dpsosp/audit.hpp"

namespace dpsosp::audit::detail {

/// log((TPR_lower - delta) / FPR_upper), 0 when not positive.
double bound_from_rates(double tpr_lower, double fpr_upper, double delta);

// Clopper-Pearson bounds for k = 0..n, computed once each (the test search
// asks for the same counts many times).
class BoundTable {
 public:
  BoundTable(double delta, double alpha) : delta_(delta), alpha_(alpha) {}
  double bound(Index tp, Index positives, Index fp, Index negatives) {
    return bound_from_rates(cached(lower_, tp, positives, true), cached(upper_, fp, negatives, false), delta_);
  }

 private:
  double cached(std::map<Index, std::vector<double>>& table, Index k, Index n, bool lower);
  double delta_, alpha_;
  std::map<Index, std::vector<double>> lower_, upper_;
};

struct Test {
  std::size_t score = 0;
  double threshold = 0;
  bool reject_high = true;       // positive when score > threshold (else <= threshold)
  bool positive_is_with = true;  // the positive dataset is D' (else D)
  double bound = -std::numeric_limits<double>::infinity();
};

/// Positives of a test among sorted scores.
Index count_positive(const std::vector<double>& sorted, double t, bool reject_high);

/// The best of the four tests of one score (either dataset positive, either
/// direction) on the selection half, if better than `best`. Only thresholds
/// at a score of the null side can be optimal (the FPR changes only there).
void choose_test(std::size_t score, std::vector<double> without, std::vector<double> with, BoundTable& table,
                 Test& best);

}  // namespace dpsosp::audit::detail
