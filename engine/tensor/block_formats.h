// Byte layouts of ggml's quantized blocks, as they appear in GGUF files (little-endian, packed).
//
// Source: ggml-common.h (block_q4_0 ... block_q8_K), llama.cpp commit c392e509. Scales marked
// "f16" are IEEE half floats stored as raw bits. Element order inside a block is described per
// struct because the nibble/bit packing is not the natural order for most formats.
#pragma once

#include <cstdint>
#include <cstring>

namespace verdict::tensor {

constexpr int kQK = 32;    // elements per block of the "legacy" formats (Q4_0 ... Q8_1)
constexpr int kQKK = 256;  // elements per super-block of the K-quants
constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q4_K / Q5_K

// Q4_0: x[j] = d * (nibble_j - 8). qs[j] low nibble = element j, high nibble = element j + 16.
struct BlockQ4_0 {
    uint16_t d;  // f16
    uint8_t qs[kQK / 2];
};

// Q4_1: x[j] = d * nibble_j + m. Nibble order as Q4_0.
struct BlockQ4_1 {
    uint16_t d;  // f16
    uint16_t m;  // f16
    uint8_t qs[kQK / 2];
};

// Q5_0: x[j] = d * (q_j - 16), q_j = nibble_j | (bit j of qh) << 4. Nibble order as Q4_0.
struct BlockQ5_0 {
    uint16_t d;         // f16
    uint8_t qh[4];      // bit j (little-endian u32) = 5th bit of element j
    uint8_t qs[kQK / 2];
};

// Q5_1: x[j] = d * q_j + m, q_j as Q5_0.
struct BlockQ5_1 {
    uint16_t d;  // f16
    uint16_t m;  // f16
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};

// Q8_0: x[j] = d * qs[j].
struct BlockQ8_0 {
    uint16_t d;  // f16
    int8_t qs[kQK];
};

// Q8_1: x[j] = d * qs[j]; s = d * sum(qs) (f16), used by the Q4_1 / Q5_1 dot products.
struct BlockQ8_1 {
    uint16_t d;  // f16
    uint16_t s;  // f16
    int8_t qs[kQK];
};

// Q2_K: 16 sub-blocks of 16. scales[i] = 4-bit scale (low) | 4-bit min (high);
// x = d * sc * q - dmin * m, q 2 bits. Element 128*h + 32*s + l (h < 2, s < 4, l < 32) is bits
// 2s..2s+1 of qs[32*h + l]; sub-block = element / 16.
struct BlockQ2_K {
    uint8_t scales[kQKK / 16];
    uint8_t qs[kQKK / 4];
    uint16_t d;     // f16, scale of the scales
    uint16_t dmin;  // f16, scale of the mins
};

// Q3_K: 16 sub-blocks of 16, x = d * (sc - 32) * (q - 4), q 3 bits: low 2 bits packed like Q2_K,
// the high bit of element e is bit (e / 32) of hmask[e % 32], and a SET bit means "+4" (no -4).
// scales: 16 6-bit values; low 4 bits in scales[0..7] (nibbles: j < 8 low, j >= 8 high nibble of
// scales[j-8]), high 2 bits in scales[8 + j%4] at bit 2*(j/4).
struct BlockQ3_K {
    uint8_t hmask[kQKK / 8];
    uint8_t qs[kQKK / 4];
    uint8_t scales[12];
    uint16_t d;  // f16
};

// Q4_K: 8 sub-blocks of 32, x = d * sc_j * q - dmin * m_j (sc, m 6 bits, packed in scales[12],
// see scaleMinK4 below). Element 64*c + l (l < 32) = low nibble of qs[32c + l],
// element 64*c + 32 + l = high nibble.
struct BlockQ4_K {
    uint16_t d;     // f16
    uint16_t dmin;  // f16
    uint8_t scales[kKScaleBytes];
    uint8_t qs[kQKK / 2];
};

// Q5_K: as Q4_K plus a 5th bit: element 64*c + l has its high bit in qh[l] bit 2c, element
// 64*c + 32 + l in qh[l] bit 2c + 1.
struct BlockQ5_K {
    uint16_t d;     // f16
    uint16_t dmin;  // f16
    uint8_t scales[kKScaleBytes];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};

// Q6_K: 16 sub-blocks of 16, x = d * scales[e/16] * (q - 32), q 6 bits. For half h (128 elements)
// and l < 32: element 128h + l     = ql[64h + l] low nibble  | (qh[32h + l] bits 0-1) << 4
//             element 128h + 32 + l = ql[64h + 32 + l] low    | (qh bits 2-3) << 4
//             element 128h + 64 + l = ql[64h + l] high nibble | (qh bits 4-5) << 4
//             element 128h + 96 + l = ql[64h + 32 + l] high   | (qh bits 6-7) << 4
struct BlockQ6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    uint16_t d;  // f16
};

// Q8_K: the activation format of the K-quant dot products. x = d * qs; bsums = sums of 16.
struct BlockQ8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];
};

