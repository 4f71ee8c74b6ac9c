// SHA-256 as specified in FIPS 180-4 (sections 4.1.2, 4.2.2, 5.1.1, 5.3.3, 6.2.2).
#include "util/sha256.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define VERDICT_SHA256_X86 1
#endif

namespace verdict::util {
namespace {

// FIPS 180-4 4.2.2: first 32 bits of the fractional parts of the cube roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// FIPS 180-4 5.3.3: first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#ifdef VERDICT_SHA256_X86
// CPUID.(EAX=7,ECX=0):EBX bit 29 = SHA extensions (Intel SDM vol. 2A, CPUID).
bool cpuHasShaExtensions() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool sha = (b >> 29) & 1;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool sse41 = (c >> 19) & 1, ssse3 = (c >> 9) & 1;
    return sha && sse41 && ssse3;
}

// The same compression function with the SHA-NI instructions. State is kept as the two halves
// the instructions want: ABEF and CDGH. Each sha256rnds2 does two rounds; a 4-word group of the
// message schedule W[t..t+3] (t >= 16) is msg2(msg1(W[t-16..], W[t-12..]) + W[t-7..t-4], W[t-4..]).
__attribute__((target("sha,sse4.1,ssse3"))) void compressBlocksShaNi(uint32_t* state, const uint8_t* data,
                                                                      size_t blocks) {
    const __m128i byteSwap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
    __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
    const __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    const __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
    for (; blocks > 0; --blocks, data += 64) {
        const __m128i abefSaved = abef, cdghSaved = cdgh;
        __m128i w[4];
        for (int g = 0; g < 16; ++g) {
            __m128i& wg = w[g & 3];
            if (g < 4) {
                wg = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byteSwap);
            } else {
                const __m128i partial = _mm_add_epi32(_mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]),
                                                      _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                wg = _mm_sha256msg2_epu32(partial, w[(g + 3) & 3]);
            }
            __m128i msg = _mm_add_epi32(wg, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
            msg = _mm_shuffle_epi32(msg, 0x0E);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, msg);
        }
        abef = _mm_add_epi32(abef, abefSaved);
        cdgh = _mm_add_epi32(cdgh, cdghSaved);
    }
    const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    dcba = _mm_blend_epi16(feba, dchg, 0xF0);
    hgfe = _mm_alignr_epi8(dchg, feba, 8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state), dcba);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), hgfe);
}

const bool kUseShaNi = cpuHasShaExtensions();
#endif

}  // namespace

bool Sha256::usesShaExtensions() {
#ifdef VERDICT_SHA256_X86
    return kUseShaNi;
#else
    return false;
#endif
}

Sha256::Sha256() { reset(); }

void Sha256::reset() {
    std::memcpy(m_state.data(), kInitial, sizeof(kInitial));
    m_bufferLen = 0;
    m_totalLen = 0;
}

void Sha256::compressBlocks(const uint8_t* data, size_t blocks) {
#ifdef VERDICT_SHA256_X86
    if (kUseShaNi && !m_forceScalar) {
        compressBlocksShaNi(m_state.data(), data, blocks);
        return;
    }
#endif
    for (; blocks > 0; --blocks, data += 64) compress(data);
}

void Sha256::compress(const uint8_t* block) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)  // message words are big-endian
        w[t] = (uint32_t(block[4 * t]) << 24) | (uint32_t(block[4 * t + 1]) << 16) |
               (uint32_t(block[4 * t + 2]) << 8) | uint32_t(block[4 * t + 3]);
    for (int t = 16; t < 64; ++t) {
        const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = m_state[0], b = m_state[1], c = m_state[2], d = m_state[3];
    uint32_t e = m_state[4], f = m_state[5], g = m_state[6], h = m_state[7];
    for (int t = 0; t < 64; ++t) {
        const uint32_t bigS1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const uint32_t ch = (e & f) ^ (~e & g);
        const uint32_t t1 = h + bigS1 + ch + kRound[t] + w[t];
        const uint32_t bigS0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        const uint32_t t2 = bigS0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    m_state[0] += a; m_state[1] += b; m_state[2] += c; m_state[3] += d;
    m_state[4] += e; m_state[5] += f; m_state[6] += g; m_state[7] += h;
}

void Sha256::update(const void* data, size_t len) {
    const auto* p = static_cast<const uint8_t*>(data);
    m_totalLen += len;
    if (m_bufferLen > 0) {
        const size_t take = std::min(len, size_t(64) - m_bufferLen);
        std::memcpy(m_buffer.data() + m_bufferLen, p, take);
        m_bufferLen += take;
        p += take;
        len -= take;
        if (m_bufferLen < 64) return;
        compressBlocks(m_buffer.data(), 1);
        m_bufferLen = 0;
    }
    if (len >= 64) {
        compressBlocks(p, len / 64);
        p += len / 64 * 64;
        len %= 64;
    }
    if (len > 0) {
        std::memcpy(m_buffer.data(), p, len);
        m_bufferLen = len;
    }
}

std::array<uint8_t, 32> Sha256::finalBytes() {
    // FIPS 180-4 5.1.1: append 0x80, zeros up to 56 mod 64, then the bit length big-endian.
    const uint64_t bitLen = m_totalLen * 8;
    uint8_t pad[72] = {0x80};
    const size_t padLen = (m_bufferLen < 56) ? (56 - m_bufferLen) : (120 - m_bufferLen);
    for (int i = 0; i < 8; ++i) pad[padLen + i] = uint8_t(bitLen >> (56 - 8 * i));
    update(pad, padLen + 8);
    std::array<uint8_t, 32> out{};
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j) out[4 * i + j] = uint8_t(m_state[i] >> (24 - 8 * j));
    reset();
    return out;
}

std::string Sha256::finalHex() {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto bytes = finalBytes();
    std::string hex(64, '0');
    for (size_t i = 0; i < bytes.size(); ++i) {
        hex[2 * i] = kHex[bytes[i] >> 4];
        hex[2 * i + 1] = kHex[bytes[i] & 15];
    }
    return hex;
}

std::string sha256Hex(std::string_view data) {
    Sha256 h;
    h.update(data);
    return h.finalHex();
}

}  // namespace verdict::util
