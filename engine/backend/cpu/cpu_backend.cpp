#include "backend/cpu/cpu_backend.h"

#include "backend/cpu/act_quant.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_attention.h"
#include "backend/cpu/ops_moe.h"
#include "backend/cpu/ops_norm.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cpu/ops_vec.h"
#include "backend/cpu/thread_pool.h"
#include "tensor/half.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace verdict::cpu {

namespace {

// MLA: query heads per task of the latent attention (they share one cache, read once per group),
// and below how many query rows the absorb / up-projection read the quantized attn_kv_b rows
// directly (axpyRows / dotRows) rather than dequantizing a head's rows once.
constexpr int64_t kMlaHeadsPerTask = 4;
constexpr int64_t kMlaFusedRows = 4;

// Where a row's cache keeps the layer's keys and values.
uint8_t* layerK(const backend::Attention&, const backend::RowCache& r) { return r.base; }
uint8_t* layerV(const backend::Attention& a, const backend::RowCache& r) {
    const uint64_t elem = a.f16 ? 2 : 4;
    return r.base + static_cast<uint64_t>(a.nHeadKv) * static_cast<uint64_t>(r.capacity) * a.dimK * elem;
}

void storeRow(uint8_t* dst, const float* src, int64_t n, bool f16) {
    if (!f16) {
        std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
        return;
    }
    auto* h = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = tensor::fp32ToFp16(src[i]);
}

}  // namespace

// A packed matrix in its own anonymous mapping, asked for transparent huge pages: decode streams
// every weight once per token, and 2 MB pages spare it most TLB misses.
struct CpuBackend::Packed {
    void* data = nullptr;
    uint64_t bytes = 0;
    backend::Matrix shape;

