#include "bench_data.hpp"

#include <map>
#include <numeric>

namespace dpsosp::bench {
namespace {

Vec random_point(Index d, double scale, std::uint64_t seed) {
  Vec x(static_cast<Eigen::Index>(d));
  GaussianStream(seed, StreamPurpose::kTest, 1).fill(x, scale);
  return x;
}

// Image-like records: |N(0,1)| clipped to [0, 1] with about half the pixels 0.
Dataset image_data(Index n, Index p, Index classes) {
  RowMatrix features(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(p));
  Vec labels(static_cast<Eigen::Index>(n));
  GaussianStream g(7, StreamPurpose::kTest, 2);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < p; ++j) features(i, j) = std::min(1.0, std::max(0.0, g.next()));
    labels[static_cast<Eigen::Index>(i)] = static_cast<double>(i % classes);
  }
  return Dataset(std::move(features), std::move(labels));
}

BenchProblem build(const std::string& name) {
  BenchProblem p;
  ModelOptions options;
  if (name == "logistic") {
    // The records of bench/compare.py (800 MB, in huge pages: moved, not
    // copied): a smaller set would sit largely in this machine's 480 MB L3
    // and flatter the random reads.
    p.data = std::move(make_synthetic("gaussian-mixture:n=1000000,d=100,seed=1").data);
  } else if (name == "phase-retrieval") {
    p.data = std::move(make_synthetic("phase-retrieval:n=1000000,d=8,seed=1").data);
  } else if (name == "pca") {
    p.data = std::move(make_synthetic("pca:n=200000,d=50,rank=2,seed=1").data);
    options.rank = 2;
  } else if (name == "softmax" || name == "mlp") {
    p.data = image_data(20000, 784, 10);
    options.classes = 10;
    options.hidden = 32;
  } else {
    throw Error("bench_problem: unknown problem '" + name + "'");
  }
  p.model = make_model(name, p.data.cols(), options, &p.data);
  const Index d = p.model->dim();
  p.x = random_point(d, 0.1, 11);
  p.x_prev = p.x + random_point(d, 0.01, 12);
  // O1 clip: about the median per-example gradient norm, so both branches run.
  p.clip = name == "phase-retrieval" ? 2.0 : 1.0;
  p.order.resize(p.data.rows());
  std::iota(p.order.begin(), p.order.end(), Index{0});
  GaussianStream shuffle(3, StreamPurpose::kSampleOrder);
  for (Index i = p.order.size(); i > 1; --i) std::swap(p.order[i - 1], p.order[shuffle.uniform_index(i)]);
  return p;
}

}  // namespace

const BenchProblem& bench_problem(const std::string& name) {
  static std::map<std::string, std::unique_ptr<BenchProblem>> problems;
  auto& slot = problems[name];
  if (!slot) slot = std::make_unique<BenchProblem>(build(name));
  return *slot;
}

IndexList next_batch(const BenchProblem& p, Index& cursor, Index b) {
  IndexList batch(b);
  for (Index k = 0; k < b; ++k) {
    batch[k] = p.order[cursor];
    cursor = (cursor + 1) % p.order.size();
  }
  return batch;
}

IndexList next_stored_batch(const BenchProblem& p, Index& cursor, Index b) {
  IndexList batch(b);
  for (Index k = 0; k < b; ++k) {
    batch[k] = cursor;
    cursor = (cursor + 1) % p.data.rows();
  }
  return batch;
}

}  // namespace dpsosp::bench
