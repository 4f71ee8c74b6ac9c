#include "backend/cpu/ops_attention.h"

#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace verdict::cpu {

void softmaxRow(float* x, int64_t n, float scale) { softmaxRowWithSink(x, n, scale, nullptr); }

void softmaxRowWithSink(float* x, int64_t n, float scale, const float* sink) {
    float maxv = sink ? *sink : -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        x[i] *= scale;
        maxv = std::max(maxv, x[i]);
    }
    double sum = sink ? static_cast<double>(std::exp(*sink - maxv)) : 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const float e = std::exp(x[i] - maxv);
        sum += static_cast<double>(e);
        x[i] = e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

#if defined(__x86_64__)
namespace {

// exp(x) for x <= 0 (scores minus their maximum), 8 lanes: x = n ln2 + r with |r| <= ln2/2
// (Cody-Waite: ln2 split in a part with a short mantissa, exact in n * hi, and the rest), e^r by
// its Taylor series to r^7 (truncation < 6e-9 relative), 2^n put in the exponent field. Below
// -87.3 (the result would be subnormal, under 1.2e-38) the lane is 0.
__attribute__((target("avx2,fma"))) __m256 expNonPositive(__m256 x) {
    const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.3f), _CMP_LT_OQ);
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723212e-6f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

__attribute__((target("avx2,fma"))) float expNonPositive(float x) {
    alignas(32) float v[8];
    _mm256_store_ps(v, expNonPositive(_mm256_set1_ps(x)));
    return v[0];
}

__attribute__((target("avx2,fma"))) void softmaxRowFastAvx2(float* x, int64_t n, float scale, const float* sink) {
    float maxv = sink ? *sink : -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        x[i] *= scale;
        maxv = std::max(maxv, x[i]);
    }
    const __m256 vmax = _mm256_set1_ps(maxv);
    __m256d sum0 = _mm256_setzero_pd(), sum1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = expNonPositive(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmax));
        _mm256_storeu_ps(x + i, e);
        sum0 = _mm256_add_pd(sum0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        sum1 = _mm256_add_pd(sum1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, _mm256_add_pd(sum0, sum1));
    double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (; i < n; ++i) {
        x[i] = expNonPositive(x[i] - maxv);
        sum += static_cast<double>(x[i]);
    }
    if (sink) sum += static_cast<double>(expNonPositive(*sink - maxv));
    const __m256 inv = _mm256_set1_ps(static_cast<float>(1.0 / sum));
    i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    for (; i < n; ++i) x[i] *= _mm256_cvtss_f32(inv);
}

}  // namespace
#endif

void softmaxRowFast(float* x, int64_t n, float scale, const float* sink) {
#if defined(__x86_64__)
    static const bool kAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (kAvx2) return softmaxRowFastAvx2(x, n, scale, sink);
#endif
    softmaxRowWithSink(x, n, scale, sink);
}

int64_t attentionScratchFloats(const AttentionShape& s) {
    // scores of every head of a group + the group's f16-rounded q; rounded up to a cache line so
    // threads do not share lines
    const int64_t group = s.nHead / s.nHeadKv;
    const int64_t n = group * (s.kvCapacity + s.headDimK);
    return (n + 15) / 16 * 16;
}

