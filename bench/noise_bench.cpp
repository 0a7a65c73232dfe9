// Noise: the generator's cost, the public stream (Philox4x32-10, keyed by the
// seed: sample order, synthetic data) beside the secret one (AES-128 in
// counter mode, keyed by a NoiseKey: all privacy noise), in normals and in raw
// 64-bit words per second; the secret stream on AES-NI and on the OpenSSL
// fallback (what a processor without AES-NI runs); the tree mechanism's cost
// per step with the secret stream, as runs use it (drawing each node's noise
// as it opens, or ahead on one or two threads); and the sample pool's shuffle.
//
// Names: .../philox, .../aes (AES-NI where the processor has it) and
// .../aes_openssl (AES-NI turned off for the benchmark).
#include <benchmark/benchmark.h>

#include <vector>

#include "dpsosp/dpsosp.hpp"
#include "random/aes_ctr.hpp"  // detail::aes_ni_turn_off_for_tests

namespace dpsosp::bench {
namespace {

enum class Generator { kPhilox, kAes, kAesOpenssl };

// Any fixed key: the cost does not depend on it.
NoiseKey bench_key() { return NoiseKey::from_hex("000102030405060708090a0b0c0d0e0f"); }

GaussianStream make_stream(Generator g, StreamPurpose secret_purpose = StreamPurpose::kTest) {
  if (g == Generator::kPhilox) return GaussianStream(1, StreamPurpose::kTest);
  return GaussianStream(bench_key(), secret_purpose);
}

// Turns AES-NI off for the OpenSSL rows for the lifetime of the object.
class Path {
 public:
  explicit Path(Generator g) : off_(g == Generator::kAesOpenssl) {
    if (off_) detail::aes_ni_turn_off_for_tests(true);
  }
  ~Path() {
    if (off_) detail::aes_ni_turn_off_for_tests(false);
  }
  Path(const Path&) = delete;
  Path& operator=(const Path&) = delete;

 private:
  bool off_;
};

// Normals per second: fill(v) of d numbers (Box-Muller on 16 blocks at a time).
void BM_Normals_fill(benchmark::State& state, Generator g) {
  const Path path(g);
  Vec v(state.range(0));
  GaussianStream stream = make_stream(g);
  for (auto _ : state) {
    stream.fill(v, 1.0);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK_CAPTURE(BM_Normals_fill, philox, Generator::kPhilox)->ArgName("d")->Arg(100)->Arg(7840)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_Normals_fill, aes, Generator::kAes)->ArgName("d")->Arg(100)->Arg(7840)->Arg(1 << 20);
BENCHMARK_CAPTURE(BM_Normals_fill, aes_openssl, Generator::kAesOpenssl)->ArgName("d")->Arg(100)->Arg(7840);

// Normals per second one at a time (next(): 8 blocks cached, one Box-Muller a pair).
void BM_Normals_next(benchmark::State& state, Generator g) {
  const Path path(g);
  GaussianStream stream = make_stream(g);
  for (auto _ : state) benchmark::DoNotOptimize(stream.next());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_Normals_next, philox, Generator::kPhilox);
BENCHMARK_CAPTURE(BM_Normals_next, aes, Generator::kAes);
BENCHMARK_CAPTURE(BM_Normals_next, aes_openssl, Generator::kAesOpenssl);

// Raw 64-bit words per second, `count` a call (next_u64s: all the blocks in
// one generator call): the generator alone, without Box-Muller.
void BM_Words(benchmark::State& state, Generator g) {
  const Path path(g);
  std::vector<std::uint64_t> words(static_cast<std::size_t>(state.range(0)));
  GaussianStream stream = make_stream(g);
  for (auto _ : state) {
    stream.next_u64s(words.data(), words.size());
    benchmark::DoNotOptimize(words.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK_CAPTURE(BM_Words, philox, Generator::kPhilox)->ArgName("count")->Arg(32)->Arg(1 << 16);
BENCHMARK_CAPTURE(BM_Words, aes, Generator::kAes)->ArgName("count")->Arg(32)->Arg(1 << 16);
BENCHMARK_CAPTURE(BM_Words, aes_openssl, Generator::kAesOpenssl)->ArgName("count")->Arg(32)->Arg(1 << 16);

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

// A tree step drawing its node's noise as it opens. noise = 0 uses the
// all-ones test mode, which leaves the tree's own bookkeeping and additions.
// The aes rows are what runs use; the philox row is the same tree on a public
// stream, for the generator's share of a step.
void BM_TreeStep(benchmark::State& state, Generator g) {
  const Path path(g);
  const auto d = static_cast<Index>(state.range(1));
  const bool noise = state.range(2) != 0;
  TreeNoise tree(d, 1.0, make_stream(g, StreamPurpose::kTreeNoise), !noise);
  run_trees(state, tree);
}
BENCHMARK_CAPTURE(BM_TreeStep, aes, Generator::kAes)
    ->ArgNames({"T", "d", "noise"})
    ->Args({1 << 10, 100, 0})
    ->Args({1 << 20, 100, 0})
    ->Args({1 << 10, 100, 1})
    ->Args({1 << 20, 100, 1})
    ->Args({1 << 10, 7840, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TreeStep, philox, Generator::kPhilox)
    ->ArgNames({"T", "d", "noise"})
    ->Args({1 << 10, 100, 1})
    ->Unit(benchmark::kMillisecond);

// The same with the noise drawn ahead (TreeNoise::draw_ahead), 2^15 numbers
// at a time on `threads` threads, as spider runs do with two threads: the
// same releases, the Gaussians made in bulk and in parallel.
void BM_TreeStepAhead(benchmark::State& state, Generator g) {
  const Path path(g);
  const auto d = static_cast<Index>(state.range(1));
  const auto threads = static_cast<int>(state.range(2));
  TreeNoise tree(d, 1.0, make_stream(g, StreamPurpose::kTreeNoise));
  tree.draw_ahead(0, std::size_t{1} << 15, threads);
  run_trees(state, tree);
}
BENCHMARK_CAPTURE(BM_TreeStepAhead, aes, Generator::kAes)
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
