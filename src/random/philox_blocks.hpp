// Internal: many Philox4x32-10 blocks of one stream at once (noise.cpp).
#pragma once
#include <cstddef>
#include <cstdint>

namespace dpsosp::detail {

/// out[2j], out[2j+1] = the two 64-bit words of block first + j of the stream
/// (seed, purpose, index), j < count: GaussianStream's layout (noise.cpp),
/// the same numbers whatever instructions make them (four blocks to a 256-bit
/// register where the processor has AVX2, else one at a time).
void philox_blocks(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t first,
                   std::size_t count, std::uint64_t* out);

/// The same, one block at a time (the reference the tests hold the above to).
void philox_blocks_scalar(std::uint64_t seed, std::uint32_t purpose, std::uint32_t index, std::uint64_t first,
                          std::size_t count, std::uint64_t* out);

}  // namespace dpsosp::detail
