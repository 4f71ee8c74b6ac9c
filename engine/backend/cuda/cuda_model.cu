// The CUDA backend's model: the weights of a llama-family decoder (llama, mistral, mixtral, qwen2, phi3,
// gemma2 with its DecoderVariant: embedding scale, post-norms, GeGLU, final soft-cap)
// uploaded once in their GGUF block formats, and the forward pass of decoderForward
// (arch/decoder.cpp) step for step on the device. Sessions hold their KV caches in device memory
// (CudaKv); one pass may mix rows of several sequences (batched decode).
//
// Products: passes of up to kMatvecMaxCols rows read the blocks in place (ops_matvec.cu); up to
// kMmaMaxCols rows of quantised / BF16 weights run on the tensor cores from tiles decoded in place
// (ops_mma.cu); larger passes dequantise tiles of the weight to f16 and run cuBLAS GEMMs with f32
// accumulation (F16 weights are used as they are, F32 weights through SGEMM). Activations of a GEMM
// are rounded to f16, as llama.cpp's CUDA backend does (values beyond +-65504 would overflow).
#include "arch/architecture.h"
#include "arch/decoder.h"
#include "backend/cpu/ops_activation.h"
#include "backend/cpu/ops_rope.h"
#include "backend/cuda/cuda_memory.h"
#include "backend/cuda/cuda_model.h"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/expert_order.h"
#include "backend/cuda/gemm.h"
#include "backend/gpu/gpu_model.h"
#include "tensor/half.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace verdict::cuda {
namespace {

constexpr uint64_t kAlign = 256;
constexpr int64_t kLogitRows = 64;                   // output rows per logits chunk
constexpr int kMaxSplits = 32;                       // attention position splits (decode)
constexpr int kMaxHeadDim = 256;
constexpr int kMaxExperts = 512;
constexpr int kMaxUsedExperts = 32;

uint64_t alignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

class CudaKv final : public gpu::GpuKv {
public:
    CudaKv(DeviceBuffer mem, int64_t capacity, bool f16) : m_mem(std::move(mem)), m_capacity(capacity), m_f16(f16) {}
    uint64_t bytes() const override { return m_mem.bytes(); }
    int64_t capacity() const override { return m_capacity; }
    uint8_t* base() const { return m_mem.data(); }
    bool f16() const { return m_f16; }

private:
    DeviceBuffer m_mem;
    int64_t m_capacity;
    bool m_f16;
};

struct LayerMatrices {
    DeviceMatrix wq, wk, wv, wo, gate, up, down, gateInp, gateExps, upExps, downExps;
    const float *attnNorm = nullptr, *ffnNorm = nullptr, *bq = nullptr, *bk = nullptr, *bv = nullptr, *bo = nullptr;
    const float *attnPost = nullptr, *ffnPost = nullptr;  // gemma2's post-norms (DecoderVariant)
};

// The activation buffers of a pass of up to `rows` rows, carved from one allocation.
struct Scratch {
    DeviceBuffer mem;
    int64_t rows = 0;
    float *inpL, *cur, *q, *k, *v, *kqv, *attnOut, *gate, *up, *ffnOut, *router, *expertW, *moeY, *ropeTable;
    float *logits, *partials, *moeX;  // moeX: a prefill's expert inputs grouped by expert, then their outputs
    int32_t *tokens, *experts, *order;
    RowCache* rowCache;
    __half *xHalf, *wHalf;
};

class CudaModel final : public gpu::GpuModel {
public:
    CudaModel(const gpu::GpuModelSource& m, const arch::DecoderWeights& w, arch::DecoderVariant variant, int device,
              int64_t layers)
        : m_arch(m.arch), m_cfg(m.cfg), m_archWeights(m.weights), m_w(w), m_variant(std::move(variant)), m_device(device),
          m_nLayers(layers) {}
    ~CudaModel() override;

