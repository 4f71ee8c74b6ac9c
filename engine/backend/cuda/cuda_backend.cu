#include "backend/cuda/cuda_backend.h"

#include "backend/cpu/ops_activation.h"
#include "backend/cuda/block_type.h"
#include "backend/cuda/cuda_memory.h"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/expert_order.h"
#include "backend/cuda/gemm.h"
#include "tensor/half.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace verdict::cuda {

namespace {

constexpr int kMaxSplits = 32;     // attention position splits (decode)
constexpr int kMaxHeadDim = 256;   // ops_attention.cu
constexpr int kMaxExperts = 512;   // ops_moe.cu
constexpr int kMaxUsedExperts = 32;
// A routed expert product of more pairs than this (a prefill) is grouped by expert: each used
// expert's matrix multiplies its rows as one product (gemm.h), so it is read once per pass rather
// than once per pair. Fewer pairs (decode) read their experts' rows in place (expertMatvec).
constexpr int64_t kGroupMinPairs = kMmaMaxCols;
// Uploads up to this size go through the pinned staging buffer (queued, no wait); larger ones
// (weights) are copied synchronously.
constexpr uint64_t kStageMaxBytes = 4ull << 20;
constexpr uint64_t kStageAlign = 256;
constexpr size_t kMaxGraphs = 8;  // executable graphs kept (the shapes of recent decode passes)

uint64_t stageAlign(uint64_t n) { return (n + kStageAlign - 1) / kStageAlign * kStageAlign; }

class CudaBackend final : public backend::Backend {
public:
    explicit CudaBackend(int device) : m_device(device) {}
    ~CudaBackend() override {
        cudaSetDevice(m_device);
        if (m_capturing) {  // a pass abandoned while recording: drop the recording
            cudaGraph_t g = nullptr;
            cudaStreamEndCapture(m_stream, &g);
            if (g) cudaGraphDestroy(g);
            cudaGetLastError();
        }
        if (m_stream) cudaStreamSynchronize(m_stream);
        for (const GraphExec& g : m_graphs) cudaGraphExecDestroy(g.exec);
        m_gemm.reset();
        m_buffers.clear();
        m_rows = {};
        m_xHalf = {};
        m_wHalf = {};
        m_xScale = {};
        m_groupX = {};
        m_groupY = {};
        m_order = {};
        if (m_pinned) cudaFreeHost(m_pinned);
        m_partials = {};
        m_mlaQ = {};
        m_mlaO = {};
        m_gelu = {};
        if (m_stream) cudaStreamDestroy(m_stream);
    }