    explicit Packed(uint64_t n) : bytes(n) {
        data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (data == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        ::madvise(data, bytes, MADV_HUGEPAGE);
#endif
    }
    ~Packed() { ::munmap(data, bytes); }
    Packed(const Packed&) = delete;
    Packed& operator=(const Packed&) = delete;
};

CpuBackend::CpuBackend(ThreadPool& pool) : m_pool(pool) {}
CpuBackend::~CpuBackend() = default;

uint64_t CpuBackend::packMatrices(const std::vector<backend::Matrix>& matrices) {
    uint64_t total = 0;
    for (const backend::Matrix& w : matrices) {
        if (!w.data || w.rows <= 0 || w.nMat <= 0 || !canPack(w.type) || m_packed.count(w.data)) continue;
        const uint64_t matrixBytes = w.rowBytes * static_cast<uint64_t>(w.rows);
        auto p = std::make_unique<Packed>(matrixBytes * static_cast<uint64_t>(w.nMat));
        p->shape = w;
        const auto* src = static_cast<const uint8_t*>(w.data);
        auto* dst = static_cast<uint8_t*>(p->data);
        for (int64_t e = 0; e < w.nMat; ++e)
            packWeights(w.type, src + e * matrixBytes, w.rows, w.cols, dst + e * matrixBytes, m_pool);
        p->shape.data = p->data;
        total += p->bytes;
        m_packed.emplace(w.data, std::move(p));
    }
    return total;
}

const void* CpuBackend::packedData(const backend::Matrix& w) const {
    if (m_packed.empty()) return nullptr;
    const auto it = m_packed.find(w.data);
    if (it == m_packed.end()) return nullptr;
    const backend::Matrix& s = it->second->shape;
    return s.type == w.type && s.rows == w.rows && s.cols == w.cols && s.rowBytes == w.rowBytes && w.nMat <= s.nMat
        ? s.data
        : nullptr;
}

std::string CpuBackend::name() const {
    return "cpu (" + std::string(simdLevelName(activeSimdLevel())) + ", " + std::to_string(m_pool.size())
        + (m_pool.size() == 1 ? " thread)" : " threads)");
}

bool CpuBackend::supports(tensor::TensorType type) const { return canCompute(type); }

Result<void*> CpuBackend::allocate(uint64_t bytes, std::string_view what, backend::Purpose) {
    const uint64_t rounded = (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) return Error{"cannot allocate " + std::to_string(bytes) + " bytes for " + std::string(what)};
    return p;
}

void CpuBackend::release(void* p) { std::free(p); }

void CpuBackend::upload(void* dst, const void* host, uint64_t bytes) { std::memcpy(dst, host, bytes); }

void CpuBackend::download(void* host, const void* src, uint64_t bytes) { std::memcpy(host, src, bytes); }

void CpuBackend::copy(void* dst, const void* src, uint64_t bytes) { std::memcpy(dst, src, bytes); }

void CpuBackend::embedRows(const backend::Matrix& w, const int32_t* tokens, int64_t nTok, float* out) {
    const auto* base = static_cast<const uint8_t*>(w.data);
    for (int64_t t = 0; t < nTok; ++t)
        dequantizeRow(w.type, base + static_cast<uint64_t>(tokens[t]) * w.rowBytes, out + t * w.cols, w.cols);
}

void CpuBackend::matmul(const backend::Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) {
    if (nTok <= 0) return;
    if (const void* packed = packedData(w)) {
        cpu::matmul(w.type, packed, w.rows, w.cols, x, nTok, y, ldy, m_pool, true);
        return;
    }
    cpu::matmul(w.type, w.data, w.rows, w.cols, x, nTok, y, ldy, m_pool);
}

void CpuBackend::expertMatmuls(const backend::ExpertProduct* products, int count) {
    // Each distinct input (x, xDiv, experts) gathered once, its pairs grouped by expert (a counting
    // sort); one matmul job per (product, expert used), so each expert's weights are read once for
    // all its rows; every job of the call in one matmulGroup dispatch (jobs on the same gathered rows
    // quantize them once); the outputs scattered back to pair order. A dense product (no experts,
    // xDiv 1) runs on x and y in place. Each row's result is the same as alone.
    struct Gather {
        const float* x;
        int64_t xDiv;
        const int32_t* experts;
        int64_t nPairs, K, nMat;
        std::vector<int64_t> begin, order;  // rows of expert e: begin[e] .. begin[e+1]; gathered row -> pair
        std::vector<float> xs;
    };
    thread_local std::vector<Gather> gathersOfThisThread;
    thread_local std::vector<std::vector<float>> outsOfThisThread;
    thread_local std::vector<int> gatherOfOfThisThread;
    thread_local std::vector<MatmulJob> jobsOfThisThread;
    std::vector<Gather>& gathers = gathersOfThisThread;
    std::vector<std::vector<float>>& outs = outsOfThisThread;
    std::vector<int>& gatherOf = gatherOfOfThisThread;
    std::vector<MatmulJob>& jobs = jobsOfThisThread;
    jobs.clear();
    gatherOf.assign(static_cast<size_t>(std::max(count, 0)), -1);
    if (outs.size() < static_cast<size_t>(count)) outs.resize(static_cast<size_t>(count));
    size_t nGathers = 0;
    for (int i = 0; i < count; ++i) {
        const backend::ExpertProduct& p = products[i];
        const backend::Matrix& w = p.w;
        const int64_t K = w.cols, N = w.rows;
        if (p.nPairs <= 0) continue;
        const void* packed = packedData(w);
        if (!p.experts && p.xDiv == 1) {
            jobs.push_back({w.type, packed ? packed : w.data, N, K, p.x, p.nPairs, p.y, N, packed != nullptr});
            continue;
        }
        const int64_t nMat = p.experts ? w.nMat : 1;
        size_t g = 0;
        while (g < nGathers && !(gathers[g].x == p.x && gathers[g].xDiv == p.xDiv && gathers[g].experts == p.experts
                                 && gathers[g].nPairs == p.nPairs && gathers[g].K == K && gathers[g].nMat == nMat))
            ++g;
        if (g == nGathers) {
            if (gathers.size() <= nGathers) gathers.resize(nGathers + 1);
            Gather& G = gathers[nGathers++];
            G.x = p.x;
            G.xDiv = p.xDiv;
            G.experts = p.experts;
            G.nPairs = p.nPairs;
            G.K = K;
            G.nMat = nMat;
            G.begin.assign(static_cast<size_t>(nMat) + 1, 0);
            for (int64_t q = 0; q < p.nPairs; ++q) ++G.begin[static_cast<size_t>(p.experts ? p.experts[q] : 0) + 1];
            for (size_t e = 1; e < G.begin.size(); ++e) G.begin[e] += G.begin[e - 1];
            G.order.resize(static_cast<size_t>(p.nPairs));
            G.xs.resize(static_cast<size_t>(p.nPairs * K));
            std::vector<int64_t> next(G.begin.begin(), G.begin.end() - 1);
            for (int64_t q = 0; q < p.nPairs; ++q) {
                const int64_t m = next[static_cast<size_t>(p.experts ? p.experts[q] : 0)]++;
                G.order[static_cast<size_t>(m)] = q;
                std::copy_n(p.x + (q / p.xDiv) * K, K, G.xs.data() + m * K);
            }
        }
        gatherOf[static_cast<size_t>(i)] = static_cast<int>(g);
        const Gather& G = gathers[g];
        std::vector<float>& ys = outs[static_cast<size_t>(i)];
        ys.resize(static_cast<size_t>(p.nPairs * N));
        const auto* base = static_cast<const uint8_t*>(packed ? packed : w.data);
        const uint64_t matrixBytes = w.rowBytes * static_cast<uint64_t>(N);
        for (int64_t e = 0; e < nMat; ++e) {
            const int64_t b0 = G.begin[static_cast<size_t>(e)], rows = G.begin[static_cast<size_t>(e) + 1] - b0;
            if (rows > 0)
                jobs.push_back({w.type, base + static_cast<uint64_t>(e) * matrixBytes, N, K, G.xs.data() + b0 * K, rows,
                                ys.data() + b0 * N, N, packed != nullptr});
        }
    }
    matmulGroup(jobs.data(), static_cast<int>(jobs.size()), m_pool);
    for (int i = 0; i < count; ++i) {
        if (gatherOf[static_cast<size_t>(i)] < 0) continue;
        const backend::ExpertProduct& p = products[i];
        const Gather& G = gathers[static_cast<size_t>(gatherOf[static_cast<size_t>(i)])];
        const int64_t N = p.w.rows;
        const float* ys = outs[static_cast<size_t>(i)].data();
        for (int64_t m = 0; m < p.nPairs; ++m) std::copy_n(ys + m * N, N, p.y + G.order[static_cast<size_t>(m)] * N);
    }
}

void CpuBackend::rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) {
    rmsNormRows(x, w, y, rows, n, eps);
}

