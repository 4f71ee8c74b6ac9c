// The matmul driver: picks the kernel for the weight type and CPU, prepares the activations
// once per call, and splits the output over the thread pool.
//
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul_kernel.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/block_formats.h"
#include "tensor/half.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define VERDICT_MATMUL_X86 1
#endif

namespace verdict::cpu {
namespace {

constexpr size_t kPrefillChunkBytes = 256 * 1024;  // weights of one prefill task (L2: 1 MB)
constexpr int64_t kSerialMacs = 1 << 18;  // below this a call is not worth waking the workers
constexpr int64_t kDecodeMaxTokens = 4;
// Task edges fall on multiples of these so the kernels' register tiles (rows: 2, 3, 4, 6, 8, 16;
// tokens: 2, 3, 4, 8) divide every task except the matrix's last one.
constexpr int64_t kRowQuantum = 48;
constexpr int64_t kTokQuantum = 24;
static_assert(kRowQuantum % 16 == 0, "row tasks start on a packed panel (16 rows)");

int64_t roundUpTo(int64_t v, int64_t q) { return (v + q - 1) / q * q; }

// A 64-byte aligned scratch buffer per calling thread, grown on demand, never shrunk.
uint8_t* scratch(size_t bytes) {
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    thread_local std::unique_ptr<uint8_t, Free> buf;
    thread_local size_t cap = 0;
    if (bytes > cap) {
        cap = roundUp64(bytes + bytes / 4);
        buf.reset(static_cast<uint8_t*>(std::aligned_alloc(64, cap)));
    }
    return buf.get();
}

// Tasks: rectangles of rows x tokens. Decode (few tokens): ~4 row slices per thread, each
// streaming its own part of the weights. Prefill: row chunks whose weights fit in L2
// (kPrefillChunkBytes), every token passing over a chunk while it is cached; tokens are split
// too when there are too few row chunks to keep the threads busy. Returns {rowChunk, tokChunk}.
std::pair<int64_t, int64_t> planTasks(int64_t nRows, int64_t nTok, size_t rowBytes, int64_t nThreads, bool serial) {
    int64_t rowChunk, tokChunk = nTok;
    if (nTok <= kDecodeMaxTokens) {
        rowChunk = serial ? nRows : roundUpTo((nRows + nThreads * 4 - 1) / (nThreads * 4), kRowQuantum);
    } else {
        rowChunk = static_cast<int64_t>(kPrefillChunkBytes / rowBytes) / kRowQuantum * kRowQuantum;
        rowChunk = std::clamp<int64_t>(rowChunk, kRowQuantum, 10 * kRowQuantum);
        const int64_t rowTasks = (nRows + rowChunk - 1) / rowChunk;
        if (!serial && rowTasks < nThreads * 4) {
            const int64_t tokSplits = std::min<int64_t>((nThreads * 4 + rowTasks - 1) / rowTasks, nTok / kTokQuantum + 1);
            tokChunk = roundUpTo((nTok + tokSplits - 1) / tokSplits, kTokQuantum);
        }
    }
    return {rowChunk, tokChunk};
}

#if VERDICT_MATMUL_X86
// Q8_0 rows to f32 with AVX2: y = float(q) * d, the reference dequantizer's exact values (the
// int8 -> f32 conversion is exact and the product rounds once either way). MLA's absorbed
// attention dequantizes attn_kv_b every token, so this runs on the decode path.
__attribute__((target("avx2,fma,f16c"))) void dequantizeQ8_0Avx2(const tensor::BlockQ8_0* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n / 32; ++i, y += 32) {
        const __m256 d = _mm256_set1_ps(tensor::fp16ToFp32(x[i].d));
        for (int j = 0; j < 32; j += 8) {
            const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[i].qs + j));
            _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), d));
        }
    }
}

bool haveAvx2Fma() {
    static const bool kHave = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
        && __builtin_cpu_supports("f16c");
    return kHave;
}

// Eight weights of a Q8_0 block as f32: float(q) * d, the reference dequantizer's values.
__attribute__((target("avx2,fma,f16c"))) inline __m256 q8x8(const int8_t* q, __m256 d) {
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)))), d);
}

