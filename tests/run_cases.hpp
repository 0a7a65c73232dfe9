// Tests: the runs that data-parallel and streamed runs are checked against
// (process_group_test.cpp, streamed_run_test.cpp): every single-pass
// algorithm of the table, on dense and sparse records. The algorithms come
// from the table itself, so a new row is checked without a change here.
#pragma once
#include <cstring>
#include <string>
#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "test_data.hpp"
#include "test_keys.hpp"

namespace dpsosp::testing {

/// The table's algorithms, by name.
inline std::vector<std::string> every_algorithm() { return algorithm_names(); }

/// Options of a short run of `algo` (epsilon 2 when private), reproducible.
inline RunOptions short_run(const std::string& algo, Index max_steps = 60) {
  RunOptions o;
  o.algorithm = parse_algorithm(algo);
  const AlgorithmInfo& info = algorithm_info(o.algorithm);
  if (info.is_private) o.privacy = PrivacyTarget{2.0, 1e-6};
  o.seed = 21;
  if (info.is_private) o.noise_key = test_noise_key();
  o.constants.G = 1;
  o.constants.M = 4;
  if (info.knobs & kKnobBatchSize) o.batch_size = 150;
  o.max_steps = max_steps;
  o.threads = 1;
  return o;
}

/// Logistic records, dense or sparse.
inline Dataset run_data(bool sparse, Index n = 5000, Index p = 12) {
  return make_test_data(n, p, Labels::kBinary, sparse, sparse ? 31 : 30);
}

inline bool same_bits(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), sizeof(double) * a.size()) == 0;
}

}  // namespace dpsosp::testing