namespace {

constexpr int64_t kSerialMacs = 1 << 17;

struct AttentionJob {
    const AttentionShape* s;
    const float* q;
    const void* k;
    const void* v;
    int64_t nTok;
    int64_t pos0;
    float* out;
    float* scratch;
    int64_t scratchStride;
    int64_t headsPerTask;  // query heads of one KV group handled together (divides the group)
};

// Scores -> probabilities in place: scale, the optional soft-cap (ggml_scale by 1/cap, tanh,
// ggml_scale by cap, in that order), softmax.
void normaliseScores(float* sc, int64_t n, const AttentionShape& s, int64_t head) {
    const float* sink = s.sinks ? s.sinks + head : nullptr;
    if (s.softCap <= 0.0f) {
        softmaxRowFast(sc, n, s.scale, sink);
        return;
    }
    const float inv = 1.0f / s.softCap;
    for (int64_t j = 0; j < n; ++j) sc[j] = std::tanh(sc[j] * s.scale * inv) * s.softCap;
    softmaxRowFast(sc, n, 1.0f, sink);
}

// Query heads h0 .. h0+nh-1 (all in KV group g) of token t. Each key and value row is loaded once
// for all nh heads, which cuts cache traffic by the GQA group size, and their dot products and
// sums run interleaved (ops_vec.h's row functions: the same bits as one head at a time).
void attendHeads(const AttentionJob& job, int64_t g, int64_t h0, int64_t nh, int64_t t, int thread) {
    const AttentionShape& s = *job.s;
    const int64_t nKv = job.pos0 + t + 1;  // causal: keys 0 .. pos of this query
    const int64_t j0 = s.window > 0 ? std::max<int64_t>(0, nKv - s.window) : 0;  // sliding window start
    const int64_t cap = s.kvCapacity;
    float* scores = job.scratch + job.scratchStride * thread;  // [nh][cap]
    float* qr = scores + (s.nHead / s.nHeadKv) * cap;          // [nh][headDimK]
    const float* q0 = job.q + (t * s.nHead + h0) * s.headDimK;
    float* o0 = job.out + (t * s.nHead + h0) * s.headDimV;
    std::memset(o0, 0, sizeof(float) * static_cast<size_t>(nh * s.headDimV));

    const int64_t n = nKv - j0;
    if (!s.f16) {
        const float* kh = static_cast<const float*>(job.k) + (g * cap + j0) * s.headDimK;
        const float* vh = static_cast<const float*>(job.v) + (g * cap + j0) * s.headDimV;
        dotRowsF32(q0, s.headDimK, nh, kh, n, s.headDimK, scores + j0, cap);
        for (int64_t i = 0; i < nh; ++i) normaliseScores(scores + i * cap + j0, n, s, h0 + i);
        accumulateRowsF32(scores + j0, nh, cap, vh, n, s.headDimV, o0);
        return;
    }
    // f16 cache: q and the probabilities are rounded to f16 as ggml's f16 vec_dot path does.
    std::memcpy(qr, q0, sizeof(float) * static_cast<size_t>(nh * s.headDimK));
    roundToF16(qr, nh * s.headDimK);
    const uint16_t* kh = static_cast<const uint16_t*>(job.k) + (g * cap + j0) * s.headDimK;
    const uint16_t* vh = static_cast<const uint16_t*>(job.v) + (g * cap + j0) * s.headDimV;
    dotRowsF16(qr, s.headDimK, nh, kh, n, s.headDimK, scores + j0, cap);
    for (int64_t i = 0; i < nh; ++i) {
        float* sc = scores + i * cap;
        normaliseScores(sc + j0, n, s, h0 + i);
        roundToF16(sc + j0, n);
    }
    accumulateRowsF16(scores + j0, nh, cap, vh, n, s.headDimV, o0);
}

void runItem(const AttentionJob& job, int64_t item, int thread) {
    // item -> (token, KV group, chunk of that group's heads); token-minor so that a thread's
    // consecutive items reuse the same group's keys and values.
    const AttentionShape& s = *job.s;
    const int64_t group = s.nHead / s.nHeadKv;
    const int64_t chunks = group / job.headsPerTask;
    const int64_t t = item % job.nTok;
    const int64_t rest = item / job.nTok;
    const int64_t g = rest / chunks, c = rest % chunks;
    attendHeads(job, g, g * group + c * job.headsPerTask, job.headsPerTask, t, thread);
}

}  // namespace

void attention(const AttentionShape& s, const float* q, const void* kCache, const void* vCache,
               int64_t nTok, int64_t pos0, float* out, float* scratch, ThreadPool& pool) {
    const int64_t group = s.nHead / s.nHeadKv;
    AttentionJob job{&s, q, kCache, vCache, nTok, pos0, out, scratch, attentionScratchFloats(s), group};
    // Small problems (short contexts of small models) run on the calling thread: waking the
    // workers costs more than the work. Multiply-adds: every query against its keys and values.
    const int64_t macs = s.nHead * nTok * (pos0 + nTok) * (s.headDimK + s.headDimV);
    if (pool.size() == 1 || macs < kSerialMacs) {
        for (int64_t i = 0; i < s.nHeadKv * nTok; ++i) runItem(job, i, 0);
        return;
    }
    // Enough items for every thread (decode has one token): split groups into smaller head chunks.
    while (job.headsPerTask > 1 && s.nHeadKv * nTok * (group / job.headsPerTask) < 2 * pool.size()) {
        int64_t d = job.headsPerTask - 1;
        while (group % d != 0 || job.headsPerTask % d != 0) --d;
        job.headsPerTask = d;
    }
    const int64_t nItems = s.nHeadKv * (group / job.headsPerTask) * nTok;
    pool.parallelFor(nItems, 1, [&job](int64_t b, int64_t e, int thread) {
        for (int64_t i = b; i < e; ++i) runItem(job, i, thread);
    });
}

}  // namespace verdict::cpu