void CpuBackend::add(const float* a, const float* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void CpuBackend::addBias(float* y, const float* bias, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < n; ++i) y[r * n + i] += bias[i];
}

void CpuBackend::scale(float* x, float factor, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] *= factor;
}

void CpuBackend::softCap(float* x, int64_t n, float cap) { softCapInPlace(x, n, cap); }

void CpuBackend::swiglu(float* gate, const float* up, int64_t n) {
    m_pool.parallelFor(n, 4096, [gate, up](int64_t b, int64_t e, int) { swigluInPlace(gate + b, up + b, e - b); });
}

void CpuBackend::swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) {
    m_pool.parallelFor(n, 4096, [=](int64_t b, int64_t e, int) { swigluOaiInPlace(gate + b, up + b, e - b, alpha, limit); });
}

void CpuBackend::geglu(float* gate, const float* up, int64_t n) {
    m_pool.parallelFor(n, 4096, [gate, up](int64_t b, int64_t e, int) { gegluInPlace(gate + b, up + b, e - b); });
}

void CpuBackend::rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
                      const float* table) {
    const RopeMode mode = neox ? RopeMode::Neox : RopeMode::Norm;
    for (int64_t t = 0; t < nTok; ++t) applyRope(mode, x + t * nHead * headDim, nHead, headDim, nRot, table + t * nRot);
}

void CpuBackend::storeKv(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok,
                         const float* k, const float* v) {
    const uint64_t elem = a.f16 ? 2 : 4;
    for (int64_t t = 0; t < nTok; ++t) {
        const backend::RowCache& r = hostRows[t];
        for (int g = 0; g < a.nHeadKv; ++g) {
            const uint64_t slot = static_cast<uint64_t>(g) * static_cast<uint64_t>(r.capacity) + static_cast<uint64_t>(r.pos);
            storeRow(layerK(a, r) + slot * a.dimK * elem, k + (t * a.nHeadKv + g) * a.dimK, a.dimK, a.f16);
            storeRow(layerV(a, r) + slot * a.dimV * elem, v + (t * a.nHeadKv + g) * a.dimV, a.dimV, a.f16);
        }
    }
}