    Result<void> init();
    std::string deviceId() const override { return "cuda:" + std::to_string(m_device); }
    std::string deviceName() const override { return m_name; }
    Result<std::unique_ptr<gpu::GpuKv>> createKv(int64_t capacity, bool f16) override;
    Result<void> forward(const gpu::GpuBatch& batch) override;
    gpu::VramUse vram() const override;

private:
    Result<void> upload();
    Result<void> ensureScratch(int64_t rows);
    void project(const DeviceMatrix& w, const float* bias, const float* x, int64_t nTok, float* y);
    AttentionShape attentionShape(int layer, bool f16) const;
    Result<void> check(const char* what);
    // The kernels of a pass after its inputs are on the device: embeddings and the blocks, then
    // (headRows > 0) the output head of rows [headFrom, headFrom + headRows) into s.logits.
    void enqueuePass(int64_t n, bool f16, int nSplit, int64_t headFrom, int64_t headRows);
    void enqueueHead(int64_t rowFrom, int64_t rows);  // final norm + output projection into s.logits
    void groupedExperts(const LayerMatrices& L, int64_t n);  // a prefill's MoE products, one GEMM per expert
    // The same as one CUDA graph (decode-sized passes): a shape's first pass runs eagerly, its
    // second is captured, later ones replay; false: the caller enqueues the pass directly.
    bool launchGraph(int64_t n, bool f16, int64_t headFrom, int64_t headRows);
    cudaGraphExec_t capture(int64_t n, bool f16, int64_t headFrom, int64_t headRows);  // null when it failed
    void dropGraphs();

    const arch::Architecture& m_arch;
    const arch::ArchConfig& m_cfg;
    const arch::ArchWeights& m_archWeights;
    const arch::DecoderWeights& m_w;
    const arch::DecoderVariant m_variant;
    int m_device;
    int64_t m_nLayers;      // blocks on this GPU (all of them, or the first ones: partial offload)
    std::string m_name;
    int64_t m_maxCols = 0;  // longest weight row (K)
    int64_t m_maxRows = 0;  // most rows of a weight matrix (N)

    Ledger m_ledger;
    DeviceBuffer m_weights;
    Scratch m_s;
    cudaStream_t m_stream = nullptr;
    Gemm m_gemm;  // the products (gemm.h); its cuBLAS failures are reported by check()
    std::string m_passError;  // the first failure of the current pass found on the host, reported by check()

    DeviceMatrix m_tokEmbd, m_output;
    const float* m_outputNorm = nullptr;
    const uint16_t* m_geluTable = nullptr;  // DecoderVariant::geglu: ggml's f16 GELU table
    std::vector<LayerMatrices> m_layers;

    std::vector<float> m_hostTable;
    std::vector<RowCache> m_hostRows;
    std::vector<int32_t> m_hostExperts, m_hostOrder;  // groupedExperts' routing copy and sort
    std::mutex m_mutex;

    // Decode steps replay one captured graph per pass shape: ~17 kernels per block launched at
    // once instead of one by one (launch overhead would otherwise dominate small-model decode).
    // Every kernel argument is a device pointer that stays fixed (weights, scratch, the row table
    // whose contents are uploaded before each launch) or a shape in the key.
    struct Graph {
        int64_t n, headFrom, headRows;
        bool f16;
        cudaGraphExec_t exec;  // null until the shape's second pass
    };
    std::vector<Graph> m_graphs;
    bool m_graphsOff = false;  // capture failed once, or VERDICT_CUDA_GRAPHS=0
};

CudaModel::~CudaModel() {
    cudaSetDevice(m_device);
    if (m_stream) cudaStreamSynchronize(m_stream);
    dropGraphs();
    m_gemm.reset();  // its handle before the stream it uses
    if (m_stream) cudaStreamDestroy(m_stream);
}

Result<void> CudaModel::check(const char* what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaStreamSynchronize(m_stream);
    if (e != cudaSuccess)
        return Error{deviceId() + ": " + what + " failed: " + cudaErrorText(e)
                     + " (the device context may be unusable: reopen the model)"};
    std::string passError = std::move(m_passError);
    m_passError.clear();
    if (std::string blasError = m_gemm.takeError(); !blasError.empty() && passError.empty()) passError = blasError;
    if (!passError.empty()) return Error{deviceId() + ": " + what + " failed: " + passError};
    return {};
}

Result<void> CudaModel::init() {
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
        cudaGetLastError();
        return Error{"no usable CUDA device for cuda:" + std::to_string(m_device) + " (" + cudaErrorText(e) + ")"};
    }
    if (m_device >= count)
        return Error{"no device cuda:" + std::to_string(m_device) + ": this machine has " + std::to_string(count)
                     + " CUDA device" + (count == 1 ? "" : "s") + " (see `verdict devices`)"};
    cudaDeviceProp prop{};
    if (cudaError_t e = cudaGetDeviceProperties(&prop, m_device); e != cudaSuccess)
        return Error{deviceId() + ": " + cudaErrorText(e)};
    m_name = prop.name;
    if (cudaError_t e = cudaSetDevice(m_device); e != cudaSuccess) return Error{deviceId() + ": " + cudaErrorText(e)};
    if (cudaError_t e = cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking); e != cudaSuccess)
        return Error{deviceId() + ": cannot create a stream: " + cudaErrorText(e)};
    if (auto r = m_gemm.init(m_device, m_ledger, m_stream, deviceId()); !r) return r.error();
    if (const char* g = std::getenv("VERDICT_CUDA_GRAPHS"); g && std::string(g) == "0") m_graphsOff = true;
    return upload();
}

