// The PLD's convolutions through Eigen's FFT module (unsupported/Eigen/FFT,
// its kissfft backend): real sequences by their half spectrum, the product
// (or power) of spectra, the inverse with its 1/N. bench/fft_bench.cpp
// measured the radix-2 FFT this replaced: no faster at the PLD's lengths.
#include "privacy/fft.hpp"

#include <algorithm>
#include <unsupported/Eigen/FFT>

namespace dpsosp::privacy::detail {
namespace {

using Complex = std::complex<double>;

// One engine a thread: it keeps the plans (twiddles) of the lengths it met,
// which the calibration meets many times.
Eigen::FFT<double>& engine() {
  thread_local Eigen::FFT<double> fft = [] {
    Eigen::FFT<double> f;
    f.SetFlag(Eigen::FFT<double>::HalfSpectrum);
    return f;
  }();
  return fft;
}

// Products written out: std::complex's operator* checks for NaN and inf on
// every call (C Annex G), several times slower, and these values are finite.
inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

Complex power(Complex base, std::uint64_t exponent) {
  Complex result = 1.0;
  while (exponent > 0) {
    if (exponent & 1u) result = mul(result, base);
    exponent >>= 1;
    if (exponent > 0) base = mul(base, base);
  }
  return result;
}

// A thread's buffers, kept across calls: the calibration convolves PLDs of
// the same few lengths dozens of times, and fresh vectors of 2^16 to 2^20
// entries cost their zero-fill and page faults each time (a quarter of a
// calibration's time, measured with perf: docs/performance.md).
// Buffers past kKeep entries (a PLD of 2^23 bins would hold 190 MB) are
// released after their call: a long-lived process (the Python module) keeps
// at most about 40 MB a thread.
struct Scratch {
  std::vector<double> real;  // the padded input, then the inverse's output
  Spectrum a, b;
};
constexpr std::size_t kKeep = std::size_t{1} << 20;
Scratch& scratch() {
  thread_local Scratch s;
  return s;
}
void release_large() {
  Scratch& s = scratch();
  if (s.real.capacity() > kKeep) s = Scratch{};
}

// The half spectrum (length/2 + 1 entries) of x zero-padded to `length`, into out.
void real_forward(const std::vector<double>& x, std::size_t length, Spectrum& out) {
  std::vector<double>& padded = scratch().real;
  padded.resize(length);
  std::copy(x.begin(), x.end(), padded.begin());
  std::fill(padded.begin() + static_cast<std::ptrdiff_t>(x.size()), padded.end(), 0.0);
  out.resize(length / 2 + 1);
  engine().fwd(out.data(), padded.data(), static_cast<Eigen::Index>(length));
}

// The real sequence of `length` with half spectrum X, in the thread's buffer
// (valid until the next call here).
const std::vector<double>& real_inverse(const Spectrum& spectrum, std::size_t length) {
  std::vector<double>& x = scratch().real;
  x.resize(length);
  engine().inv(x.data(), spectrum.data(), static_cast<Eigen::Index>(length));
  return x;
}

}  // namespace

std::size_t fft_length(std::size_t n) {
  std::size_t length = 2;
  while (length < n) length <<= 1;
  return length;
}

void fft(Spectrum& a, bool inverse) {
  if (a.size() <= 1) return;
  Eigen::FFT<double> complex_fft;  // full spectra: no half-spectrum flag
  Spectrum out;
  if (inverse)
    complex_fft.inv(out, a);
  else
    complex_fft.fwd(out, a);
  a = std::move(out);
}

std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return {};
  const std::size_t out = a.size() + b.size() - 1;
  if (std::min(a.size(), b.size()) <= 64) {
    std::vector<double> result(out, 0.0);
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < b.size(); ++j) result[i + j] += a[i] * b[j];
    return result;
  }
  const std::size_t n = fft_length(out);
  Spectrum &fa = scratch().a, &fb = scratch().b;
  real_forward(a, n, fa);
  real_forward(b, n, fb);
  for (std::size_t k = 0; k < fa.size(); ++k) fa[k] = mul(fa[k], fb[k]);
  const std::vector<double>& cyclic = real_inverse(fa, n);
  std::vector<double> result(cyclic.begin(), cyclic.begin() + static_cast<std::ptrdiff_t>(out));
  release_large();
  return result;
}

std::vector<double> self_convolve(const std::vector<double>& p, std::uint64_t times, std::int64_t window_start,
                                  std::size_t window_length, std::size_t length) {
  Spectrum& f = scratch().a;
  real_forward(p, length, f);
  for (auto& x : f) x = power(x, times);
  const std::vector<double>& cyclic = real_inverse(f, length);
  std::vector<double> window(window_length);
  const auto n = static_cast<std::int64_t>(length);
  for (std::size_t j = 0; j < window_length; ++j) {
    const std::int64_t index = ((window_start + static_cast<std::int64_t>(j)) % n + n) % n;
    window[j] = cyclic[static_cast<std::size_t>(index)];
  }
  release_large();
  return window;
}

}  // namespace dpsosp::privacy::detail