// Fused forms of dotF32 / axpyF32 over dequantized Q8_0 rows, with ops_vec.cpp's AVX2 summation
// order (dot: two 8-lane accumulators over 16-element steps, then a horizontal sum; axpy: one FMA
// per element), so the results are bit-identical to dequantizeRow + dotF32 / axpyF32.
__attribute__((target("avx2,fma,f16c"))) float dotQ8_0Avx2(const tensor::BlockQ8_0* w, const float* x, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; ++b, x += 32) {
        const __m256 d = _mm256_set1_ps(tensor::fp16ToFp32(w[b].d));
        acc0 = _mm256_fmadd_ps(q8x8(w[b].qs, d), _mm256_loadu_ps(x), acc0);
        acc1 = _mm256_fmadd_ps(q8x8(w[b].qs + 8, d), _mm256_loadu_ps(x + 8), acc1);
        acc0 = _mm256_fmadd_ps(q8x8(w[b].qs + 16, d), _mm256_loadu_ps(x + 16), acc0);
        acc1 = _mm256_fmadd_ps(q8x8(w[b].qs + 24, d), _mm256_loadu_ps(x + 24), acc1);
    }
    const __m256 v = _mm256_add_ps(acc0, acc1);
    __m128 lo = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

__attribute__((target("avx2,fma,f16c"))) void axpyQ8_0Avx2(float a, const tensor::BlockQ8_0* w, float* y, int64_t n) {
    const __m256 av = _mm256_set1_ps(a);
    for (int64_t b = 0; b < n / 32; ++b, y += 32) {
        const __m256 d = _mm256_set1_ps(tensor::fp16ToFp32(w[b].d));
        for (int j = 0; j < 32; j += 8)
            _mm256_storeu_ps(y + j, _mm256_fmadd_ps(av, q8x8(w[b].qs + j, d), _mm256_loadu_ps(y + j)));
    }
}
#endif

// A row dequantized into a per-thread buffer (the generic path of dotRows / axpyRows).
float* rowBuffer(int64_t n) {
    thread_local std::vector<float> buf;
    if (buf.size() < static_cast<size_t>(n)) buf.resize(static_cast<size_t>(n));
    return buf.data();
}

}  // namespace

void dotRows(tensor::TensorType type, const void* W, size_t rowBytes, int64_t nRows, const float* x, float* y,
             int64_t n) {
    const auto* w = static_cast<const uint8_t*>(W);
#if VERDICT_MATMUL_X86
    if (type == tensor::TensorType::Q8_0 && haveAvx2Fma()) {
        for (int64_t r = 0; r < nRows; ++r)
            y[r] = dotQ8_0Avx2(reinterpret_cast<const tensor::BlockQ8_0*>(w + r * rowBytes), x, n);
        return;
    }
#endif
    float* row = rowBuffer(n);
    for (int64_t r = 0; r < nRows; ++r) {
        cpu::dequantizeRow(type, w + r * rowBytes, row, n);
        y[r] = dotF32(row, x, n);
    }
}

void axpyRows(tensor::TensorType type, const void* W, size_t rowBytes, int64_t nRows, const float* a, float* y,
              int64_t n) {
    const auto* w = static_cast<const uint8_t*>(W);
#if VERDICT_MATMUL_X86
    if (type == tensor::TensorType::Q8_0 && haveAvx2Fma()) {
        for (int64_t r = 0; r < nRows; ++r)
            axpyQ8_0Avx2(a[r], reinterpret_cast<const tensor::BlockQ8_0*>(w + r * rowBytes), y, n);
        return;
    }
#endif
    float* row = rowBuffer(n);
    for (int64_t r = 0; r < nRows; ++r) {
        cpu::dequantizeRow(type, w + r * rowBytes, row, n);
        axpyF32(a[r], row, y, n);
    }
}

const MatmulKernel* selectKernel(tensor::TensorType t, SimdLevel level) {
    if (level >= SimdLevel::Avx512)
        if (const auto* k = avx512Kernel(t)) return k;
    if (level >= SimdLevel::Avx2)
        if (const auto* k = avx2Kernel(t)) return k;
    return referenceKernel(t);
}

bool canCompute(tensor::TensorType type) { return referenceKernel(type) != nullptr; }

void dequantizeRow(tensor::TensorType type, const void* src, float* dst, int64_t n) {
#if VERDICT_MATMUL_X86
    if (type == tensor::TensorType::Q8_0 && activeSimdLevel() >= SimdLevel::Avx2) {
        dequantizeQ8_0Avx2(static_cast<const tensor::BlockQ8_0*>(src), dst, n);
        return;
    }
#endif
    tensor::dequantizeRow(type, src, dst, n);
}

