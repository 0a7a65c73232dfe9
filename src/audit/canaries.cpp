// The audit's per-run randomness (src/audit/canaries.hpp).
#include <array>

#include "audit/canaries.hpp"

namespace dpsosp::audit::detail {

namespace {
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t run_seed(std::uint64_t base, Algorithm algorithm, int dataset, Index run) {
  const std::uint64_t stream = splitmix64(base) ^ splitmix64(0x5eedULL + static_cast<std::uint64_t>(algorithm));
  return splitmix64(stream ^ splitmix64((static_cast<std::uint64_t>(run) << 1) | static_cast<std::uint64_t>(dataset)));
}

NoiseKey run_key(std::uint64_t base, Algorithm algorithm, int dataset, Index run) {
  const std::uint64_t a = splitmix64(run_seed(base, algorithm, dataset, run) ^ 0x6b6579ULL);
  const std::uint64_t b = splitmix64(a);
  std::array<std::uint8_t, 16> bytes{};
  for (int i = 0; i < 8; ++i) {
    bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(a >> (8 * i));
    bytes[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(b >> (8 * i));
  }
  return NoiseKey::from_bytes(bytes);
}

}  // namespace dpsosp::audit::detail