// --- weights -------------------------------------------------------------------------------------

Result<void> CudaModel::upload() {
    const arch::ArchConfig& c = m_cfg;
    if (c.headDimK > kMaxHeadDim || c.headDimV > kMaxHeadDim)
        return Error{"head size " + std::to_string(std::max(c.headDimK, c.headDimV)) + " exceeds the CUDA backend's "
                     + std::to_string(kMaxHeadDim)};
    if (c.nExpert > kMaxExperts || c.nExpertUsed > kMaxUsedExperts)
        return Error{std::to_string(c.nExpert) + " experts (" + std::to_string(c.nExpertUsed)
                     + " used) exceed the CUDA backend's limits (" + std::to_string(kMaxExperts) + ", "
                     + std::to_string(kMaxUsedExperts) + ")"};

    // Plan: every tensor's place in one arena, checked first so that a bad type fails before any copy.
    struct Item { const void* host; uint64_t bytes; uint64_t offset; };
    std::vector<Item> items;
    uint64_t total = 0;
    auto place = [&](const void* host, uint64_t bytes) {
        items.push_back({host, bytes, total});
        total += alignUp(bytes);
        return items.size() - 1;
    };
    std::vector<std::pair<DeviceMatrix*, size_t>> matrices;
    std::vector<std::pair<const float**, size_t>> vectors;
    std::string bad;
    auto matrix = [&](DeviceMatrix& d, const arch::Weight& w) {
        if (!w.present()) return;
        auto bt = blockTypeFor(w.type);
        if (!bt) {
            if (bad.empty())
                bad = "tensor " + w.name + " has type " + std::string(tensor::typeName(w.type))
                    + ", which the CUDA backend cannot compute yet";
            return;
        }
        if (w.cols() % 32 != 0) {
            if (bad.empty())
                bad = "tensor " + w.name + " has rows of " + std::to_string(w.cols())
                    + " elements; the CUDA backend needs a multiple of 32";
            return;
        }
        d.type = *bt;
        d.cols = w.cols();
        d.rows = w.rows();
        d.nMat = w.ne[2];
        d.rowBytes = w.rowBytes;
        m_maxCols = std::max(m_maxCols, d.cols);
        m_maxRows = std::max(m_maxRows, d.rows);
        matrices.emplace_back(&d, place(w.data, d.rowBytes * static_cast<uint64_t>(d.rows * d.nMat)));
    };
    auto vec = [&](const float*& d, const arch::VecWeight& v) {
        if (v.present()) vectors.emplace_back(&d, place(v.data, sizeof(float) * static_cast<uint64_t>(v.n)));
    };

    const bool head = m_nLayers == c.nLayer;  // the output head runs here only without a partial offload
    matrix(m_tokEmbd, m_w.tokEmbd);
    if (head && !m_w.tiedOutput) matrix(m_output, m_w.output);
    if (head) vec(m_outputNorm, m_w.outputNorm);
    m_layers.resize(static_cast<size_t>(m_nLayers));
    for (size_t il = 0; il < m_layers.size(); ++il) {
        const arch::DecoderLayerWeights& L = m_w.layers[il];
        LayerMatrices& D = m_layers[il];
        matrix(D.wq, L.wq);
        matrix(D.wk, L.wk);
        matrix(D.wv, L.wv);
        matrix(D.wo, L.wo);
        matrix(D.gate, L.ffnGate);
        matrix(D.up, L.ffnUp);
        matrix(D.down, L.ffnDown);
        matrix(D.gateInp, L.ffnGateInp);
        matrix(D.gateExps, L.ffnGateExps);
        matrix(D.upExps, L.ffnUpExps);
        matrix(D.downExps, L.ffnDownExps);
        vec(D.attnNorm, L.attnNorm);
        vec(D.ffnNorm, L.ffnNorm);
        vec(D.bq, L.bq);
        vec(D.bk, L.bk);
        vec(D.bv, L.bv);
        vec(D.bo, L.bo);
        if (!m_variant.attnPost.empty()) vec(D.attnPost, *m_variant.attnPost[il]);
        if (!m_variant.ffnPost.empty()) vec(D.ffnPost, *m_variant.ffnPost[il]);
    }
    // The CPU backend's GELU table itself (f16 bits of gelu_tanh at every f16 input), so GeGLU
    // rounds exactly as cpu::gegluInPlace.
    std::vector<uint16_t> geluTable;
    size_t geluItem = 0;
    if (m_variant.geglu) {
        geluTable.resize(65536);
        for (uint32_t i = 0; i < 65536; ++i)
            geluTable[i] = tensor::fp32ToFp16(cpu::geluTanhF16(tensor::fp16ToFp32(static_cast<uint16_t>(i))));
        geluItem = place(geluTable.data(), geluTable.size() * sizeof(uint16_t));
    }
    if (!bad.empty()) return Error{bad};

    auto arena = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Weights, total, "the model's weights");
    if (!arena) return arena.error();
    m_weights = std::move(arena.value());
    for (const Item& it : items)
        if (cudaError_t e = cudaMemcpy(m_weights.data() + it.offset, it.host, it.bytes, cudaMemcpyHostToDevice);
            e != cudaSuccess)
            return Error{deviceId() + ": uploading the weights failed: " + cudaErrorText(e)};
    for (auto& [d, i] : matrices) d->data = m_weights.data() + items[i].offset;
    for (auto& [d, i] : vectors) *d = reinterpret_cast<const float*>(m_weights.data() + items[i].offset);
    if (m_variant.geglu) m_geluTable = reinterpret_cast<const uint16_t*>(m_weights.data() + items[geluItem].offset);
    if (m_w.tiedOutput) m_output = m_tokEmbd;
    return {};
}

