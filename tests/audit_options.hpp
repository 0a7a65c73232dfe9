// The audit tests' common configuration: eps 1, delta 1e-5, 2 x 2000 runs of
// batches of 16, the tests' seed, two threads.
#pragma once
#include "dpsosp/audit.hpp"

namespace dpsosp::audit {

inline AuditOptions options(Algorithm algorithm, Tampering tampering, Canary canary = Canary::kLinear) {
  AuditOptions o;
  o.algorithm = algorithm;
  o.canary = canary;
  o.privacy = {1.0, 1e-5};
  o.runs = 2000;
  o.batch = 16;
  o.seed = 20241008;
  o.threads = 2;
  o.tampering = tampering;
  return o;
}

}  // namespace dpsosp::audit
