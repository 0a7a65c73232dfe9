// The empirical privacy audit of a model of the caller's (AuditOptions::caller,
// caller_model.hpp): the path of dpsosp.torch.audit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audit_options.hpp"
#include "dpsosp/audit.hpp"
#include "dpsosp/error.hpp"

namespace dpsosp::audit {
namespace {

// The caller's model (AuditOptions::caller, the path of dpsosp.torch.audit):
// gradients from a callback that returns each record's row z_i give the audit
// of the library's own canary model bit for bit, on the GDP paths (one pass,
// passes over the order) and the Poisson passes, honest and tampered alike.
TEST(AuditCaller, TheCallersModelIsAuditedAsTheAuditsOwn) {
  const auto caller = [](const RowMatrix& records) {
    CallerGradients g;
    g.dim = static_cast<Index>(records.cols());
    g.gradients = [records](const Vec&, const std::vector<std::int64_t>& ids, RowMatrix& out) {
      out.resize(static_cast<Eigen::Index>(ids.size()), records.cols());
      for (std::size_t k = 0; k < ids.size(); ++k) out.row(static_cast<Eigen::Index>(k)) = records.row(ids[k]);
    };
    return g;
  };
  struct Case {
    Algorithm algorithm;
    Index steps;
    double epochs;
    Tampering tampering;
  };
  for (const Case c :
       {Case{Algorithm::kDpsgd, 1, 0, Tampering::kNone}, Case{Algorithm::kSpiderMfAdaptive, 10, 0, Tampering::kNone},
        Case{Algorithm::kSpiderMfAdaptive, 5, 2, Tampering::kNoiseDividedBy10}}) {
    AuditOptions o = options(c.algorithm, c.tampering);
    o.runs = 100;
    o.steps = c.steps;
    o.epochs = c.epochs;
    if (c.epochs > 0) o.canaries = 8;
    const AuditResult own = run_audit(o);
    o.caller = caller;
    const AuditResult theirs = run_audit(o);
    SCOPED_TRACE(algorithm_name(c.algorithm) + " epochs " + std::to_string(c.epochs));
    EXPECT_EQ(theirs.claimed_epsilon, own.claimed_epsilon);
    EXPECT_EQ(theirs.epsilon_lower_bound, own.epsilon_lower_bound);
    EXPECT_EQ(theirs.threshold, own.threshold);
    EXPECT_EQ(theirs.true_positives, own.true_positives);
    EXPECT_EQ(theirs.false_positives, own.false_positives);
    EXPECT_EQ(theirs.empirical_mu, own.empirical_mu);
    EXPECT_EQ(theirs.violation, own.violation);
    EXPECT_EQ(theirs.failures_with + theirs.failures_without, 0) << theirs.first_failure;
    ASSERT_EQ(theirs.tradeoff.has_value(), c.epochs > 0);
    if (theirs.tradeoff) EXPECT_EQ(theirs.tradeoff->true_positives, own.tradeoff->true_positives);
  }
  // Refused: a canary other than the linear one, and a model of the wrong size.
  AuditOptions o = options(Algorithm::kSpiderTreeAdaptive, Tampering::kNone, Canary::kQuadraticO2);
  o.caller = caller;
  EXPECT_THROW(o.Validate(), Error);
  o = options(Algorithm::kDpsgd, Tampering::kNone);
  o.runs = 4;
  o.caller = [&](const RowMatrix& records) {
    CallerGradients g = caller(records);
    g.dim = 2;
    return g;
  };
  try {
    run_audit(o);
    ADD_FAILURE() << "a caller's model of 2 parameters for dim 1 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected dim = 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dpsosp::audit
