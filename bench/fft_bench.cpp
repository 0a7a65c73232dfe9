// The PLD's convolutions (src/privacy/fft.cpp, through Eigen's FFT module)
// against Eigen's FFT called directly with one plan kept for all calls: the
// linear convolution of two probability vectors of the lengths a Gaussian PLD
// at discretization 1e-4 has (2^12 to 2^20 bins). The library's may add only
// the padding's copy.
//   build/bench/dpsosp_bench --benchmark_filter=Convolve
// docs/performance.md ("The PLD's FFT") has the figures, and those of the
// radix-2 FFT of our own that Eigen's replaced.
#include <benchmark/benchmark.h>

#include <complex>
#include <random>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "privacy/fft.hpp"

namespace {

std::vector<double> masses(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::exponential_distribution<double> e(1.0);
  std::vector<double> p(n);
  for (double& v : p) v = e(g) / static_cast<double>(n);
  return p;
}

std::vector<double> eigen_convolve(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t out = a.size() + b.size() - 1;
  const std::size_t n = dpsosp::privacy::detail::fft_length(out);
  static Eigen::FFT<double> fft;
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  std::vector<double> pa(a), pb(b);
  pa.resize(n);
  pb.resize(n);
  std::vector<std::complex<double>> fa, fb;
  fft.fwd(fa, pa);
  fft.fwd(fb, pb);
  for (std::size_t k = 0; k < fa.size(); ++k) fa[k] *= fb[k];
  std::vector<double> r;
  fft.inv(r, fa, n);
  r.resize(out);
  return r;
}

void BM_ConvolveLibrary(benchmark::State& state) {
  const auto a = masses(static_cast<std::size_t>(state.range(0)), 1), b = masses(a.size(), 2);
  for (auto _ : state) benchmark::DoNotOptimize(dpsosp::privacy::detail::convolve(a, b));
}
void BM_ConvolveEigen(benchmark::State& state) {
  const auto a = masses(static_cast<std::size_t>(state.range(0)), 1), b = masses(a.size(), 2);
  for (auto _ : state) benchmark::DoNotOptimize(eigen_convolve(a, b));
}
BENCHMARK(BM_ConvolveLibrary)->RangeMultiplier(16)->Range(1 << 12, 1 << 20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvolveEigen)->RangeMultiplier(16)->Range(1 << 12, 1 << 20)->Unit(benchmark::kMillisecond);

}  // namespace