Result<std::unique_ptr<gpu::GpuKv>> CudaModel::createKv(int64_t capacity, bool f16) {
    const AttentionShape a = attentionShape(0, f16);
    const uint64_t bytes = cacheLayerBytes(a, capacity) * static_cast<uint64_t>(m_nLayers);
    auto mem = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Kv, bytes,
                                      "a KV cache of " + std::to_string(capacity) + " positions");
    if (!mem) return mem.error();
    return std::unique_ptr<gpu::GpuKv>(std::make_unique<CudaKv>(std::move(mem.value()), capacity, f16));
}

gpu::VramUse CudaModel::vram() const {
    gpu::VramUse v;
    v.weights = m_ledger.bytes(VramKind::Weights);
    v.kv = m_ledger.bytes(VramKind::Kv);
    v.scratch = m_ledger.bytes(VramKind::Scratch);
    v.workspace = m_ledger.bytes(VramKind::Workspace);
    v.peak = m_ledger.peak();
    size_t freeB = 0, totalB = 0;
    if (cudaSetDevice(m_device) == cudaSuccess && cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) {
        v.deviceUsed = totalB - freeB;
        v.deviceTotal = totalB;
    } else {
        cudaGetLastError();
    }
    return v;
}

// --- activations ---------------------------------------------------------------------------------

Result<void> CudaModel::ensureScratch(int64_t rows) {
    if (rows <= m_s.rows) return {};
    // Geometric growth from 8 rows: a batch that grows a row at a time reallocates (a device-wide
    // synchronisation, and every graph dropped) only a few times.
    rows = std::max({rows, 2 * m_s.rows, int64_t{kMatvecMaxCols}});
    const arch::ArchConfig& c = m_cfg;
    const int64_t E = c.nEmbd, U = std::max<int64_t>(c.nExpertUsed, 1);
    const int64_t ff = std::max(c.nFf, c.nExpert > 0 ? c.nExpertUsed * c.nFfExp : 0);
    const AttentionShape a = attentionShape(0, false);
    struct Part { void* out; uint64_t bytes; };
    Scratch s;
    std::vector<Part> parts = {
        {&s.inpL, 4ull * rows * E},
        {&s.cur, 4ull * rows * E},
        {&s.q, 4ull * rows * c.nHead * c.headDimK},
        {&s.k, 4ull * rows * c.nHeadKv * c.headDimK},
        {&s.v, 4ull * rows * c.nHeadKv * c.headDimV},
        {&s.kqv, 4ull * rows * c.nHead * c.headDimV},
        {&s.attnOut, 4ull * rows * E},
        {&s.gate, 4ull * rows * ff},
        {&s.up, 4ull * rows * ff},
        {&s.ffnOut, 4ull * rows * E},
        {&s.router, 4ull * rows * std::max<int64_t>(c.nExpert, 1)},
        {&s.expertW, 4ull * rows * U},
        {&s.moeY, c.nExpert > 0 ? 4ull * rows * U * E : 0},
        {&s.moeX, c.nExpert > 0 && rows > kMatvecMaxCols ? 4ull * rows * U * E : 0},
        {&s.order, 4ull * rows * U},
        {&s.ropeTable, 4ull * rows * std::max(c.nRot, 2)},
        {&s.logits, m_nLayers == c.nLayer ? 4ull * std::min(rows, kLogitRows) * c.nVocab : 0},  // no head: none
        {&s.partials, 4ull * static_cast<uint64_t>(attentionPartialFloats(a, kMaxSplits))},
        {&s.tokens, 4ull * rows},
        {&s.experts, 4ull * rows * U},
        {&s.rowCache, sizeof(RowCache) * static_cast<uint64_t>(rows)},
        {&s.xHalf, 2ull * rows * U * m_maxCols},  // U: a grouped expert GEMM may take every pair
        {&s.wHalf, 2ull * static_cast<uint64_t>(std::min(Gemm::kTileElems, m_maxRows * m_maxCols))},
    };
    uint64_t total = 0;
    for (const Part& p : parts) total += alignUp(p.bytes);
    dropGraphs();     // they point into the old buffers
    m_s.mem.reset();  // free the old buffers first
    m_s.rows = 0;
    auto mem = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Scratch, total,
                                      "activations of " + std::to_string(rows) + "-token passes");
    if (!mem) return mem.error();
    s.mem = std::move(mem.value());
    uint64_t off = 0;
    for (const Part& p : parts) {
        *static_cast<uint8_t**>(p.out) = s.mem.data() + off;
        off += alignUp(p.bytes);
    }
    s.rows = rows;
    m_s = std::move(s);
    return {};
}