// ---- non-linear 4-bit formats (i-quants IQ4_NL / IQ4_XS, OCP microscaling MXFP4) -------------
// Source: ggml-common.h (block_iq4_nl, block_iq4_xs, block_mxfp4, kvalues_iq4nl, kvalues_mxfp4) and
// ggml-quants.c's dequantize_row_* of llama.cpp v0.5.0; the values are facts of the format.

// The 16 levels of IQ4_NL and IQ4_XS (a non-uniform grid, denser near zero).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// IQ4_NL: x[j] = d * kIQ4NLValues[nibble_j]. Nibble order as Q4_0 (low nibble of qs[j] = element j,
// high nibble = element j + 16).
struct BlockIQ4_NL {
    uint16_t d;  // f16
    uint8_t qs[kQK / 2];
};

// IQ4_XS: 8 sub-blocks of 32, x = d * (ls_i - 32) * kIQ4NLValues[nibble], ls_i a 6-bit scale: low 4
// bits = nibble i%2 of scales_l[i/2], high 2 bits = bits 2i..2i+1 of scales_h (iq4xsScale). Sub-block
// i's 16 bytes qs[16i..16i+15] hold its elements in Q4_0's nibble order.
struct BlockIQ4_XS {
    uint16_t d;  // f16
    uint16_t scales_h;
    uint8_t scales_l[kQKK / 64];
    uint8_t qs[kQKK / 2];
};

inline int iq4xsScale(const BlockIQ4_XS& b, int i) {
    return ((b.scales_l[i / 2] >> (4 * (i % 2))) & 0xF) | (((b.scales_h >> (2 * i)) & 3) << 4);
}

// FP4 (E2M1) levels times two (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives, doubled so they are
// integers); the block scale below is halved to match.
inline constexpr int8_t kMXFP4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// MXFP4: x[j] = 2^(e - 127) * E2M1(nibble_j) = mxfp4HalfScale(e) * kMXFP4Values[nibble_j]; nibble
// order as Q4_0.
struct BlockMXFP4 {
    uint8_t e;  // E8M0: a power of two, biased by 127
    uint8_t qs[kQK / 2];
};

