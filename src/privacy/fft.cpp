// Radix-2 FFT (iterative Cooley-Tukey; every twiddle from cos/sin of its own
// angle so that their error does not accumulate), real sequences through a
// complex FFT of half the length, and the PLD's convolutions.
#include "privacy/fft.hpp"

#include <algorithm>
#include <cmath>

namespace dpsosp::privacy::detail {
namespace {

constexpr double kPi = 3.14159265358979323846;
using Complex = std::complex<double>;

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

// The twiddles of a length-n FFT, one contiguous run per stage: entry h + k
// is e^{-i pi k / h} for k < h (h = 1, 2, 4, ..., n/2); and e^{-2 pi i k / (2n)},
// k <= n, for the real-sequence split of a length-2n transform.
struct Twiddles {
  std::size_t n = 0;
  Spectrum stage, split;
};

void fill(std::size_t n, Twiddles& t) {
  t.n = n;
  t.stage.assign(std::max<std::size_t>(n, 1), 0.0);
  for (std::size_t h = 1; h < n; h <<= 1)
    for (std::size_t k = 0; k < h; ++k) {
      const double angle = -kPi * static_cast<double>(k) / static_cast<double>(h);
      t.stage[h + k] = {std::cos(angle), std::sin(angle)};
    }
  t.split.resize(n + 1);
  for (std::size_t k = 0; k <= n; ++k) {
    const double angle = -kPi * static_cast<double>(k) / static_cast<double>(n);
    t.split[k] = {std::cos(angle), std::sin(angle)};
  }
}

// Cached per thread up to 2^19 (the calibration runs many transforms of one
// length), built fresh above.
const Twiddles& twiddles(std::size_t n, Twiddles& fresh) {
  constexpr std::size_t kMaxCached = std::size_t{1} << 19;  // 16 MB held at most
  thread_local Twiddles cached;
  if (n > kMaxCached) {
    fill(n, fresh);
    return fresh;
  }
  if (cached.n != n) fill(n, cached);
  return cached;
}

void transform(Spectrum& a, bool inverse, const Twiddles& t) {
  const std::size_t n = a.size();
  for (std::size_t i = 1, j = 0; i < n; ++i) {  // bit reversal
    std::size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (std::size_t half = 1; half < n; half <<= 1) {
    const Complex* w = t.stage.data() + half;
    for (std::size_t start = 0; start < n; start += 2 * half) {
      Complex* x = a.data() + start;
      Complex* y = x + half;
      for (std::size_t k = 0; k < half; ++k) {
        const Complex v = mul(y[k], inverse ? std::conj(w[k]) : w[k]);
        y[k] = x[k] - v;
        x[k] += v;
      }
    }
  }
  if (inverse) {
    const double scale = 1.0 / static_cast<double>(n);
    for (auto& x : a) x *= scale;
  }
}

// The spectrum X[0..m] of a real sequence of even length 2m (zero-padded x),
// from one complex FFT of length m.
Spectrum real_forward(const std::vector<double>& x, std::size_t length) {
  const std::size_t m = length / 2;
  Twiddles fresh;
  const Twiddles& t = twiddles(m, fresh);
  Spectrum z(m, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i % 2 == 0) z[i / 2].real(x[i]);
    else z[i / 2].imag(x[i]);
  }
  transform(z, false, t);
  Spectrum out(m + 1);
  for (std::size_t k = 0; k <= m; ++k) {
    const Complex a = z[k % m], b = std::conj(z[(m - k) % m]);
    const Complex even = 0.5 * (a + b), odd = Complex(0, -0.5) * (a - b);
    out[k] = even + mul(t.split[k], odd);
  }
  return out;
}

// The inverse of real_forward: the real sequence of length 2m with spectrum X[0..m].
std::vector<double> real_inverse(const Spectrum& spectrum) {
  const std::size_t m = spectrum.size() - 1;
  Twiddles fresh;
  const Twiddles& t = twiddles(m, fresh);
  Spectrum z(m);
  for (std::size_t k = 0; k < m; ++k) {
    const Complex a = spectrum[k], b = std::conj(spectrum[m - k]);
    const Complex even = 0.5 * (a + b), odd = mul(0.5 * (a - b), std::conj(t.split[k]));
    z[k] = even + Complex(0, 1) * odd;
  }
  transform(z, true, t);
  std::vector<double> x(2 * m);
  for (std::size_t i = 0; i < m; ++i) {
    x[2 * i] = z[i].real();
    x[2 * i + 1] = z[i].imag();
  }
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
  Twiddles fresh;
  transform(a, inverse, twiddles(a.size(), fresh));
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
  Spectrum fa = real_forward(a, n);
  const Spectrum fb = real_forward(b, n);
  for (std::size_t k = 0; k < fa.size(); ++k) fa[k] = mul(fa[k], fb[k]);
  std::vector<double> result = real_inverse(fa);
  result.resize(out);
  return result;
}

std::vector<double> self_convolve(const std::vector<double>& p, std::uint64_t times, std::int64_t window_start,
                                  std::size_t window_length, std::size_t length) {
  Spectrum f = real_forward(p, length);
  for (auto& x : f) x = power(x, times);
  const std::vector<double> cyclic = real_inverse(f);
  std::vector<double> window(window_length);
  const auto n = static_cast<std::int64_t>(length);
  for (std::size_t j = 0; j < window_length; ++j) {
    const std::int64_t index = ((window_start + static_cast<std::int64_t>(j)) % n + n) % n;
    window[j] = cyclic[static_cast<std::size_t>(index)];
  }
  return window;
}

}  // namespace dpsosp::privacy::detail
