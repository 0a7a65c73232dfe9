// The secure noise mode's cost (docs/noise.md, "Secure mode"): exact discrete
// Gaussian draws per second on one thread at the scales runs use (about 1e3
// to 1e6 grid units), beside the float mode's normals from the same AES
// stream; and one release of the tree and Gaussian mechanisms in each mode,
// at d = 100 and d = 7840. bench/secure_cost.py measures whole runs.
#include <benchmark/benchmark.h>

#include <vector>

#include "dpsosp/discrete_gaussian.hpp"
#include "dpsosp/dpsosp.hpp"

namespace dpsosp::bench {
namespace {

NoiseKey bench_key() { return NoiseKey::from_hex("000102030405060708090a0b0c0d0e0f"); }

// Discrete Gaussian draws of scale s, one thread, a block of 1024 a call.
void BM_DiscreteGaussian(benchmark::State& state) {
  const auto s = static_cast<std::uint64_t>(state.range(0));
  std::vector<double> out(kDiscreteBlock);
  std::uint32_t release = 0;
  for (auto _ : state) {
    fill_discrete_gaussian(bench_key(), StreamPurpose::kDiscreteNoise, release++, s, out.data(), out.size(), 1);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(out.size()));
}
BENCHMARK(BM_DiscreteGaussian)->ArgName("s")->Arg(1)->Arg(1000)->Arg(1000000)->Arg(1 << 27);

// The reference: float-mode normals from the same AES stream, one thread.
void BM_FloatNormals(benchmark::State& state) {
  Vec v(static_cast<Eigen::Index>(kDiscreteBlock));
  GaussianStream stream(bench_key(), StreamPurpose::kGaussianNoise);
  for (auto _ : state) {
    stream.fill(v, 1.0);
    benchmark::DoNotOptimize(v.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(kDiscreteBlock));
}
BENCHMARK(BM_FloatNormals);

// Words of the AES stream a discrete Gaussian draw uses, as a counter.
void BM_DiscreteGaussianWords(benchmark::State& state) {
  const auto s = static_cast<std::uint64_t>(state.range(0));
  GaussianStream stream(bench_key(), StreamPurpose::kDiscreteNoise);
  RandomWords words(stream);
  std::int64_t draws = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(exact::discrete_gaussian(words, s));
    ++draws;
  }
  state.counters["words_per_draw"] = static_cast<double>(words.words_used()) / static_cast<double>(draws);
  state.SetItemsProcessed(draws);
}
BENCHMARK(BM_DiscreteGaussianWords)->ArgName("s")->Arg(1000)->Arg(1000000);

// One release (a tree step, or a Gaussian-mechanism step) of d numbers.
void BM_Release(benchmark::State& state, MechanismKind kind, NoiseMode mode) {
  const auto d = static_cast<Index>(state.range(0));
  PrivacyTarget target{1.0, 1e-6};
  target.noise = mode;
  const std::unique_ptr<Mechanism> m = kind == MechanismKind::kTree
                                           ? make_tree_mechanism(d, bench_key(), 0.01, 255, target)
                                           : make_gaussian_mechanism(d, bench_key(), target, 0.01);
  Vec exact = Vec::Constant(static_cast<Eigen::Index>(d), 0.5), released;
  std::int64_t t = 0;
  for (auto _ : state) {
    m->release(exact, t++ % 255 == 0, 0.01, released);
    benchmark::DoNotOptimize(released.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(d));
}
BENCHMARK_CAPTURE(BM_Release, tree_float, MechanismKind::kTree, NoiseMode::kFloat)->ArgName("d")->Arg(100)->Arg(7840);
BENCHMARK_CAPTURE(BM_Release, tree_secure, MechanismKind::kTree, NoiseMode::kSecure)->ArgName("d")->Arg(100)->Arg(7840);
BENCHMARK_CAPTURE(BM_Release, gaussian_float, MechanismKind::kGaussian, NoiseMode::kFloat)
    ->ArgName("d")
    ->Arg(100)
    ->Arg(7840);
BENCHMARK_CAPTURE(BM_Release, gaussian_secure, MechanismKind::kGaussian, NoiseMode::kSecure)
    ->ArgName("d")
    ->Arg(100)
    ->Arg(7840);

}  // namespace
}  // namespace dpsosp::bench