AttentionShape CudaModel::attentionShape(int layer, bool f16) const {
    const arch::ArchConfig& c = m_cfg;
    return AttentionShape{static_cast<int>(c.nHead), static_cast<int>(c.nHeadKv), static_cast<int>(c.headDimK),
                          static_cast<int>(c.headDimV), f16, c.kqScale(), c.attnSoftCap,
                          static_cast<int>(c.windowOf(layer)), layer};
}

// y [nTok][W.rows] = x [nTok][W.cols] W^T (+ bias), the kernel chosen by gemm.h.
void CudaModel::project(const DeviceMatrix& w, const float* bias, const float* x, int64_t nTok, float* y) {
    m_gemm.product(w, x, w.cols, nTok, y, w.rows, m_s.xHalf, m_s.wHalf);
    if (bias) addBias(y, bias, nTok, w.rows, m_stream);
}

// --- the forward pass ----------------------------------------------------------------------------

void CudaModel::enqueuePass(int64_t n, bool f16, int nSplit, int64_t headFrom, int64_t headRows) {
    const arch::ArchConfig& c = m_cfg;
    const Scratch& s = m_s;
    const int64_t E = c.nEmbd, F = c.nFf, X = c.nExpert, U = c.nExpertUsed, FX = c.nFfExp;
    const bool neox = c.ropeMode == cpu::RopeMode::Neox;
    embedRows(m_tokEmbd, s.tokens, n, s.inpL, m_stream);
    if (m_variant.embedScale != 0.0f) scale(s.inpL, m_variant.embedScale, n * E, m_stream);
    for (int il = 0; il < static_cast<int>(m_nLayers); ++il) {
        const LayerMatrices& L = m_layers[static_cast<size_t>(il)];
        const AttentionShape a = attentionShape(il, f16);
        rmsNorm(s.inpL, L.attnNorm, s.cur, n, E, c.rmsEps, m_stream);
        project(L.wq, L.bq, s.cur, n, s.q);
        project(L.wk, L.bk, s.cur, n, s.k);
        project(L.wv, L.bv, s.cur, n, s.v);
        rope(s.q, n, c.nHead, c.headDimK, c.nRot, neox, s.ropeTable, m_stream);
        rope(s.k, n, c.nHeadKv, c.headDimK, c.nRot, neox, s.ropeTable, m_stream);
        storeKv(a, s.rowCache, n, s.k, s.v, m_stream);
        attention(a, s.rowCache, n, nSplit, s.q, s.kqv, s.partials, m_stream);
        project(L.wo, L.bo, s.kqv, n, s.attnOut);
        if (L.attnPost) rmsNorm(s.attnOut, L.attnPost, s.attnOut, n, E, c.rmsEps, m_stream);
        add(s.attnOut, s.inpL, s.inpL, n * E, m_stream);  // ffn_inp
        rmsNorm(s.inpL, L.ffnNorm, s.cur, n, E, c.rmsEps, m_stream);
        if (X == 0) {
            project(L.up, nullptr, s.cur, n, s.up);
            project(L.gate, nullptr, s.cur, n, s.gate);
            if (m_geluTable)
                geglu(s.gate, s.up, n * F, m_geluTable, m_stream);
            else
                swiglu(s.gate, s.up, n * F, m_stream);
            project(L.down, nullptr, s.gate, n, s.ffnOut);
            if (L.ffnPost) rmsNorm(s.ffnOut, L.ffnPost, s.ffnOut, n, E, c.rmsEps, m_stream);
        } else {
            project(L.gateInp, nullptr, s.cur, n, s.router);
            routeSoftmaxTopK(s.router, n, static_cast<int>(X), static_cast<int>(U), s.experts, s.expertW, m_stream);
            if (n <= kMatvecMaxCols) {
                // Decode: each (token, slot) reads its expert's rows in place.
                expertMatvec(L.upExps, s.experts, n * U, s.cur, E, U, s.up, FX, m_stream);
                expertMatvec(L.gateExps, s.experts, n * U, s.cur, E, U, s.gate, FX, m_stream);
                swiglu(s.gate, s.up, n * U * FX, m_stream);
                expertMatvec(L.downExps, s.experts, n * U, s.gate, FX, 1, s.moeY, E, m_stream);
            } else {
                groupedExperts(L, n);
            }
            combineExperts(s.moeY, s.expertW, n, static_cast<int>(U), E, s.ffnOut, m_stream);
        }
        add(s.ffnOut, s.inpL, s.inpL, n * E, m_stream);  // l_out
    }
    if (headRows > 0) enqueueHead(headFrom, headRows);
}

