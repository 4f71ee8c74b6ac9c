// The grids and sign table of the lattice i-quants (block_formats.h), as data.
//
// A grid entry packs one group: byte j (little-endian) is element j's magnitude (IQ2_*: 8 bytes,
// IQ3_*: 4 bytes) or signed value (IQ1_*: int8 -1 / 0 / 1). Values in iq_grids.inc and iq1_grid.inc (sources named there).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace verdict::tensor {

extern const uint64_t kIQ2XXSGrid[256];
extern const uint64_t kIQ2XSGrid[512];
extern const uint64_t kIQ2SGrid[1024];
extern const uint32_t kIQ3XXSGrid[256];
extern const uint32_t kIQ3SGrid[512];
extern const uint64_t kIQ1SGrid[2048];  // IQ1_S and IQ1_M

// The sign byte of a 7-bit sign index (IQ2_XXS, IQ2_XS, IQ3_XXS): bits 0-6 are the index, bit 7
// makes the count of set bits even (the quantizer keeps an even number of negatives per group of 8,
// so the 8th sign is implied). Bit j set: element j of the group is negative. ggml's ksigns_iq2xs.
inline constexpr std::array<uint8_t, 128> kIQ2Signs = [] {
    std::array<uint8_t, 128> t{};
    for (int i = 0; i < 128; ++i) {
        int ones = 0;
        for (int b = 0; b < 7; ++b) ones += (i >> b) & 1;
        t[static_cast<std::size_t>(i)] = static_cast<uint8_t>(i | ((ones & 1) << 7));
    }
    return t;
}();

static_assert(kIQ2Signs[1] == 129 && kIQ2Signs[3] == 3 && kIQ2Signs[127] == 255 && kIQ2Signs[126] == 126);

}  // namespace verdict::tensor
