// The PLD's convolutions by FFT (internal; Eigen's FFT module).
#pragma once
#include <complex>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dpsosp::privacy::detail {

using Spectrum = std::vector<std::complex<double>>;

/// The smallest power of two >= n.
std::size_t fft_length(std::size_t n);
/// In place (any length). inverse: includes the 1/N factor.
void fft(Spectrum& a, bool inverse);
/// The linear convolution of a and b (length a.size() + b.size() - 1): by
/// direct sums when one is short, by FFT otherwise.
std::vector<double> convolve(const std::vector<double>& a, const std::vector<double>& b);
/// The `times`-fold convolution of p with itself on a window: entry j is
/// the mass at index window_start + j of the exact result, for j < window_length,
/// computed cyclically modulo the FFT length `length` (>= window_length and
/// >= p.size(), a power of two): mass outside the window wraps onto it.
/// The power is taken by repeated squaring.
std::vector<double> self_convolve(const std::vector<double>& p, std::uint64_t times, std::int64_t window_start,
                                  std::size_t window_length, std::size_t length);

}  // namespace dpsosp::privacy::detail
