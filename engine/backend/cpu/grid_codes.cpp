#include "backend/cpu/grid_codes.h"

#include "tensor/iq_grids.h"

#include <algorithm>
#include <cstddef>

namespace verdict::cpu {
namespace {

template <size_t N>
std::array<uint16_t, N> iq3Codes(const uint32_t* grid, bool levels) {
    std::array<uint16_t, N> t{};
    for (size_t e = 0; e < N; ++e)
        for (int j = 0; j < 4; ++j) {
            const uint32_t v = (grid[e] >> (8 * j)) & 0xFF;
            uint32_t n = v;
            if (levels) n = static_cast<uint32_t>(std::find(kIQ3XXSLevels.begin(), kIQ3XXSLevels.end(), v) - kIQ3XXSLevels.begin());
            t[e] |= static_cast<uint16_t>((n & 0xF) << (4 * j));
        }
    return t;
}

}  // namespace

alignas(64) const std::array<uint16_t, 512> kIQ3SCodes = iq3Codes<512>(tensor::kIQ3SGrid, false);
alignas(64) const std::array<uint16_t, 256> kIQ3XXSCodes = iq3Codes<256>(tensor::kIQ3XXSGrid, true);

alignas(64) const std::array<uint64_t, 2048> kIQ1Grid8 = [] {
    std::array<uint64_t, 2048> t{};
    for (size_t e = 0; e < t.size(); ++e)
        for (int j = 0; j < 8; ++j)
            t[e] |= static_cast<uint64_t>(static_cast<uint8_t>(8 * static_cast<int8_t>(tensor::kIQ1SGrid[e] >> (8 * j)))) << (8 * j);
    return t;
}();

}  // namespace verdict::cpu
