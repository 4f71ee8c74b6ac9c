// Activation layouts read by the AVX2 and AVX-512 kernels (same values as the reference's Q8_0 /
// Q8_1 / Q8_K blocks, rearranged so the SIMD loads are straight 32/64-byte loads).
//
// 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 weights): groups of 4 blocks (128 elements).
//   lo[16*i + j] = quant j of block i, hi[16*i + j] = quant 16 + j (i < 4, j < 16), which is
//   how the weights' nibbles unpack (low nibbles of 4 blocks side by side, then the high ones);
//   bias[4*i] = biasMul * sum(quants of block i), the other lanes 0: the correction for weights
//   stored with an offset (Q4_0: q - 8 -> biasMul -8) added in the integer accumulator;
//   d[4*i .. 4*i+3] = block i's scale (each 32-bit lane of the integer dot belongs to one block);
//   s[4*i] = Q8_1's s (only in ActGroupS, for Q4_1 / Q5_1's min term).
//   A last, partial group is zero-padded (d = 0, quants 0).
// K-quants: one ActSuper per 256 elements: quants in a weight-specific order (kActOrder*), the
//   16 sums of 16 in natural order (bsums, then 16 zero int16 so a 64-byte load is clean), d,
//   and for the AVX-512 panels the sums of 32 as word pairs (sum32Pairs).
#pragma once

#include "backend/cpu/act_quant.h"
#include "backend/cpu/matmul_kernel.h"

#include <cstring>

namespace verdict::cpu {

struct alignas(64) ActGroup {
    int8_t lo[64];
    int8_t hi[64];
    int32_t bias[16];
    float d[16];
};
struct alignas(64) ActGroupS {
    int8_t lo[64];
    int8_t hi[64];
    int32_t bias[16];
    float d[16];
    float s[16];
};
static_assert(sizeof(ActGroup) == 256 && sizeof(ActGroupS) == 320);

struct alignas(64) ActSuper {
    int8_t qs[256];
    int16_t bsums[32];  // 16 used, 16 zero
    float d;
    // Sums of the 32-element sub-blocks s (sum32_s = bsums[2s] + bsums[2s + 1], |sum32| <= 4064)
    // as word pairs for vpdpwssd, low word first, filled by the AVX-512 prepare only:
    // [w] = (sum32_s, sum32_s+2) for s = 0, 1, 4, 5 (the Q4_K / Q5_K panels' mins),
    // [4 + w] = (sum32_2w, sum32_2w+1) (the IQ4_XS panels' offset), w < 4.
    int32_t sum32Pairs[8];
    float pad[7];
};
static_assert(sizeof(ActSuper) == 384);

inline int64_t groupCount(int64_t K) { return (K / 32 + 3) / 4; }

template <class G>
size_t groupActBytes(int64_t K) {
    return static_cast<size_t>(groupCount(K)) * sizeof(G);
}

// Scalar packer (values from quantizeActBlock32, so identical to the reference's Q8_0 / Q8_1).
template <class G, int BiasMul>
void packGroupAct(const float* x, int64_t K, void* out) {
    auto* g = static_cast<G*>(out);
    const int64_t nb = K / 32;
    std::memset(out, 0, groupActBytes<G>(K));
    ActBlock32 b;
    for (int64_t i = 0; i < nb; ++i) {
        quantizeActBlock32(x + 32 * i, b);
        G& grp = g[i / 4];
        const int k = static_cast<int>(i % 4);
        std::memcpy(grp.lo + 16 * k, b.qs, 16);
        std::memcpy(grp.hi + 16 * k, b.qs + 16, 16);
        grp.bias[4 * k] = BiasMul * b.sum;
        for (int l = 0; l < 4; ++l) grp.d[4 * k + l] = b.d;
        if constexpr (sizeof(G) == sizeof(ActGroupS)) grp.s[4 * k] = b.s;
    }
}

// Orders of the quants inside an ActSuper: position p holds element order[p] (per 256).
enum class KOrder { Natural, P64, P32x, Q4x };

inline int kOrderElement(KOrder o, int p) {
    switch (o) {
        case KOrder::Natural: return p;
        case KOrder::P64: {  // per 128: [0..31, 64..95, 32..63, 96..127] (Q4_K / Q5_K nibbles)
            const int base = p & ~127, q = p & 127, part = q / 32, l = q % 32;
            static constexpr int kMap[4] = {0, 2, 1, 3};
            return base + 32 * kMap[part] + l;
        }
        case KOrder::P32x: {  // [0..31, 128..159, 32..63, 160..191, ...] (Q2_K / Q3_K 2-bit planes)
            const int pair = p / 64, q = p % 64;
            return (q < 32 ? 32 * pair : 128 + 32 * pair) + (q % 32);
        }
        case KOrder::Q4x: {  // per 128: [0..15, 32..47, 64..79, 96..111, 16..31, 48..63, ...] (IQ4_XS:
                             // the low nibbles of 4 sub-blocks of 32, then their high nibbles)
            const int base = p & ~127, q = p & 127, half = q / 64, sub = (q % 64) / 16;
            return base + 32 * sub + 16 * half + q % 16;
        }
    }
    return p;
}

inline size_t superActBytes(int64_t K) { return static_cast<size_t>(K / 256) * sizeof(ActSuper); }

template <KOrder Order>
void packSuperAct(const float* x, int64_t K, void* out) {
    auto* s = static_cast<ActSuper*>(out);
    std::memset(out, 0, superActBytes(K));
    tensor::BlockQ8_K b;
    for (int64_t i = 0; i < K / 256; ++i) {
        quantizeActQ8_K(x + 256 * i, 256, &b);
        for (int p = 0; p < 256; ++p) s[i].qs[p] = b.qs[kOrderElement(Order, p)];
        std::memcpy(s[i].bsums, b.bsums, sizeof b.bsums);
        s[i].d = b.d;
    }
}

}  // namespace verdict::cpu