void CpuBackend::attention(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok,
                           const float* q, float* out) {
    // Runs: rows of one sequence at consecutive positions (a prefill, or one decode row).
    struct Run {
        int64_t t0, n;
    };
    thread_local std::vector<Run> runsOfThisThread;
    std::vector<Run>& runs = runsOfThisThread;  // the pool's workers read the caller's (a thread_local is not captured)
    runs.clear();
    for (int64_t t0 = 0; t0 < nTok;) {
        const backend::RowCache& r = hostRows[t0];
        int64_t t1 = t0 + 1;
        while (t1 < nTok && hostRows[t1].base == r.base && hostRows[t1].capacity == r.capacity
               && hostRows[t1].pos == r.pos + (t1 - t0))
            ++t1;
        runs.push_back({t0, t1 - t0});
        t0 = t1;
    }
    auto shapeOf = [&](const backend::RowCache& r) {
        AttentionShape s;
        s.nHead = a.nHead;
        s.nHeadKv = a.nHeadKv;
        s.headDimK = a.dimK;
        s.headDimV = a.dimV;
        s.kvCapacity = r.capacity;
        s.scale = a.scale;
        s.f16 = a.f16;
        s.softCap = a.softCap;
        s.window = a.window;
        s.sinks = a.sinks;
        return s;
    };
    int64_t stride = 0;  // scratch floats of one thread: the largest capacity's
    for (const Run& run : runs) stride = std::max(stride, attentionScratchFloats(shapeOf(hostRows[run.t0])));
    thread_local std::vector<float> scratchOfThisThread;  // grows to the largest context seen, then stays
    std::vector<float>& scratch = scratchOfThisThread;
    const auto need = static_cast<size_t>(stride * m_pool.size());
    if (scratch.size() < need) scratch.resize(need);
    auto attend = [&](const Run& run, float* work, ThreadPool& pool) {
        const backend::RowCache& r = hostRows[run.t0];
        cpu::attention(shapeOf(r), q + run.t0 * a.nHead * a.dimK, layerK(a, r), layerV(a, r), run.n, r.pos,
                       out + run.t0 * a.nHead * a.dimV, work, pool);
    };
    const auto nRuns = static_cast<int64_t>(runs.size());
    if (nRuns < m_pool.size()) {
        // Few runs: one after the other, each spreading its heads and rows over the pool.
        for (const Run& run : runs) attend(run, scratch.data(), m_pool);
        return;
    }
    // Many runs (batched decode): each thread takes whole runs with its own scratch block; the inner
    // call gets a one-thread pool, so it runs serially and uses exactly that block.
    static ThreadPool serial(1);
    float* base = scratch.data();
    m_pool.parallelFor(nRuns, 1, [&](int64_t r0, int64_t r1, int thread) {
        for (int64_t i = r0; i < r1; ++i) attend(runs[static_cast<size_t>(i)], base + thread * stride, serial);
    });
}