// A prefill's MoE FFN: the (token, slot) pairs sorted by expert on the host (one small copy of the
// routing), each expert's gate / up / down products as one GEMM over its rows, so every expert's
// weights are read once per pass rather than once per pair. Results land in s.moeY by pair.
void CudaModel::groupedExperts(const LayerMatrices& L, int64_t n) {
    const arch::ArchConfig& c = m_cfg;
    const Scratch& s = m_s;
    const int64_t E = c.nEmbd, X = c.nExpert, U = c.nExpertUsed, FX = c.nFfExp, P = n * U;
    m_hostExperts.resize(static_cast<size_t>(P));
    cudaMemcpyAsync(m_hostExperts.data(), s.experts, sizeof(int32_t) * m_hostExperts.size(), cudaMemcpyDeviceToHost,
                    m_stream);
    cudaStreamSynchronize(m_stream);
    std::vector<int64_t> begin;
    if (int32_t bad = 0; !sortPairsByExpert(m_hostExperts, X, begin, m_hostOrder, bad)) {
        if (m_passError.empty()) m_passError = "expert id " + std::to_string(bad) + " outside the model's experts";
        return;
    }
    cudaMemcpyAsync(s.order, m_hostOrder.data(), sizeof(int32_t) * m_hostOrder.size(), cudaMemcpyHostToDevice, m_stream);
    gatherRows(s.cur, E, s.order, P, U, s.moeX, m_stream);
    for (int64_t e = 0; e < X; ++e) {
        const int64_t b0 = begin[static_cast<size_t>(e)], rows = begin[static_cast<size_t>(e) + 1] - b0;
        if (rows == 0) continue;
        project(L.upExps.expert(e), nullptr, s.moeX + b0 * E, rows, s.up + b0 * FX);
        project(L.gateExps.expert(e), nullptr, s.moeX + b0 * E, rows, s.gate + b0 * FX);
    }
    swiglu(s.gate, s.up, P * FX, m_stream);
    for (int64_t e = 0; e < X; ++e) {  // the outputs overwrite the grouped inputs
        const int64_t b0 = begin[static_cast<size_t>(e)], rows = begin[static_cast<size_t>(e) + 1] - b0;
        if (rows > 0) project(L.downExps.expert(e), nullptr, s.gate + b0 * FX, rows, s.moeX + b0 * E);
    }
    scatterRows(s.moeX, E, s.order, P, s.moeY, m_stream);
}

void CudaModel::enqueueHead(int64_t rowFrom, int64_t rows) {
    const arch::ArchConfig& c = m_cfg;
    rmsNorm(m_s.inpL + rowFrom * c.nEmbd, m_outputNorm, m_s.cur, rows, c.nEmbd, c.rmsEps, m_stream);
    project(m_output, nullptr, m_s.cur, rows, m_s.logits);
    if (c.finalSoftCap > 0.0f) softCap(m_s.logits, rows * c.nVocab, c.finalSoftCap, m_stream);
}

