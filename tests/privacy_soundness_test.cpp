// What a private run publishes (SPEC section 8), at the library's level:
// regression tests for the findings of the privacy-soundness issue. The seed
// alone does not reproduce the noise (optimizer_test.cpp,
// Determinism.TheSeedAloneDoesNotReproduceTheNoise); here: no record makes a
// run fail, not-numbers are refused before the run, and the reported epsilon
// is the guarantee fixed before the run, whatever the data. The JSON report's
// split is tested from the command line (tests/cli/test_privacy_report.py).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_keys.hpp"

namespace dpsosp {
namespace {

struct AlgorithmCase {
  const char* name;
  double epochs;
  Index batch;
};
const AlgorithmCase kPrivate[] = {
    {"spider-tree-adaptive", 0, 0},
    {"spider-gauss-fixed", 0, 0},
    {"spider-tree-periodic", 0, 0},
    {"dpsgd", 0, 50},
    {"dpsgd", 2, 50},
};

RunOptions private_options(const AlgorithmCase& a, std::uint64_t seed) {
  RunOptions o;
  o.algorithm = parse_algorithm(a.name);
  o.privacy = {2.0, 1e-6};
  // small data: a larger alpha keeps the O1 batch within n
  if (algorithm_info(o.algorithm).knobs & kKnobAlphaScale) o.alpha_scale = 3.0;
  if (a.epochs > 0) o.epochs = a.epochs;
  if (a.batch > 0) o.batch_size = a.batch;
  o.seed = seed;
  o.noise_key = testing::test_noise_key();
  return o;
}

// 3000 records of 3 features, record 1500 extreme (every feature `big`).
Dataset one_extreme_record(const std::string& model, double big) {
  GaussianStream g(23, StreamPurpose::kTest);
  const Index n = 3000, p = 3;
  RowMatrix X(n, p);
  Vec y(model == "pca" ? 0 : static_cast<Eigen::Index>(n));
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < p; ++j) X(i, j) = g.next();
    if (i == n / 2) X.row(static_cast<Eigen::Index>(i)).setConstant(big);
    if (model == "pca") continue;
    const double u = g.uniform();
    y[static_cast<Eigen::Index>(i)] = (model == "logistic" || model == "sigmoid") ? (X(i, 0) > 0 ? 1.0 : 0.0)
                                      : (model == "softmax" || model == "mlp")    ? std::floor(3 * u)
                                                                                  : 2 * u - 1;
  }
  return Dataset(std::move(X), std::move(y));
}

// SPEC section 8: whether a run fails, and where, must not depend on one
// record. Features 1e120 make phase retrieval's gradient overflow to infinity
// (and 1e300 PCA's); the run ends normally with a finite x. (On the main of
// 2026-11 both failed with "the iterate became non-finite".)
TEST(PrivacySoundness, OneExtremeRecordNeverStopsAPrivateRun) {
  for (const char* model_name : {"logistic", "sigmoid", "cauchy", "phase-retrieval", "pca", "softmax", "mlp"}) {
    for (const double big : {1e120, 1e300}) {
      const Dataset data = one_extreme_record(model_name, big);
      ModelOptions mo;
      mo.hidden = 4;
      const auto model = make_model(model_name, data.cols(), mo, &data);
      for (const AlgorithmCase& a : kPrivate) {
        SCOPED_TRACE(std::string(model_name) + " " + std::to_string(big) + " " + a.name +
                     (a.epochs > 0 ? " poisson" : ""));
        Summary s;
        ASSERT_NO_THROW(
            s = minimize(*model, data, Vec::Zero(static_cast<Eigen::Index>(model->dim())), private_options(a, 5)));
        EXPECT_TRUE(s.x.allFinite());
        EXPECT_TRUE(s.termination == Termination::kDataExhausted || s.termination == Termination::kPlannedSteps);
        if (std::string(model_name) == "phase-retrieval" && s.samples_used == data.rows()) {
          EXPECT_GT(s.diagnostics.nonfinite_o1 + s.diagnostics.nonfinite_o2, 0u) << "the extreme record was used";
        }
      }
    }
  }
}

// Not-numbers are refused before any noise is drawn, naming the record (its
// index, also when the records are stored in a sample order) and the column.
TEST(PrivacySoundness, NotNumbersAreRefusedUpFrontNamingRecordAndColumn) {
  const auto model = make_model("cauchy", 3);
  const RunOptions o = private_options(kPrivate[0], 1);
  for (const bool stored : {false, true}) {
    SCOPED_TRACE(stored ? "stored in a sample order" : "in their own order");
    const Dataset clean = one_extreme_record("cauchy", 1.0);
    RowMatrix X = clean.dense();
    X(41, 2) = std::numeric_limits<double>::quiet_NaN();
    Dataset features(X, clean.labels());
    Vec y = clean.labels();
    y[123] = -std::numeric_limits<double>::infinity();
    Dataset labels(clean.dense(), y);
    if (stored) {
      features.store_in_sample_order(99);
      labels.store_in_sample_order(99);
    }
    try {
      minimize(*model, features, Vec::Zero(3), o);
      FAIL() << "a NaN feature was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("data: record 41 (0-based), feature 2 is nan"), std::string::npos)
          << e.what();
    }
    try {
      minimize(*model, labels, Vec::Zero(3), o);
      FAIL() << "an infinite label was accepted";
    } catch (const Error& e) {
      // (the model's label check comes first: "cauchy: label of record 123 (0-based) is -inf")
      EXPECT_NE(std::string(e.what()).find("record 123 (0-based)"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("-inf"), std::string::npos) << e.what();
    }
  }
}

// The reported epsilon is the guarantee fixed before the run: it equals the
// target the noise was calibrated to, for every private algorithm, and does
// not move when the data make other phases (finding 4 of the issue: main
// reported 1.81 for a target of 2, recomputed from the phases that ran).
TEST(PrivacySoundness, EpsilonIsTheTargetWhateverTheData) {
  const auto model = make_model("phase-retrieval", 3);
  const Dataset quiet = one_extreme_record("phase-retrieval", 1.0);
  const Dataset loud = one_extreme_record("phase-retrieval", 30.0);
  for (const AlgorithmCase& a : kPrivate) {
    SCOPED_TRACE(std::string(a.name) + (a.epochs > 0 ? " poisson" : ""));
    const RunOptions o = private_options(a, 3);
    const Summary s1 = minimize(*model, quiet, Vec::Constant(3, 0.3), o);
    const Summary s2 = minimize(*model, loud, Vec::Constant(3, 0.3), o);
    EXPECT_NEAR(s1.privacy.epsilon, 2.0, a.epochs > 0 ? 1e-6 : 1e-9);
    EXPECT_LE(s1.privacy.epsilon, 2.0 + 1e-12);
    EXPECT_EQ(s1.privacy.epsilon, s2.privacy.epsilon);
    EXPECT_EQ(s1.privacy.sigma, s2.privacy.sigma);
    EXPECT_EQ(s1.privacy.mu, s2.privacy.mu);
    EXPECT_EQ(s1.privacy.depth, s2.privacy.depth);
  }
}

}  // namespace
}  // namespace dpsosp
