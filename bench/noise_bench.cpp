// Noise: Gaussian numbers per second (Philox4x32-10 + Box-Muller, the
// reproducible stream), the tree mechanism's cost per step for trees of
// T = 2^10 and 2^20 steps (drawing each node's noise as it opens, or ahead
// on one or two threads), and the sample pool's shuffle.
#include <benchmark/benchmark.h>

#include "dpsosp/dpsosp.hpp"

namespace dpsosp::bench {
namespace {

void BM_GaussianFill(benchmark::State& state) {
  Vec v(state.range(0));
  GaussianStream stream(1, StreamPurpose::kTest);
  for (auto _ : state) {
    stream.fill(v, 1.0);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GaussianFill)->ArgName("d")->Arg(100)->Arg(7840)->Arg(1 << 20);

void BM_GaussianNext(benchmark::State& state) {
  GaussianStream stream(1, StreamPurpose::kTest);
  for (auto _ : state) benchmark::DoNotOptimize(stream.next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GaussianNext);

// One iteration = a whole tree of T = state.range(0) steps; items = steps.
void run_trees(benchmark::State& state, TreeNoise& tree) {
  const auto steps = static_cast<std::uint64_t>(state.range(0));
  double sink = 0;
  for (auto _ : state) {
    tree.restart();
    for (std::uint64_t t = 0; t < steps; ++t) sink += tree.next()[0];
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * steps));
}

// noise = 0 uses the all-ones test mode, which leaves the tree's own
// bookkeeping and additions.
void BM_TreeStep(benchmark::State& state) {
  const auto d = static_cast<Index>(state.range(1));
  const bool noise = state.range(2) != 0;
  TreeNoise tree(d, 1.0, GaussianStream(NoiseKey::from_hex("000102030405060708090a0b0c0d0e0f"), StreamPurpose::kTreeNoise), !noise);
  run_trees(state, tree);
}
BENCHMARK(BM_TreeStep)
    ->ArgNames({"T", "d", "noise"})
    ->Args({1 << 10, 100, 0})
    ->Args({1 << 20, 100, 0})
    ->Args({1 << 10, 100, 1})
    ->Args({1 << 20, 100, 1})
    ->Args({1 << 10, 7840, 1})
    ->Unit(benchmark::kMillisecond);

// The same with the noise drawn ahead (TreeNoise::draw_ahead), 2^15 numbers
// at a time on `threads` threads, as spider runs do with two threads: the
// same releases, the Gaussians made in bulk and in parallel.
void BM_TreeStepAhead(benchmark::State& state) {
  const auto d = static_cast<Index>(state.range(1));
  const auto threads = static_cast<int>(state.range(2));
  TreeNoise tree(d, 1.0, GaussianStream(NoiseKey::from_hex("000102030405060708090a0b0c0d0e0f"), StreamPurpose::kTreeNoise));
  tree.draw_ahead(0, std::size_t{1} << 15, threads);
  run_trees(state, tree);
}
BENCHMARK(BM_TreeStepAhead)
    ->ArgNames({"T", "d", "threads"})
    ->Args({1 << 10, 100, 1})
    ->Args({1 << 10, 100, 2})
    ->Args({1 << 20, 100, 2})
    ->Args({1 << 10, 7840, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SamplePool(benchmark::State& state) {
  const auto n = static_cast<Index>(state.range(0));
  for (auto _ : state) {
    SamplePool pool(n, 5);
    benchmark::DoNotOptimize(pool.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SamplePool)->ArgName("n")->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dpsosp::bench
