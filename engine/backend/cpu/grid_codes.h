// Tables the SIMD kernels of the lattice i-quants derive from the grids (tensor/iq_grids.h).
//
// Defined in grid_codes.cpp, a file built for the baseline CPU: their initialisers run at start-up
// on every machine, so they must not sit in a kernel file compiled for AVX2 / AVX-512 (the compiler
// may vectorise them with the target's instructions).
#pragma once

#include <array>
#include <cstdint>

namespace verdict::cpu {

// IQ3_XXS's 8 magnitudes, in order.
inline constexpr std::array<uint8_t, 8> kIQ3XXSLevels = {4, 12, 20, 28, 36, 44, 52, 62};

// The IQ3 grids as 16-bit codes, nibble j = element j's level: IQ3_S its odd magnitude (1 .. 15),
// IQ3_XXS the index of its magnitude in kIQ3XXSLevels.
extern const std::array<uint16_t, 512> kIQ3SCodes;
extern const std::array<uint16_t, 256> kIQ3XXSCodes;

// kIQ1SGrid's points times 8 (bytes -8 / 0 / 8).
extern const std::array<uint64_t, 2048> kIQ1Grid8;

}  // namespace verdict::cpu