void matmulWithKernel(const MatmulKernel& kernel, const void* W, int64_t nRows, int64_t K,
                      const float* X, int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool, bool packed) {
    if (nRows <= 0 || nTok <= 0) return;
    assert(K % tensor::traits(kernel.type).blockElems == 0);
    assert(!packed || kernel.pack);

    MatmulArgs a;
    a.W = static_cast<const uint8_t*>(W);
    a.rowBytes = *tensor::rowBytes(kernel.type, static_cast<uint64_t>(K));
    a.K = K;
    a.actStride = kernel.actRowBytes(K);
    a.Y = Y;
    a.ldy = ldy;
    a.packedRows = packed && kernel.pack ? nRows / 16 * 16 : 0;

    const bool serial = pool.size() == 1 || nRows * K * nTok < kSerialMacs;
    uint8_t* act = scratch(a.actStride * static_cast<size_t>(nTok));
    a.act = act;
    if (serial || nTok < 8) {
        for (int64_t t = 0; t < nTok; ++t) kernel.prepareAct(X + t * K, K, act + t * a.actStride);
    } else {
        pool.parallelFor(nTok, 4, [&](int64_t b, int64_t e, int) {
            for (int64_t t = b; t < e; ++t) kernel.prepareAct(X + t * K, K, act + t * a.actStride);
        });
    }

    const int64_t nThreads = serial ? 1 : pool.size();
    int64_t rowChunk, tokChunk;
    std::tie(rowChunk, tokChunk) = planTasks(nRows, nTok, a.rowBytes, nThreads, serial);
    const int64_t nRowTasks = (nRows + rowChunk - 1) / rowChunk;
    const int64_t nTokTasks = (nTok + tokChunk - 1) / tokChunk;
    auto task = [&](int64_t id) {
        const int64_t rt = id % nRowTasks, tt = id / nRowTasks;
        const int64_t r0 = rt * rowChunk, r1 = std::min(nRows, r0 + rowChunk);
        const int64_t t0 = tt * tokChunk, t1 = std::min(nTok, t0 + tokChunk);
        kernel.compute(a, r0, r1, t0, t1);
    };
    if (serial) {
        for (int64_t id = 0; id < nRowTasks * nTokTasks; ++id) task(id);
        return;
    }
    pool.runTasks(static_cast<int>(nRowTasks * nTokTasks), [&](int id, int) { task(id); });
}