void CpuBackend::latentAttention(const backend::LatentAttention& a, const backend::RowCache* hostRows, int64_t nTok,
                                 const float* q, float* out) {
    if (nTok <= 0) return;
    const int64_t H = a.nHead, Lr = a.rank, dn = a.dNope, dr = a.dRope, dv = a.dV, dk = dn + dr;
    const backend::Matrix& W = a.kvB;
    auto wRow = [&](int64_t r) { return static_cast<const uint8_t*>(W.data) + static_cast<uint64_t>(r) * W.rowBytes; };
    const int nThreads = m_pool.size();
    int64_t maxKv = 1;
    for (int64_t t = 0; t < nTok; ++t) maxKv = std::max<int64_t>(maxKv, hostRows[t].pos + 1);
    const int64_t workStride = (std::max<int64_t>(2 * kMlaHeadsPerTask * maxKv, Lr) + 15) / 16 * 16;
    const int64_t blockStride = (std::max(dn, dv) * Lr + 15) / 16 * 16;
    thread_local std::vector<float> qLatOfThisThread, oLatOfThisThread, workOfThisThread, blockOfThisThread;
    std::vector<float>& qLat = qLatOfThisThread;  // [nTok][H][Lr] q_nope in latent space
    std::vector<float>& oLat = oLatOfThisThread;  // [nTok][H][Lr] attention-weighted latents
    std::vector<float>& work = workOfThisThread;
    std::vector<float>& block = blockOfThisThread;
    qLat.resize(static_cast<size_t>(nTok * H * Lr));
    oLat.resize(static_cast<size_t>(nTok * H * Lr));
    if (work.size() < static_cast<size_t>(nThreads * workStride)) work.resize(static_cast<size_t>(nThreads * workStride));
    if (block.size() < static_cast<size_t>(nThreads * blockStride)) block.resize(static_cast<size_t>(nThreads * blockStride));
    float* qLatP = qLat.data();
    float* oLatP = oLat.data();
    float* workP = work.data();
    float* blockP = block.data();
    const bool fused = nTok < kMlaFusedRows;

    // Absorb: qLat[t][h] = sum_i q_nope[t][h][i] * W_k[h][i]  (W_k[h][i] = row h*(dn+dv)+i of kvB, Lr
    // elements), one head per task. A few rows (decode) run fused over the quantized rows; more rows
    // first dequantize the head's dn key rows into the thread's block (dn x Lr floats,
    // L2-resident), then every row sweeps it while its own qLat row stays in L1. Either way each
    // element sums over i in order, with the same values (axpyRows).
    m_pool.parallelFor(H, 1, [&](int64_t h0, int64_t h1, int thread) {
        float* wk = blockP + thread * blockStride;
        for (int64_t h = h0; h < h1; ++h) {
            if (!fused) dequantizeRow(W.type, wRow(h * (dn + dv)), wk, dn * Lr);
            for (int64_t t = 0; t < nTok; ++t) {
                float* ql = qLatP + (t * H + h) * Lr;
                const float* qn = q + t * H * dk + h * dk;
                std::fill_n(ql, Lr, 0.0f);
                if (fused)
                    axpyRows(W.type, wRow(h * (dn + dv)), W.rowBytes, dn, qn, ql, Lr);
                else
                    for (int64_t i = 0; i < dn; ++i) axpyF32(qn[i], wk + i * Lr, ql, Lr);
            }
        }
    });

    // Attention in latent space, one (row, group of up to kMlaHeadsPerTask heads) per task: scores
    // over positions 0..pos. Every head reads the same latent cache, so a group meets each position
    // once (ops_vec.h's row functions: the same dot products and sums as head by head).
    const int64_t groups = (H + kMlaHeadsPerTask - 1) / kMlaHeadsPerTask;
    const uint64_t elem = a.f16 ? 2 : 4;
    m_pool.parallelFor(nTok * groups, 1, [&](int64_t i0, int64_t i1, int thread) {
        float* w = workP + thread * workStride;
        for (int64_t item = i0; item < i1; ++item) {
            const int64_t t = item / groups, h0 = (item % groups) * kMlaHeadsPerTask;
            const int64_t nh = std::min(kMlaHeadsPerTask, H - h0);
            const backend::RowCache& r = hostRows[t];
            const int64_t nKv = r.pos + 1;
            const uint8_t* latents = r.base;  // [capacity][Lr]
            const uint8_t* kRope = r.base + static_cast<uint64_t>(r.capacity) * static_cast<uint64_t>(Lr) * elem;
            float* scores = w;                       // [nh][nKv]: the latent part, then the sum
            float* pe = w + kMlaHeadsPerTask * nKv;  // [nh][nKv]: the RoPE part
            const float* ql = qLatP + (t * H + h0) * Lr;
            const float* qp = q + t * H * dk + h0 * dk + dn;
            float* ol = oLatP + (t * H + h0) * Lr;
            std::fill_n(ol, nh * Lr, 0.0f);
            if (!a.f16) {
                dotRowsF32(ql, Lr, nh, reinterpret_cast<const float*>(latents), nKv, Lr, scores, nKv);
                dotRowsF32(qp, dk, nh, reinterpret_cast<const float*>(kRope), nKv, dr, pe, nKv);
            } else {
                dotRowsF16(ql, Lr, nh, reinterpret_cast<const uint16_t*>(latents), nKv, Lr, scores, nKv);
                dotRowsF16(qp, dk, nh, reinterpret_cast<const uint16_t*>(kRope), nKv, dr, pe, nKv);
            }
            for (int64_t i = 0; i < nh * nKv; ++i) scores[i] += pe[i];
            for (int64_t i = 0; i < nh; ++i) softmaxRowFast(scores + i * nKv, nKv, a.scale, nullptr);
            if (!a.f16)
                accumulateRowsF32(scores, nh, nKv, reinterpret_cast<const float*>(latents), nKv, Lr, ol);
            else
                accumulateRowsF16(scores, nh, nKv, reinterpret_cast<const uint16_t*>(latents), nKv, Lr, ol);
        }
    });

    // Up-project: out[t][h][k] = W_v[h][k] . oLat[t][h]  (W_v[h][k] = row h*(dn+dv)+dn+k), the dv
    // value rows of a head taken like the key rows above.
    m_pool.parallelFor(H, 1, [&](int64_t h0, int64_t h1, int thread) {
        float* wv = blockP + thread * blockStride;
        for (int64_t h = h0; h < h1; ++h) {
            if (!fused) dequantizeRow(W.type, wRow(h * (dn + dv) + dn), wv, dv * Lr);
            for (int64_t t = 0; t < nTok; ++t) {
                const float* ol = oLatP + (t * H + h) * Lr;
                float* o = out + t * H * dv + h * dv;
                if (fused)
                    dotRows(W.type, wRow(h * (dn + dv) + dn), W.rowBytes, dv, ol, o, Lr);
                else
                    for (int64_t k = 0; k < dv; ++k) o[k] = dotF32(wv + k * Lr, ol, Lr);
            }
        }
    });
}

