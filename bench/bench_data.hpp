// Problems shared by the micro-benchmarks: built once per process, large
// enough that the records do not fit in the caches (a single-pass optimizer
// reads each record once, from memory).
#pragma once
#include <memory>
#include <string>

#include "dpsosp/dpsosp.hpp"

namespace dpsosp::bench {

struct BenchProblem {
  Dataset data;
  std::unique_ptr<Model> model;
  Vec x, x_prev;    // a point and a nearby previous point (for O2)
  double clip = 1;  // clips a fair share of the per-example vectors
  IndexList order;  // a random permutation of the records
};

/// "logistic" (gaussian-mixture, n = 10^6, d = 100), "phase-retrieval"
/// (n = 10^6, d = 8), "softmax" and "mlp" (Fashion-MNIST-sized random images:
/// n = 20000, p = 784, 10 classes; mlp with 32 hidden units), "pca" (n = 200000,
/// p = 50, rank 2).
const BenchProblem& bench_problem(const std::string& name);

/// The next b records of the problem's random order (cycling): a batch as
/// SamplePool would draw it.
IndexList next_batch(const BenchProblem& p, Index& cursor, Index b);
/// The next b stored rows (cycling): a batch as a run over records stored in
/// its sample order reads it.
IndexList next_stored_batch(const BenchProblem& p, Index& cursor, Index b);

}  // namespace dpsosp::bench