void matmulGroup(const MatmulJob* jobs, int nJobs, ThreadPool& pool) {
    // Per job: its kernel, arguments and task grid. Activations are prepared once per distinct
    // (X, K, nTok, activation format), one after the other in the calling thread's scratch.
    struct Planned {
        const MatmulKernel* kernel;
        MatmulArgs a;
        const float* X;
        int64_t nRows, nTok;
        size_t actOffset;
        bool ownsAct;  // false: reuses an earlier job's prepared activations
        int64_t rowChunk, tokChunk, nRowTasks, firstTask;
    };
    // Reused between calls; the tasks below reach it through this reference (a thread_local named
    // inside a lambda would be the worker's own, empty one).
    thread_local std::vector<Planned> planStore;
    std::vector<Planned>& plans = planStore;
    plans.clear();
    int64_t macs = 0;
    size_t actBytes = 0;
    for (int j = 0; j < nJobs; ++j) {
        const MatmulJob& job = jobs[j];
        if (job.nRows <= 0 || job.nTok <= 0) continue;
        const MatmulKernel* k = selectKernel(job.type, activeSimdLevel());
        assert(k && "matmulGroup: type not computable (check canCompute first)");
        if (!k) continue;
        assert(job.K % tensor::traits(k->type).blockElems == 0);
        Planned p{};
        p.kernel = k;
        p.a.W = static_cast<const uint8_t*>(job.W);
        p.a.rowBytes = *tensor::rowBytes(k->type, static_cast<uint64_t>(job.K));
        p.a.K = job.K;
        p.a.actStride = k->actRowBytes(job.K);
        p.a.Y = job.Y;
        p.a.ldy = job.ldy;
        assert(!job.packed || k->pack);
        p.a.packedRows = job.packed && k->pack ? job.nRows / 16 * 16 : 0;
        p.X = job.X;
        p.nRows = job.nRows;
        p.nTok = job.nTok;
        p.ownsAct = true;
        for (const Planned& q : plans)
            if (q.ownsAct && q.X == job.X && q.nTok == job.nTok && q.a.K == job.K
                && q.kernel->prepareAct == k->prepareAct && q.a.actStride == p.a.actStride) {
                p.actOffset = q.actOffset;
                p.ownsAct = false;
                break;
            }
        if (p.ownsAct) {
            p.actOffset = actBytes;
            actBytes += p.a.actStride * static_cast<size_t>(job.nTok);
        }
        macs += job.nRows * job.K * job.nTok;
        plans.push_back(p);
    }
    if (plans.empty()) return;
    const bool serial = pool.size() == 1 || macs < kSerialMacs;
    const int64_t nThreads = serial ? 1 : pool.size();

    // Prepare the activations, over the (owning plan, token) pairs.
    uint8_t* act = scratch(actBytes);
    int64_t nPrepRows = 0;
    for (const Planned& p : plans)
        if (p.ownsAct) nPrepRows += p.nTok;
    auto prepareRow = [&](int64_t r) {
        for (const Planned& p : plans) {
            if (!p.ownsAct) continue;
            if (r < p.nTok) {
                p.kernel->prepareAct(p.X + r * p.a.K, p.a.K, act + p.actOffset + static_cast<size_t>(r) * p.a.actStride);
                return;
            }
            r -= p.nTok;
        }
    };
    if (serial || nPrepRows < 8) {
        for (int64_t r = 0; r < nPrepRows; ++r) prepareRow(r);
    } else {
        pool.parallelFor(nPrepRows, 4, [&](int64_t b, int64_t e, int) {
            for (int64_t r = b; r < e; ++r) prepareRow(r);
        });
    }

    // Every job's task grid, numbered one after the other, handed out in one dispatch.
    int64_t nTasks = 0;
    for (Planned& p : plans) {
        p.a.act = act + p.actOffset;
        std::tie(p.rowChunk, p.tokChunk) = planTasks(p.nRows, p.nTok, p.a.rowBytes, nThreads, serial);
        p.nRowTasks = (p.nRows + p.rowChunk - 1) / p.rowChunk;
        p.firstTask = nTasks;
        nTasks += p.nRowTasks * ((p.nTok + p.tokChunk - 1) / p.tokChunk);
    }
    auto task = [&](int64_t id) {
        size_t j = 0;
        while (j + 1 < plans.size() && plans[j + 1].firstTask <= id) ++j;
        const Planned& p = plans[j];
        const int64_t local = id - p.firstTask;
        const int64_t rt = local % p.nRowTasks, tt = local / p.nRowTasks;
        const int64_t r0 = rt * p.rowChunk, r1 = std::min(p.nRows, r0 + p.rowChunk);
        const int64_t t0 = tt * p.tokChunk, t1 = std::min(p.nTok, t0 + p.tokChunk);
        p.kernel->compute(p.a, r0, r1, t0, t1);
    };
    if (serial) {
        for (int64_t id = 0; id < nTasks; ++id) task(id);
        return;
    }
    pool.runTasks(static_cast<int>(nTasks), [&](int id, int) { task(id); });
}

void matmul(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, const float* X,
            int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool, bool packed) {
    const MatmulKernel* k = selectKernel(type, activeSimdLevel());
    assert(k && "matmul: type not computable (check canCompute first)");
    if (!k) return;
    matmulWithKernel(*k, W, nRows, K, X, nTok, Y, ldy, pool, packed);
}

bool canPack(tensor::TensorType type) {
    const MatmulKernel* k = selectKernel(type, activeSimdLevel());
    return k && k->pack;
}

void packWithKernel(const MatmulKernel& kernel, const void* W, int64_t nRows, int64_t K, void* out, ThreadPool& pool) {
    assert(kernel.pack && K % tensor::traits(kernel.type).blockElems == 0);
    if (!kernel.pack || nRows <= 0) return;
    const size_t rowBytes = *tensor::rowBytes(kernel.type, static_cast<uint64_t>(K));
    const auto* w = static_cast<const uint8_t*>(W);
    auto* o = static_cast<uint8_t*>(out);
    const int64_t nPanels = nRows / 16;
    // Task p < nPanels packs panel p; the last task copies the rows after the last panel.
    pool.parallelFor(nPanels + 1, 1, [&](int64_t b, int64_t e, int) {
        for (int64_t p = b; p < e; ++p) {
            const int64_t r = 16 * p;
            if (p < nPanels)
                kernel.pack(w + r * rowBytes, rowBytes, 16, K, o + r * rowBytes);
            else if (nRows > r)
                std::memcpy(o + r * rowBytes, w + r * rowBytes, static_cast<size_t>(nRows - r) * rowBytes);
        }
    });
}

void packWeights(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, void* out, ThreadPool& pool) {
    const MatmulKernel* k = selectKernel(type, activeSimdLevel());
    assert(k && k->pack);
    if (k && k->pack) packWithKernel(*k, W, nRows, K, out, pool);
}

}  // namespace verdict::cpu