// 2^(e - 128) as a float (e = 0 and 1 are the subnormals 2^-128, 2^-127).
inline float mxfp4HalfScale(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// ---- lattice i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) ---------------------
// Source: ggml-common.h (block_iq2_xxs ... block_iq1_m) of llama.cpp v0.5.0. Every format splits a
// super-block of 256 into 8 sub-blocks of 32 (sub-block ib = elements 32ib..32ib+31) and those into
// groups of 8 (IQ3: two grid points of 4), each group one point of a grid (iq_grids.h). The decoding,
// scale by scale, is tensor/iq_decode.h; what each field holds is said here.

// IQ2_XXS: sub-block ib = bytes 8ib..8ib+7 of qs: bytes 0-3 four 8-bit indices into kIQ2XXSGrid
// (group l = byte l); the next 32-bit word holds four 7-bit sign indices (bits 7l..7l+6, through
// kIQ2Signs) and a 4-bit scale s in bits 28-31: x = d * (2s + 1) / 8 * (+-grid).
struct BlockIQ2_XXS {
    uint16_t d;  // f16
    uint16_t qs[kQKK / 8];
};

// IQ2_XS: qs[4ib + l] = 9-bit index into kIQ2XSGrid | 7-bit sign index << 9; scales[ib] two 4-bit
// scales (low nibble: elements 0-15 of the sub-block, high: 16-31): x = d * (2s + 1) / 8 * (+-grid).
struct BlockIQ2_XS {
    uint16_t d;  // f16
    uint16_t qs[kQKK / 8];
    uint8_t scales[kQKK / 32];
};

// IQ2_S: qs[0..31] the low 8 bits of the 10-bit indices into kIQ2SGrid (4 per sub-block), bits 8-9 of
// index l of sub-block ib in bits 2l..2l+1 of qh[ib]; qs[32..63] one plain sign byte per group (bit j
// set: element j negative); scales as IQ2_XS.
struct BlockIQ2_S {
    uint16_t d;  // f16
    uint8_t qs[kQKK / 4];
    uint8_t qh[kQKK / 32];
    uint8_t scales[kQKK / 32];
};

// IQ3_XXS: qs[0..63] 8-bit indices into kIQ3XXSGrid (8 per sub-block, two per group of 8);
// qs[64 + 4ib ..] a 32-bit word per sub-block as IQ2_XXS's (four 7-bit sign indices, scale in bits
// 28-31): x = d * (2s + 1) / 4 * (+-grid).
struct BlockIQ3_XXS {
    uint16_t d;  // f16
    uint8_t qs[3 * kQKK / 8];
};

// IQ3_S: 9-bit indices into kIQ3SGrid: low bits qs[8ib + k], bit 8 = bit k of qh[ib]; signs[4ib + l]
// one plain sign byte per group of 8; 4-bit scales, sub-block ib in nibble ib%2 of scales[ib/2]:
// x = d * (2s + 1) * (+-grid).
struct BlockIQ3_S {
    uint16_t d;  // f16
    uint8_t qs[kQKK / 4];
    uint8_t qh[kQKK / 32];
    uint8_t signs[kQKK / 8];
    uint8_t scales[kQKK / 64];
};

// The shift of IQ1_S / IQ1_M: x = scale * (grid + delta), delta = +-1/8 (ggml's IQ1S_DELTA).
inline constexpr float kIQ1Delta = 0.125f;

// IQ1_S: 11-bit indices into kIQ1SGrid (signed values -1/0/1): low bits qs[4ib + l], bits 8-10 =
// bits 3l..3l+2 of qh[ib]; qh[ib] bits 12-14 the scale s, bit 15 the delta's sign (set: -1/8):
// x = d * (2s + 1) * (grid + delta).
struct BlockIQ1_S {
    uint16_t d;  // f16
    uint8_t qs[kQKK / 8];
    uint16_t qh[kQKK / 32];
};

// IQ1_M: no d field. Indices as IQ1_S but the high bits per group: group l of sub-block ib reads
// byte qh[2ib + l/2], nibble l%2: bits 0-2 = index bits 8-10, bit 3 = the delta's sign. scales = four
// little-endian 16-bit words: word w bits 0-11 hold four 3-bit scales (sub-block 2w: elements 0-15,
// 16-31; sub-block 2w+1: likewise), bits 12-15 of the four words are the f16 super-block scale's
// nibbles (word 0 lowest; iq1mScale): x = d * (2s + 1) * (grid + delta).
struct BlockIQ1_M {
    uint8_t qs[kQKK / 8];
    uint8_t qh[kQKK / 16];
    uint8_t scales[kQKK / 32];
};

inline uint16_t iq1mScaleWord(const BlockIQ1_M& b, int w) {
    return static_cast<uint16_t>(b.scales[2 * w] | (b.scales[2 * w + 1] << 8));
}

// The f16 bits of IQ1_M's super-block scale.
inline uint16_t iq1mScale(const BlockIQ1_M& b) {
    return static_cast<uint16_t>((iq1mScaleWord(b, 0) >> 12) | ((iq1mScaleWord(b, 1) >> 8) & 0x00F0) |
                                 ((iq1mScaleWord(b, 2) >> 4) & 0x0F00) | (iq1mScaleWord(b, 3) & 0xF000));
}

// ---- ternary formats (TQ1_0, TQ2_0): x = d * t, t in {-1, 0, 1} ---------------------------------
// Source: ggml-common.h (block_tq1_0, block_tq2_0) of llama.cpp v0.5.0. d comes last in both.

// TQ1_0: five trits per byte (qs) and four per byte (qh), each byte b = ceil(sum_n (t_n + 1) 3^(4-n)
// * 256 / 243) for its trits in order n = 0..4 (qh: n = 0..3, the fifth trit position unused), so
// trit n is the top base-3 digit of (b * 3^n mod 256), i.e. ((b * 3^n mod 256) * 3) >> 8.
// Element order: qs[m] (m < 32) trit n = element 32n + m; qs[32 + m] (m < 16) trit n = element
// 160 + 16n + m; qh[j] trit n = element 240 + 4n + j.
struct BlockTQ1_0 {
    uint8_t qs[(kQKK - 4 * kQKK / 64) / 5];
    uint8_t qh[kQKK / 64];
    uint16_t d;  // f16
};

// TQ2_0: 2 bits per element, t = q - 1 (q = 3 unused); element 128h + 32l + m = bits 2l..2l+1 of
// qs[32h + m].
struct BlockTQ2_0 {
    uint8_t qs[kQKK / 4];
    uint16_t d;  // f16
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ2_K) == 84);
static_assert(sizeof(BlockQ3_K) == 110);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);
static_assert(sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockIQ4_XS) == 136);
static_assert(sizeof(BlockMXFP4) == 17);
static_assert(sizeof(BlockIQ2_XXS) == 66);
static_assert(sizeof(BlockIQ2_XS) == 74);
static_assert(sizeof(BlockIQ2_S) == 82);
static_assert(sizeof(BlockIQ3_XXS) == 98);
static_assert(sizeof(BlockIQ3_S) == 110);
static_assert(sizeof(BlockIQ1_S) == 50);
static_assert(sizeof(BlockIQ1_M) == 56);
static_assert(sizeof(BlockTQ1_0) == 54);
static_assert(sizeof(BlockTQ2_0) == 66);

// Unpacks the 6-bit scale and min of sub-block j (0..7) of Q4_K / Q5_K.
// Bytes 0-3: scale j (low 6 bits) for j < 4, bits 6-7 = high bits of scale j+4;
// bytes 4-7: min j likewise; bytes 8-11: low nibble = scale j+4 low 4 bits, high nibble = min.
inline void scaleMinK4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Unpacks the 16 6-bit scales of Q3_K into signed values (sc - 32).
inline void unpackQ3KScales(const uint8_t* s, int8_t out[16]) {
    for (int j = 0; j < 16; ++j) {
        int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
        int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = static_cast<int8_t>((low | (high << 4)) - 32);
    }
}

}  // namespace verdict::tensor
