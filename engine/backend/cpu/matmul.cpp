// The matmul driver: picks the kernel for the weight type and CPU, prepares the activations
// once per call, and splits the output over the thread pool.
//
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul_kernel.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <memory>

namespace verdict::cpu {
namespace {

constexpr size_t kPrefillChunkBytes = 256 * 1024;  // weights of one prefill task (L2: 1 MB)
constexpr int64_t kSerialMacs = 1 << 18;  // below this a call is not worth waking the workers
constexpr int64_t kDecodeMaxTokens = 4;
// Task edges fall on multiples of these so the kernels' register tiles (rows: 2, 3, 4, 6, 8;
// tokens: 2, 3, 4) divide every task except the matrix's last one.
constexpr int64_t kRowQuantum = 48;
constexpr int64_t kTokQuantum = 24;

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

}  // namespace

const MatmulKernel* selectKernel(tensor::TensorType t, SimdLevel level) {
    if (level >= SimdLevel::Avx512)
        if (const auto* k = avx512Kernel(t)) return k;
    if (level >= SimdLevel::Avx2)
        if (const auto* k = avx2Kernel(t)) return k;
    return referenceKernel(t);
}

bool canCompute(tensor::TensorType type) { return referenceKernel(type) != nullptr; }

void dequantizeRow(tensor::TensorType type, const void* src, float* dst, int64_t n) {
    tensor::dequantizeRow(type, src, dst, n);
}

void matmulWithKernel(const MatmulKernel& kernel, const void* W, int64_t nRows, int64_t K,
                      const float* X, int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool) {
    if (nRows <= 0 || nTok <= 0) return;
    assert(K % tensor::traits(kernel.type).blockElems == 0);

    MatmulArgs a;
    a.W = static_cast<const uint8_t*>(W);
    a.rowBytes = *tensor::rowBytes(kernel.type, static_cast<uint64_t>(K));
    a.K = K;
    a.actStride = kernel.actRowBytes(K);
    a.Y = Y;
    a.ldy = ldy;

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

    // Tasks: rectangles of rows x tokens. Decode (few tokens): ~4 row slices per thread, each
    // streaming its own part of the weights. Prefill: row chunks whose weights fit in L2
    // (kPrefillChunkBytes), every token passing over a chunk while it is cached; tokens are split
    // too when there are too few row chunks to keep the threads busy.
    const int64_t nThreads = serial ? 1 : pool.size();
    int64_t rowChunk, tokChunk = nTok;
    if (nTok <= kDecodeMaxTokens) {
        rowChunk = serial ? nRows : roundUpTo((nRows + nThreads * 4 - 1) / (nThreads * 4), kRowQuantum);
    } else {
        rowChunk = static_cast<int64_t>(kPrefillChunkBytes / a.rowBytes) / kRowQuantum * kRowQuantum;
        rowChunk = std::clamp<int64_t>(rowChunk, kRowQuantum, 10 * kRowQuantum);
        const int64_t rowTasks = (nRows + rowChunk - 1) / rowChunk;
        if (!serial && rowTasks < nThreads * 4) {
            const int64_t tokSplits = std::min<int64_t>((nThreads * 4 + rowTasks - 1) / rowTasks, nTok / kTokQuantum + 1);
            tokChunk = roundUpTo((nTok + tokSplits - 1) / tokSplits, kTokQuantum);
        }
    }
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

void matmul(tensor::TensorType type, const void* W, int64_t nRows, int64_t K, const float* X,
            int64_t nTok, float* Y, int64_t ldy, ThreadPool& pool) {
    const MatmulKernel* k = selectKernel(type, activeSimdLevel());
    assert(k && "matmul: type not computable (check canCompute first)");
    if (!k) return;
    matmulWithKernel(*k, W, nRows, K, X, nTok, Y, ldy, pool);
}

}  // namespace verdict::cpu