bool CudaModel::launchGraph(int64_t n, bool f16, int64_t headFrom, int64_t headRows) {
    if (m_graphsOff) return false;
    for (Graph& g : m_graphs) {
        if (g.n != n || g.f16 != f16 || g.headFrom != headFrom || g.headRows != headRows) continue;
        if (!g.exec) {  // the shape's first pass ran eagerly (modules loaded, inputs checked): capture now
            g.exec = capture(n, f16, headFrom, headRows);
            if (!g.exec) return false;
        }
        if (cudaGraphLaunch(g.exec, m_stream) == cudaSuccess) return true;
        cudaGetLastError();  // a launch failure leaves nothing queued: the caller runs the pass eagerly
        return false;
    }
    m_graphs.push_back({n, headFrom, headRows, f16, nullptr});
    return false;
}

cudaGraphExec_t CudaModel::capture(int64_t n, bool f16, int64_t headFrom, int64_t headRows) {
    // A fixed split serves every position: rows shorter than the split leave blocks idle.
    const int nSplit = attentionSplits(attentionShape(0, f16), n, int64_t{1} << 30, kMaxSplits);
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    bool ok = cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    if (ok) {
        enqueuePass(n, f16, nSplit, headFrom, headRows);
        ok = cudaStreamEndCapture(m_stream, &graph) == cudaSuccess && m_gemm.takeError().empty();
    }
    ok = ok && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (graph) cudaGraphDestroy(graph);
    if (!ok) {
        // Not fatal: this pass and the following ones run without graphs (m_graphsOff).
        cudaGetLastError();
        if (exec) cudaGraphExecDestroy(exec);
        m_graphsOff = true;
        return nullptr;
    }
    return exec;
}

void CudaModel::dropGraphs() {
    for (const Graph& g : m_graphs)
        if (g.exec) cudaGraphExecDestroy(g.exec);
    m_graphs.clear();
}