void CpuBackend::roundAsMatmulInput(tensor::TensorType type, float* x, int64_t rows, int64_t K) {
    for (int64_t r = 0; r < rows; ++r) cpu::roundAsMatmulInput(type, x + r * K, K);
}

void CpuBackend::copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r) std::copy_n(src + r * lds, cols, dst + r * ldd);
}

void CpuBackend::routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                  float* weights) {
    std::vector<float> probs(static_cast<size_t>(nExpert));
    for (int64_t t = 0; t < nTok; ++t) {
        std::copy_n(logits + t * nExpert, nExpert, probs.data());
        routeSoftmaxTopKRow(probs.data(), nExpert, U, experts + t * U, weights + t * U);
    }
}

void CpuBackend::routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                  float* weights) {
    for (int64_t t = 0; t < nTok; ++t) routeTopKSoftmaxRow(logits + t * nExpert, nExpert, U, experts + t * U, weights + t * U);
}

void CpuBackend::routeGrouped(const backend::GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U,
                              float* selection, int32_t* experts, float* weights) {
    thread_local std::vector<float> own;  // the selection when the caller keeps none
    if (!selection) own.resize(static_cast<size_t>(nExpert));
    for (int64_t t = 0; t < nTok; ++t)
        routeGroupedRow(r, scores + t * nExpert, nExpert, U, selection ? selection + t * nExpert : own.data(), experts + t * U,
                        weights + t * U);
}

void CpuBackend::addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) {
    for (int64_t p = 0; p < nPairs; ++p) {
        const float* b = bias + static_cast<int64_t>(experts[p]) * n;
        for (int64_t i = 0; i < n; ++i) y[p * n + i] += b[i];
    }
}

void CpuBackend::combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) {
    // As runExperts (arch/decoder.cpp): each weighted output rounded, then added in rank order.
    for (int64_t t = 0; t < nTok; ++t) {
        float* o = out + t * n;
        for (int64_t i = 0; i < n; ++i) o[i] = y[(t * U) * n + i] * weights[t * U];
        for (int slot = 1; slot < U; ++slot) {
            const float w = weights[t * U + slot];
            const float* src = y + (t * U + slot) * n;
            for (int64_t i = 0; i < n; ++i) o[i] += src[i] * w;
        }
    }
}

}  // namespace verdict::cpu