    Result<void> init() {
        int count = 0;
        if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
            cudaGetLastError();
            return Error{"no usable CUDA device for cuda:" + std::to_string(m_device) + " (" + cudaErrorText(e) + ")"};
        }
        if (m_device < 0 || m_device >= count)
            return Error{"no device cuda:" + std::to_string(m_device) + ": this machine has " + std::to_string(count)
                         + " CUDA device" + (count == 1 ? "" : "s")};
        cudaDeviceProp prop{};
        if (cudaError_t e = cudaGetDeviceProperties(&prop, m_device); e != cudaSuccess) return fail(e);
        m_name = prop.name;
        if (cudaError_t e = cudaSetDevice(m_device); e != cudaSuccess) return fail(e);
        if (cudaError_t e = cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking); e != cudaSuccess) return fail(e);
        if (auto r = m_gemm.init(m_device, m_ledger, m_stream, "cuda:" + std::to_string(m_device)); !r) return r.error();
        if (const char* g = std::getenv("VERDICT_CUDA_GRAPHS"); g && std::string(g) == "0") m_graphsOff = true;
        // ggml's f16 GELU table, the CPU's own values (cpu::geluTanhF16), for geglu.
        std::vector<uint16_t> table(65536);
        for (size_t i = 0; i < table.size(); ++i)
            table[i] = tensor::fp32ToFp16(cpu::geluTanhF16(tensor::fp16ToFp32(static_cast<uint16_t>(i))));
        auto g = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Weights, table.size() * 2, "the GELU table");
        if (!g) return g.error();
        m_gelu = std::move(g.value());
        // On m_stream (non-blocking: a copy on the default stream would not be ordered before its ops),
        // and waited for while `table` lives.
        note(cudaMemcpyAsync(m_gelu.data(), table.data(), table.size() * 2, cudaMemcpyHostToDevice, m_stream));
        return synchronize();
    }

    std::string name() const override { return "cuda:" + std::to_string(m_device) + " (" + m_name + ")"; }
    bool supports(tensor::TensorType type) const override { return blockTypeFor(type).has_value(); }
    bool supports(const backend::Attention& a) const override {
        return a.dimK <= kMaxHeadDim && a.dimV <= kMaxHeadDim;
    }

    bool supports(const backend::LatentAttention& a) const override {
        return a.rank <= kMlaMaxRank && a.dRope <= kMlaMaxRope && a.rank % 32 == 0;
    }
    bool supportsExperts(int64_t nExpert, int64_t nUsed) const override {
        return nExpert <= kMaxExperts && nUsed <= kMaxUsedExperts;
    }

    Result<void*> allocate(uint64_t bytes, std::string_view what,
                           backend::Purpose purpose = backend::Purpose::Activations) override {
        flush();  // no allocation while a pass is being recorded
        cudaSetDevice(m_device);  // the calling thread's device (sessions open on threads of their own)
        forgetExpertOrder();
        const VramKind kind = purpose == backend::Purpose::Weights   ? VramKind::Weights
                              : purpose == backend::Purpose::KvCache ? VramKind::Kv
                                                                     : VramKind::Scratch;
        auto b = DeviceBuffer::allocate(m_device, m_ledger, kind, std::max<uint64_t>(bytes, 1), std::string(what));
        if (!b) return b.error();
        void* p = b.value().data();
        m_buffers.emplace(p, std::move(b.value()));
        return p;
    }
    void release(void* p) override {
        idle();  // no op still reading it
        forgetExpertOrder();
        m_buffers.erase(p);
    }
    // Small uploads (a pass's token ids, RoPE tables) are copied into pinned staging and queued, so
    // the ops after them do not wait; large ones (weights) are copied before this returns, as the
    // host buffer may go away then.
    void upload(void* dst, const void* host, uint64_t bytes) override {
        if (bytes == 0) return;
        forgetExpertOrder();  // the ids may be what changes
        if (const uint8_t* staged = stage(host, bytes)) {
            note(cudaMemcpyAsync(dst, staged, bytes, cudaMemcpyHostToDevice, m_stream));
            return;
        }
        flush();  // pageable memory: not a copy a graph can hold
        note(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, m_stream));
        idle();
    }
    void download(void* host, const void* src, uint64_t bytes) override {
        flush();
        note(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, m_stream));
        idle();
    }
    // Decode-sized passes are recorded as CUDA graphs: from here the stream is captured, the ops
    // that follow recorded rather than run, until the pass first needs results or the device idle
    // (its logits' download, synchronize, a buffer growing), where the recording is launched as one
    // graph (flush): a decode step's few hundred kernels start back to back instead of one launch
    // at a time. Every recording is a fresh capture of the pass as it is, so it cannot replay stale
    // arguments; the executable graph of an earlier recording with as many nodes is updated in
    // place (cudaGraphExecUpdate) when the topology is the same, else one is instantiated.
    // VERDICT_CUDA_GRAPHS=0 turns it off.
    void beginPass(int64_t rows) override {
        if (m_capturing) return;
        cudaSetDevice(m_device);  // every pass's first op: the thread that runs it works on this device
        if (m_graphsOff || rows > kMatvecMaxCols) return;
        if (cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();
            m_graphsOff = true;  // not fatal: passes run op by op
            return;
        }
        m_capturing = true;
    }
    backend::MemoryStats memory() const override {
        backend::MemoryStats m;
        m.weights = m_ledger.bytes(VramKind::Weights);
        m.kvCache = m_ledger.bytes(VramKind::Kv);
        m.activations = m_ledger.bytes(VramKind::Scratch);
        m.workspace = m_ledger.bytes(VramKind::Workspace);
        m.peak = m_ledger.peak();
        size_t freeBytes = 0, total = 0;
        cudaSetDevice(m_device);
        if (cudaMemGetInfo(&freeBytes, &total) == cudaSuccess) {
            m.deviceUsed = total - freeBytes;
            m.deviceTotal = total;
        } else {
            cudaGetLastError();
        }
        return m;
    }
    void copy(void* dst, const void* src, uint64_t bytes) override {
        forgetExpertOrder();
        note(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
    }
    Result<void> synchronize() override {
        flush();
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(m_stream);
        if (e == cudaSuccess) resetStaging();
        if (e == cudaSuccess && m_firstError != cudaSuccess) e = m_firstError;
        m_firstError = cudaSuccess;
        if (std::string blasError = m_gemm.takeError(); !blasError.empty() && m_opError.empty())
            m_opError = "cuBLAS: " + blasError;
        if (!m_opError.empty()) {
            std::string msg = name() + ": " + m_opError;
            m_opError.clear();
            return Error{msg};
        }
        if (e != cudaSuccess) return fail(e);
        return {};
    }

    void embedRows(const backend::Matrix& w, const int32_t* tokens, int64_t nTok, float* out) override {
        if (auto d = matrix(w); d && nTok > 0 && w.cols > 0) cuda::embedRows(*d, tokens, nTok, out, m_stream);
        launched("embedRows");
    }
    void matmul(const backend::Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) override {
        if (auto d = matrix(w); d && nTok > 0 && w.rows > 0 && alignedRows(x)) product(*d, x, w.cols, nTok, y, ldy);
        launched("matmul");
    }
    // Routed products of up to kGroupMinPairs pairs read each pair's expert rows in place
    // (expertMatvec); more are grouped by expert (groupedProduct); dense ones run as matmul.
    void expertMatmuls(const backend::ExpertProduct* products, int count) override {
        for (int i = 0; i < count; ++i) {
            const backend::ExpertProduct& p = products[i];
            if (p.nPairs <= 0 || p.w.rows <= 0) continue;
            if (!p.experts && p.xDiv == 1) {
                matmul(p.w, p.x, p.nPairs, p.y, p.w.rows);
            } else if (!p.experts) {
                if (m_opError.empty()) m_opError = "a dense expert product with repeated input rows is not implemented";
            } else if (auto d = matrix(p.w); d && alignedRows(p.x)) {
                if (p.nPairs > kGroupMinPairs)
                    groupedProduct(p, *d);
                else
                    expertMatvec(*d, p.experts, p.nPairs, p.x, p.w.cols, p.xDiv, p.y, p.w.rows, m_stream);
            }
        }
        launched("expertMatmuls");
    }
    // Empty ops do nothing, as on the CPU (a kernel launched over zero blocks is a launch error).
    void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) override {
        if (rows <= 0 || n <= 0) return;
        cuda::rmsNorm(x, w, y, rows, n, eps, m_stream);
        launched("rmsNorm");
    }
    void add(const float* a, const float* b, float* y, int64_t n) override {
        if (n <= 0) return;
        cuda::add(a, b, y, n, m_stream);
        launched("add");
    }
    void addBias(float* y, const float* bias, int64_t rows, int64_t n) override {
        if (rows <= 0 || n <= 0) return;
        cuda::addBias(y, bias, rows, n, m_stream);
        launched("addBias");
    }
    void scale(float* x, float factor, int64_t n) override {
        if (n <= 0) return;
        cuda::scale(x, factor, n, m_stream);
        launched("scale");
    }
    void softCap(float* x, int64_t n, float cap) override {
        if (n <= 0) return;
        cuda::softCap(x, n, cap, m_stream);
        launched("softCap");
    }
    void swiglu(float* gate, const float* up, int64_t n) override {
        if (n <= 0) return;
        cuda::swiglu(gate, up, n, m_stream);
        launched("swiglu");
    }
    void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) override {
        if (n <= 0) return;
        cuda::swigluOai(gate, up, n, alpha, limit, m_stream);
        launched("swigluOai");
    }
    void geglu(float* gate, const float* up, int64_t n) override {
        if (n <= 0) return;
        cuda::geglu(gate, up, n, reinterpret_cast<const uint16_t*>(m_gelu.data()), m_stream);
        launched("geglu");
    }
    void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
              const float* table) override {
        if (nTok <= 0 || nHead <= 0 || nRot <= 0) return;
        cuda::rope(x, nTok, nHead, headDim, nRot, neox, table, m_stream);
        launched("rope");
    }
    void storeKv(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* k,
                 const float* v) override {
        if (nTok <= 0) return;
        const RowCache* rows = uploadRows(hostRows, nTok);
        if (rows) cuda::storeKv(shape(a), rows, nTok, k, v, m_stream);
        launched("storeKv");
    }
    void attention(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* q,
                   float* out) override {
        if (!supports(a)) {
            if (m_opError.empty()) m_opError = "attention with heads over 256 elements is not implemented";
            return;
        }
        int64_t maxLen = 0;
        for (int64_t t = 0; t < nTok; ++t) {  // positions a row attends to: a sliding window's at most
            const int64_t len = hostRows[t].pos + 1;
            maxLen = std::max<int64_t>(maxLen, a.window > 0 ? std::min<int64_t>(len, a.window) : len);
        }
        const AttentionShape s = shape(a);
        const int nSplit = attentionSplits(s, nTok, maxLen, kMaxSplits);
        if (!grow(m_partials, 4ull * static_cast<uint64_t>(attentionPartialFloats(s, kMaxSplits)), "attention partials"))
            return;
        // Growing a buffer waits for the stream and recycles the staging: tables are uploaded last.
        const RowCache* rows = uploadRows(hostRows, nTok);
        if (!rows) return;
        cuda::attention(s, rows, nTok, nSplit, q, out, reinterpret_cast<float*>(m_partials.data()), m_stream);
        launched("attention");
    }
    // ops_mla.cu: absorb and up-project read attn_kv_b's blocks in place.
    void latentAttention(const backend::LatentAttention& a, const backend::RowCache* hostRows, int64_t nTok,
                         const float* q, float* out) override {
        if (nTok <= 0) return;
        if (!supports(a)) {
            if (m_opError.empty()) m_opError = "latent attention of rank over 512 or a rope part over 64 is not implemented";
            return;
        }
        auto w = matrix(a.kvB);
        if (!w) return;
        const uint64_t latBytes = 4ull * static_cast<uint64_t>(nTok * a.nHead * a.rank);
        if (!grow(m_mlaQ, latBytes, "latent attention queries") || !grow(m_mlaO, latBytes, "latent attention outputs"))
            return;
        const RowCache* rows = uploadRows(hostRows, nTok);  // after the growth (see attention)
        if (!rows) return;
        const MlaShape shape{a.nHead, a.dNope, a.dRope, a.dV, a.rank, a.f16, a.scale};
        float* qLat = reinterpret_cast<float*>(m_mlaQ.data());
        float* oLat = reinterpret_cast<float*>(m_mlaO.data());
        mlaAbsorb(*w, q, nTok, shape, qLat, m_stream);
        mlaAttention(rows, nTok, shape, q, qLat, oLat, m_stream);
        mlaUpProject(*w, oLat, nTok, shape, out, m_stream);
        launched("latentAttention");
    }
    // The CPU's rounding (backend/cpu/act_quant.h), so that a value cached now sums later as the
    // CPU's product would: the op is defined by the CPU's pairing of weight and activation types.
    void roundAsMatmulInput(tensor::TensorType type, float* x, int64_t rows, int64_t K) override {
        using tensor::TensorType;
        ActRounding r = ActRounding::Q8K;  // K-quants, IQ4_XS, the lattice i-quants, TQ
        switch (type) {
            case TensorType::F32: r = ActRounding::None; break;
            case TensorType::F16: r = ActRounding::F16; break;
            case TensorType::BF16: r = ActRounding::BF16; break;
            case TensorType::Q4_0: case TensorType::Q4_1: case TensorType::Q5_0: case TensorType::Q5_1:
            case TensorType::Q8_0: case TensorType::IQ4_NL: case TensorType::MXFP4: r = ActRounding::Q8; break;
            default: break;
        }
        cuda::roundAsMatmulInput(r, x, rows * K, m_stream);
        launched("roundAsMatmulInput");
    }
    void copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) override {
        forgetExpertOrder();
        if (rows > 0 && cols > 0)
            note(cudaMemcpy2DAsync(dst, static_cast<size_t>(ldd) * 4, src, static_cast<size_t>(lds) * 4,
                                   static_cast<size_t>(cols) * 4, static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                                   m_stream));
    }
    void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override {
        if (!beginRouting(nExpert, U)) return;
        if (nTok > 0) cuda::routeSoftmaxTopK(logits, nTok, nExpert, U, experts, weights, m_stream);
        launched("routeSoftmaxTopK");
    }
    void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override {
        if (!beginRouting(nExpert, U)) return;
        if (nTok > 0) cuda::routeTopKSoftmax(logits, nTok, nExpert, U, experts, weights, m_stream);
        launched("routeTopKSoftmax");
    }
    void routeGrouped(const backend::GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U,
                      float* selection, int32_t* experts, float* weights) override {
        if (!beginRouting(nExpert, U)) return;
        if (nTok > 0)
            cuda::routeGrouped(r.sigmoid, r.selectionBias, r.nGroups, r.nGroupsUsed, r.normalize, r.scale, scores,
                               nTok, nExpert, U, selection, experts, weights, m_stream);
        launched("routeGrouped");
    }
    void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) override {
        if (nPairs <= 0 || n <= 0) return;
        cuda::addExpertBias(y, bias, experts, nPairs, n, m_stream);
        launched("addExpertBias");
    }
    void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) override {
        if (nTok <= 0 || n <= 0) return;
        cuda::combineExperts(y, weights, nTok, U, n, out, m_stream);
        launched("combineExperts");
    }