Result<void> CudaModel::forward(const gpu::GpuBatch& b) {
    std::lock_guard lock(m_mutex);
    const arch::ArchConfig& c = m_cfg;
    const int64_t n = b.nTok, E = c.nEmbd;
    if (n <= 0) return Error{"forward: no tokens"};
    if (n > 65535) return Error{"forward: " + std::to_string(n) + " rows in one pass exceed the CUDA backend's 65535"};
    if (m_nLayers < c.nLayer && b.logits && !b.hidden)
        return Error{"forward: a partially offloaded model hands over its residual stream, it has no logits"};
    if (b.logits && (b.logitsFrom < 0 || b.logitsFrom > n))
        return Error{"forward: logitsFrom " + std::to_string(b.logitsFrom) + " outside [0, " + std::to_string(n) + "]"};
    if (cudaError_t e = cudaSetDevice(m_device); e != cudaSuccess) return Error{deviceId() + ": " + cudaErrorText(e)};
    if (auto r = ensureScratch(n); !r) return r.error();
    const Scratch& s = m_s;

    // Rows: their caches and positions, and the RoPE angles computed by the CPU backend's own code.
    bool f16 = false;
    int64_t maxLen = 0;
    m_hostRows.resize(static_cast<size_t>(n));
    for (int64_t t = 0; t < n; ++t) {
        auto* kv = static_cast<CudaKv*>(b.caches[t]);
        if (b.positions[t] < 0 || b.positions[t] >= kv->capacity())
            return Error{"forward: position " + std::to_string(b.positions[t]) + " of row " + std::to_string(t)
                         + " is outside its cache of " + std::to_string(kv->capacity()) + " positions"};
        if (t > 0 && kv->f16() != f16) return Error{"forward: a pass cannot mix f16 and f32 KV caches"};
        f16 = kv->f16();
        m_hostRows[static_cast<size_t>(t)] = {kv->base(), static_cast<int32_t>(kv->capacity()),
                                              static_cast<int32_t>(b.positions[t])};
        maxLen = std::max(maxLen, b.positions[t] + 1);
    }
    if (c.nRot > 0) {
        // Each row's frequency factors for its own sequence (phi3's LongRoPE picks them by the
        // sequence's context), the angles by the CPU backend's ropeTable.
        m_hostTable.resize(static_cast<size_t>(n * c.nRot));
        for (int64_t t = 0; t < n; ++t) {
            const arch::VecWeight* f = m_arch.ropeFactors(m_archWeights, c, b.caches[t]->capacity());
            cpu::ropeTable(c.ropeParams(f ? f->data : nullptr), static_cast<int32_t>(b.positions[t]),
                           m_hostTable.data() + t * c.nRot);
        }
    }
    // The pass's inputs; a failed copy is reported here, before a graph launch could clear its error.
    cudaError_t copied = cudaMemcpyAsync(s.tokens, b.tokens, sizeof(int32_t) * static_cast<size_t>(n),
                                         cudaMemcpyHostToDevice, m_stream);
    if (copied == cudaSuccess)
        copied = cudaMemcpyAsync(s.rowCache, m_hostRows.data(), sizeof(RowCache) * m_hostRows.size(),
                                 cudaMemcpyHostToDevice, m_stream);
    if (copied == cudaSuccess && c.nRot > 0)
        copied = cudaMemcpyAsync(s.ropeTable, m_hostTable.data(), sizeof(float) * m_hostTable.size(),
                                 cudaMemcpyHostToDevice, m_stream);
    if (copied != cudaSuccess) return Error{deviceId() + ": copying a pass's inputs failed: " + cudaErrorText(copied)};

    const bool wantHead = !b.hidden && b.logits && m_nLayers == c.nLayer;
    const int64_t V = c.nVocab;
    if (n <= kMatvecMaxCols && launchGraph(n, f16, wantHead ? b.logitsFrom : 0, wantHead ? n - b.logitsFrom : 0)) {
        if (wantHead)
            cudaMemcpyAsync(b.logits, s.logits, sizeof(float) * static_cast<size_t>((n - b.logitsFrom) * V),
                            cudaMemcpyDeviceToHost, m_stream);
    } else {
        const AttentionShape a0 = attentionShape(0, f16);
        enqueuePass(n, f16, attentionSplits(a0, n, maxLen, kMaxSplits), 0, 0);
        if (wantHead) {
            for (int64_t r0 = b.logitsFrom; r0 < n; r0 += kLogitRows) {
                const int64_t rows = std::min(kLogitRows, n - r0);
                enqueueHead(r0, rows);
                // Into pageable memory: returns when the copy is done, so s.logits is free for the next chunk.
                cudaMemcpyAsync(b.logits + (r0 - b.logitsFrom) * V, s.logits,
                                sizeof(float) * static_cast<size_t>(rows * V), cudaMemcpyDeviceToHost, m_stream);
            }
        }
    }
    if (b.hidden)
        cudaMemcpyAsync(b.hidden, s.inpL, sizeof(float) * static_cast<size_t>(n * E), cudaMemcpyDeviceToHost, m_stream);
    return check("a forward pass");
}

}  // namespace

Result<void> checkModelPass(const gpu::GpuModelSource& m) {
    if (!m.arch.decoderWeights || !m.arch.ropeFactors)
        return Error{"architecture '" + m.cfg.arch
                     + "' has no CUDA pass of its own (llama, mistral, mixtral, qwen2, phi3, gemma2 have)"};
    const arch::DecoderVariant variant = m.arch.decoderVariant ? m.arch.decoderVariant(m.weights) : arch::DecoderVariant{};
    if (variant.geglu && m.cfg.nExpert > 0) return Error{"GeGLU experts have no CUDA kernels"};
    for (const auto& L : m.arch.decoderWeights(m.weights)->layers)
        if (L.qNorm.present() || L.kNorm.present())
            return Error{"architecture '" + m.cfg.arch + "' normalises each head's query and key (attn_q_norm / attn_k_norm), "
                         "which the CUDA pass does not do"};
    return {};
}

Result<std::unique_ptr<gpu::GpuModel>> openCudaModel(const gpu::GpuModelSource& m, int device, int64_t layers) {
    if (auto r = checkModelPass(m); !r) return r.error();
    arch::DecoderVariant variant = m.arch.decoderVariant ? m.arch.decoderVariant(m.weights) : arch::DecoderVariant{};
    auto model = std::make_unique<CudaModel>(m, *m.arch.decoderWeights(m.weights), std::move(variant), device,
                                             layers);
    if (auto r = model->init(); !r) return r.error();
    return std::unique_ptr<gpu::GpuModel>(std::move(model));
}

}  // namespace verdict::cuda

namespace verdict::gpu {

Result<std::unique_ptr<GpuModel>> openGpuModel(const GpuModelSource& model, int device, int64_t layers) {
    return cuda::openCudaModel(model, device, layers);
}

Result<void> checkGpuModelPass(const GpuModelSource& model) { return cuda::checkModelPass(model); }

}  // namespace verdict::gpu
