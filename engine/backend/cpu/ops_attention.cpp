#include "backend/cpu/ops_attention.h"

#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

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
        softmaxRowWithSink(sc, n, s.scale, sink);
        return;
    }
    const float inv = 1.0f / s.softCap;
    for (int64_t j = 0; j < n; ++j) sc[j] = std::tanh(sc[j] * s.scale * inv) * s.softCap;
    softmaxRowWithSink(sc, n, 1.0f, sink);
}

// Query heads h0 .. h0+nh-1 (all in KV group g) of token t. Each key and value row is loaded once
// for all nh heads, which cuts cache traffic by the GQA group size.
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

    if (!s.f16) {
        const float* kh = static_cast<const float*>(job.k) + g * cap * s.headDimK;
        const float* vh = static_cast<const float*>(job.v) + g * cap * s.headDimV;
        for (int64_t j = j0; j < nKv; ++j) {
            const float* krow = kh + j * s.headDimK;
            for (int64_t i = 0; i < nh; ++i) scores[i * cap + j] = dotF32(q0 + i * s.headDimK, krow, s.headDimK);
        }
        for (int64_t i = 0; i < nh; ++i) normaliseScores(scores + i * cap + j0, nKv - j0, s, h0 + i);
        for (int64_t j = j0; j < nKv; ++j) {
            const float* vrow = vh + j * s.headDimV;
            for (int64_t i = 0; i < nh; ++i) axpyF32(scores[i * cap + j], vrow, o0 + i * s.headDimV, s.headDimV);
        }
        return;
    }
    // f16 cache: q and the probabilities are rounded to f16 as ggml's f16 vec_dot path does.
    for (int64_t i = 0; i < nh * s.headDimK; ++i) qr[i] = tensor::fp16ToFp32(tensor::fp32ToFp16(q0[i]));
    const uint16_t* kh = static_cast<const uint16_t*>(job.k) + g * cap * s.headDimK;
    const uint16_t* vh = static_cast<const uint16_t*>(job.v) + g * cap * s.headDimV;
    for (int64_t j = j0; j < nKv; ++j) {
        const uint16_t* krow = kh + j * s.headDimK;
        for (int64_t i = 0; i < nh; ++i) scores[i * cap + j] = dotF32F16(qr + i * s.headDimK, krow, s.headDimK);
    }
    for (int64_t i = 0; i < nh; ++i) {
        float* sc = scores + i * cap;
        normaliseScores(sc + j0, nKv - j0, s, h0 + i);
        for (int64_t j = j0; j < nKv; ++j) sc[j] = tensor::fp16ToFp32(tensor::fp32ToFp16(sc[j]));
    }
    for (int64_t j = j0; j < nKv; ++j) {
        const uint16_t* vrow = vh + j * s.headDimV;
        for (int64_t i = 0; i < nh; ++i) axpyF16(scores[i * cap + j], vrow, o0 + i * s.headDimV, s.headDimV);
    }
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