private:
    Error fail(cudaError_t e) const { return Error{"cuda:" + std::to_string(m_device) + ": " + cudaErrorText(e)}; }
    // A launch that failed (a bad configuration, no kernel image for this GPU) fails the pass at
    // synchronize() with the op's name; errors of the kernels' execution surface there as before.
    void launched(const char* op) {
        const cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess || !m_opError.empty()) return;
        const bool atLaunch = e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue
                              || e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction
                              || e == cudaErrorLaunchOutOfResources;
        m_opError = atLaunch ? std::string(op) + ": " + cudaErrorText(e)
                             : cudaErrorText(e) + " (seen at " + op + "'s launch: a kernel before it may have failed)";
    }
    void note(cudaError_t e) {
        if (e != cudaSuccess && m_firstError == cudaSuccess) m_firstError = e;
    }

    // Every router op: within the kernels' limits (supportsExperts, refused at open too), and the
    // expert ids about to change, so groupedProduct sorts them again.
    bool beginRouting(int nExpert, int U) {
        if (!supportsExperts(nExpert, U)) {
            if (m_opError.empty())
                m_opError = std::to_string(nExpert) + " experts (" + std::to_string(U) + " used) exceed the limits";
            return false;
        }
        forgetExpertOrder();
        return true;
    }

    // The pairs' expert order (sortPairs) is kept while the ids cannot have changed: every routing op,
    // upload, copy, allocation and release (any of which may rewrite or reuse the ids' memory) drops it.
    void forgetExpertOrder() { m_sortedIds = nullptr; }

    // Waits for the stream; the staging buffers are free again.
    void idle() {
        flush();
        note(cudaStreamSynchronize(m_stream));
        resetStaging();
    }

    // Ends a recording (beginPass) and launches it.
    void flush() {
        if (!m_capturing) return;
        m_capturing = false;
        cudaGraph_t graph = nullptr;
        const cudaError_t e = cudaStreamEndCapture(m_stream, &graph);
        if (e != cudaSuccess || !graph) {
            cudaGetLastError();
            if (graph) cudaGraphDestroy(graph);
            graphFailed(std::string("recording the pass as a CUDA graph failed (") + cudaErrorText(e) + ")");
            return;
        }
        size_t nodes = 0;
        cudaGraphGetNodes(graph, nullptr, &nodes);
        cudaGraphExec_t exec = nodes > 0 ? execFor(graph, nodes) : nullptr;
        cudaGraphDestroy(graph);
        if (nodes == 0) return;
        if (!exec) {
            graphFailed("instantiating the pass's CUDA graph failed");
            return;
        }
        if (cudaError_t l = cudaGraphLaunch(exec, m_stream); l != cudaSuccess) {
            cudaGetLastError();
            graphFailed(std::string("launching the pass's CUDA graph failed (") + cudaErrorText(l) + ")");
        }
    }
    // The recorded ops did not run: the pass fails (its caller keeps what it had, and may run it
    // again), and passes run op by op from now on.
    void graphFailed(const std::string& why) {
        m_graphsOff = true;
        if (m_opError.empty()) m_opError = why + "; the pass did not run (CUDA graphs are off from now on)";
    }
    // An executable graph for `graph`: the one of as many nodes updated in place, or a new one (the
    // least recently used dropped beyond kMaxGraphs); null when instantiation fails.
    cudaGraphExec_t execFor(cudaGraph_t graph, size_t nodes) {
        GraphExec* slot = nullptr;
        for (GraphExec& g : m_graphs)
            if (g.nodes == nodes) slot = &g;
        if (slot) {
            cudaGraphExecUpdateResultInfo info{};
            if (cudaGraphExecUpdate(slot->exec, graph, &info) == cudaSuccess) {
                slot->lastUse = ++m_graphClock;
                return slot->exec;
            }
            cudaGetLastError();
            cudaGraphExecDestroy(slot->exec);
            slot->exec = nullptr;
        } else if (m_graphs.size() >= kMaxGraphs) {
            slot = &*std::min_element(m_graphs.begin(), m_graphs.end(),
                                      [](const GraphExec& a, const GraphExec& b) { return a.lastUse < b.lastUse; });
            cudaGraphExecDestroy(slot->exec);
            slot->exec = nullptr;
        } else {
            m_graphs.push_back({});
            slot = &m_graphs.back();
        }
        slot->nodes = nodes;
        slot->lastUse = ++m_graphClock;
        if (cudaGraphInstantiate(&slot->exec, graph, 0) != cudaSuccess) {
            cudaGetLastError();
            slot->exec = nullptr;
            m_graphs.erase(m_graphs.begin() + (slot - m_graphs.data()));
            return nullptr;
        }
        return slot->exec;
    }
    void resetStaging() {
        m_pinnedUsed = 0;
        m_rowsUsed = 0;
    }
    // A pinned copy of host[0 .. bytes) that stays valid until the stream is next idle, or null
    // (too large, or pinned memory unavailable): the caller copies synchronously.
    const uint8_t* stage(const void* host, uint64_t bytes) {
        if (bytes > kStageMaxBytes) return nullptr;
        const uint64_t need = stageAlign(bytes);
        if (m_pinnedUsed + need > m_pinnedBytes) {
            idle();
            if (need > m_pinnedBytes) {
                if (m_pinned) cudaFreeHost(m_pinned);
                m_pinned = nullptr;
                m_pinnedBytes = 0;
                const uint64_t size = std::max<uint64_t>(need, 1ull << 20);
                void* p = nullptr;
                if (cudaMallocHost(&p, size) != cudaSuccess) {
                    cudaGetLastError();
                    return nullptr;
                }
                m_pinned = static_cast<uint8_t*>(p);
                m_pinnedBytes = size;
            }
        }
        uint8_t* dst = m_pinned + m_pinnedUsed;
        std::memcpy(dst, host, bytes);
        m_pinnedUsed += need;
        return dst;
    }

    // y = W x through gemm.h, its f16 scratch grown first when the product needs it.
    void product(const DeviceMatrix& d, const float* x, int64_t ldx, int64_t nTok, float* y, int64_t ldy) {
        if (!grow(m_xHalf, 2 * Gemm::xHalfElems(d, nTok), "f16 activations")
            || !grow(m_wHalf, 2 * Gemm::wHalfElems(d, nTok), "an f16 weight tile")
            || !grow(m_xScale, 4 * Gemm::scaleElems(d, nTok), "activation scales"))
            return;
        m_gemm.product(d, x, ldx, nTok, y, ldy, reinterpret_cast<__half*>(m_xHalf.data()),
                       reinterpret_cast<__half*>(m_wHalf.data()), reinterpret_cast<float*>(m_xScale.data()));
    }

    // A routed product grouped by expert (a prefill's): the pairs sorted by expert on the host
    // (the expert ids copied down once per routing: stage 1's products and stage 2's share the
    // order), their input rows gathered expert by expert, one product per used expert, the output
    // rows scattered back to pair order.
    void groupedProduct(const backend::ExpertProduct& p, const DeviceMatrix& d) {
        const int64_t P = p.nPairs, K = d.cols, N = d.rows;
        if (!sortPairs(p.experts, P, d.nMat)) return;
        if (!grow(m_groupX, 4ull * static_cast<uint64_t>(P * K), "expert inputs grouped by expert")
            || !grow(m_groupY, 4ull * static_cast<uint64_t>(P * N), "expert outputs grouped by expert"))
            return;
        float* gx = reinterpret_cast<float*>(m_groupX.data());
        float* gy = reinterpret_cast<float*>(m_groupY.data());
        const int32_t* order = reinterpret_cast<const int32_t*>(m_order.data());
        gatherRows(p.x, K, order, P, p.xDiv, gx, m_stream);
        for (int64_t e = 0; e < d.nMat; ++e) {
            const int64_t b0 = m_begin[static_cast<size_t>(e)], rows = m_begin[static_cast<size_t>(e) + 1] - b0;
            if (rows == 0) continue;
            product(d.expert(e), gx + b0 * K, K, rows, gy + b0 * N, N);
        }
        scatterRows(gy, N, order, P, p.y, m_stream);
    }

    // m_order (device) = the pairs in expert order (pair order within an expert), m_begin (host) =
    // each expert's first place in it. Reused while the ids are those of the last sort.
    bool sortPairs(const int32_t* experts, int64_t P, int64_t nExpert) {
        if (experts == m_sortedIds && P == m_sortedPairs) return true;
        m_sortedIds = nullptr;
        m_hostExperts.resize(static_cast<size_t>(P));
        flush();
        note(cudaMemcpyAsync(m_hostExperts.data(), experts, 4ull * static_cast<uint64_t>(P), cudaMemcpyDeviceToHost,
                             m_stream));
        idle();
        if (m_firstError != cudaSuccess) return false;
        if (int32_t bad = 0; !sortPairsByExpert(m_hostExperts, nExpert, m_begin, m_hostOrder, bad)) {
            if (m_opError.empty())
                m_opError = "expert id " + std::to_string(bad) + " outside the " + std::to_string(nExpert) + " experts";
            return false;
        }
        if (!grow(m_order, 4ull * static_cast<uint64_t>(P), "the pairs' expert order")) return false;
        upload(m_order.data(), m_hostOrder.data(), 4ull * static_cast<uint64_t>(P));
        m_sortedIds = experts;
        m_sortedPairs = P;
        return true;
    }

    std::optional<DeviceMatrix> matrix(const backend::Matrix& w) {
        const auto bt = blockTypeFor(w.type);
        if (!bt || w.cols % 32 != 0) {
            if (m_opError.empty())
                m_opError = "weights of type " + std::string(tensor::typeName(w.type)) + " with rows of "
                    + std::to_string(w.cols) + " elements cannot be computed here";
            return std::nullopt;
        }
        DeviceMatrix d;
        d.data = static_cast<const uint8_t*>(w.data);
        d.type = *bt;
        d.cols = w.cols;
        d.rows = w.rows;
        d.nMat = w.nMat;
        d.rowBytes = w.rowBytes;
        return d;
    }

    // The product kernels read activation rows as float4 (rows of 32k floats): a row start off 16
    // bytes would be a misaligned-address fault, which ends the CUDA context; an engine bug, so it
    // fails the op with a message instead.
    bool alignedRows(const float* x) {
        if (reinterpret_cast<uintptr_t>(x) % 16 == 0) return true;
        if (m_opError.empty()) m_opError = "a product's activation rows start off a 16-byte boundary (an engine bug)";
        return false;
    }

    // The kernels find layer L of a row's cache at base + L * (its K and V bytes); the interface's
    // rows point at the layer already, so the kernels see layer 0.
    static AttentionShape shape(const backend::Attention& a) {
        return AttentionShape{a.nHead, a.nHeadKv, a.dimK, a.dimV, a.f16, a.scale, a.softCap, a.window, 0, a.sinks};
    }
    // A scratch buffer of at least `bytes` (grown after the stream is idle: ops may still read it).
    bool grow(DeviceBuffer& b, uint64_t bytes, const char* what) {
        if (b.bytes() >= bytes) return true;
        idle();
        auto r = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Scratch, std::max<uint64_t>(bytes, 4096), what);
        if (!r) {
            if (m_opError.empty()) m_opError = r.error().message;
            return false;
        }
        b = std::move(r.value());
        return true;
    }
    const RowCache* uploadRows(const backend::RowCache* hostRows, int64_t nTok) {
        m_hostRows.resize(static_cast<size_t>(nTok));
        for (int64_t t = 0; t < nTok; ++t)
            m_hostRows[static_cast<size_t>(t)] = RowCache{hostRows[t].base, hostRows[t].capacity, hostRows[t].pos};
        // Each op's table has a place of its own in m_rows until the stream is next idle, so no op
        // waits for the one before it to have read its table.
        const uint64_t bytes = m_hostRows.size() * sizeof(RowCache);
        const uint64_t need = stageAlign(bytes);
        if (m_rowsUsed + need > m_rows.bytes()) {
            idle();  // the ring starts over (and may grow)
            if (!grow(m_rows, std::max<uint64_t>(need, 64 * 1024), "row tables")) return nullptr;
        }
        uint8_t* dst = m_rows.data() + m_rowsUsed;
        m_rowsUsed += need;
        upload(dst, m_hostRows.data(), bytes);
        return reinterpret_cast<const RowCache*>(dst);
    }

    int m_device;
    std::string m_name;
    cudaStream_t m_stream = nullptr;
    Ledger m_ledger;
    std::unordered_map<void*, DeviceBuffer> m_buffers;
    DeviceBuffer m_gelu, m_rows, m_partials;
    DeviceBuffer m_mlaQ, m_mlaO;                  // latentAttention's qLat, oLat
    std::vector<RowCache> m_hostRows;
    uint64_t m_rowsUsed = 0;                      // bytes of m_rows handed out since the stream was idle
    uint8_t* m_pinned = nullptr;                  // pinned staging of small uploads (stage)
    uint64_t m_pinnedBytes = 0, m_pinnedUsed = 0;
    Gemm m_gemm;
    DeviceBuffer m_xHalf, m_wHalf, m_xScale;      // gemm.h's f16 scratch and activation scales
    DeviceBuffer m_groupX, m_groupY, m_order;     // groupedProduct's rows and the pairs' order
    std::vector<int32_t> m_hostExperts, m_hostOrder;
    std::vector<int64_t> m_begin;
    const int32_t* m_sortedIds = nullptr;         // what m_order was sorted from (sortPairs)
    int64_t m_sortedPairs = 0;
    struct GraphExec {
        size_t nodes = 0;
        cudaGraphExec_t exec = nullptr;
        uint64_t lastUse = 0;
    };
    std::vector<GraphExec> m_graphs;              // beginPass / flush
    uint64_t m_graphClock = 0;
    bool m_capturing = false;
    bool m_graphsOff = false;                     // VERDICT_CUDA_GRAPHS=0, or a recording failed
    cudaError_t m_firstError = cudaSuccess;
    std::string m_opError;
};

}  // namespace

Result<std::unique_ptr<backend::Backend>> openCudaBackend(int device) {
    auto be = std::make_unique<CudaBackend>(device);
    if (auto r = be->init(); !r) return r.error();
    return std::unique_ptr<backend::Backend>(std::move(be));
}

}  // namespace verdict::cuda

namespace verdict::gpu {

Result<std::unique_ptr<backend::Backend>> openGpuBackend(int device) { return cuda::openCudaBackend(device); }

}  // namespace verdict::gpu
