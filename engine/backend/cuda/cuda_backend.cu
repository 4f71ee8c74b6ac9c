#include "backend/cuda/cuda_backend.h"

#include "backend/cpu/ops_activation.h"
#include "backend/cuda/block_type.h"
#include "backend/cuda/cuda_memory.h"
#include "backend/cuda/cuda_ops.h"
#include "tensor/half.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

namespace verdict::cuda {

namespace {

constexpr int kMaxSplits = 32;     // attention position splits (decode), as cuda_model.cu
constexpr int kMaxHeadDim = 256;   // ops_attention.cu
constexpr int kMaxExperts = 512;   // ops_moe.cu
constexpr int kMaxUsedExperts = 32;

class CudaBackend final : public backend::Backend {
public:
    explicit CudaBackend(int device) : m_device(device) {}
    ~CudaBackend() override {
        cudaSetDevice(m_device);
        if (m_stream) cudaStreamSynchronize(m_stream);
        m_buffers.clear();
        m_rows = {};
        m_partials = {};
        m_mlaW = {};
        m_mlaQ = {};
        m_mlaO = {};
        m_iota = {};
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
        // ggml's f16 GELU table, the CPU's own values (cpu::geluTanhF16), for geglu.
        std::vector<uint16_t> table(65536);
        for (size_t i = 0; i < table.size(); ++i)
            table[i] = tensor::fp32ToFp16(cpu::geluTanhF16(tensor::fp16ToFp32(static_cast<uint16_t>(i))));
        auto g = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Weights, table.size() * 2, "the GELU table");
        if (!g) return g.error();
        m_gelu = std::move(g.value());
        cudaMemcpy(m_gelu.data(), table.data(), table.size() * 2, cudaMemcpyHostToDevice);
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

    Result<void*> allocate(uint64_t bytes, std::string_view what,
                           backend::Purpose purpose = backend::Purpose::Activations) override {
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
        cudaStreamSynchronize(m_stream);  // no op still reading it
        m_buffers.erase(p);
    }
    void upload(void* dst, const void* host, uint64_t bytes) override {
        note(cudaMemcpyAsync(dst, host, bytes, cudaMemcpyHostToDevice, m_stream));
        note(cudaStreamSynchronize(m_stream));  // the host buffer may go away when this returns
    }
    void download(void* host, const void* src, uint64_t bytes) override {
        note(cudaMemcpyAsync(host, src, bytes, cudaMemcpyDeviceToHost, m_stream));
        note(cudaStreamSynchronize(m_stream));
    }
    backend::MemoryStats memory() const override {
        backend::MemoryStats m;
        m.weights = m_ledger.bytes(VramKind::Weights);
        m.kvCache = m_ledger.bytes(VramKind::Kv);
        m.activations = m_ledger.bytes(VramKind::Scratch) + m_ledger.bytes(VramKind::Workspace);
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
        note(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
    }
    Result<void> synchronize() override {
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaStreamSynchronize(m_stream);
        if (e == cudaSuccess && m_firstError != cudaSuccess) e = m_firstError;
        m_firstError = cudaSuccess;
        if (!m_opError.empty()) {
            std::string msg = name() + ": " + m_opError;
            m_opError.clear();
            return Error{msg};
        }
        if (e != cudaSuccess) return fail(e);
        return {};
    }

    void embedRows(const backend::Matrix& w, const int32_t* tokens, int64_t nTok, float* out) override {
        if (auto d = matrix(w)) cuda::embedRows(*d, tokens, nTok, out, m_stream);
    }
    void matmul(const backend::Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) override {
        auto d = matrix(w);
        if (!d || nTok <= 0) return;
        if (nTok <= kMatvecMaxCols) {
            matvec(*d, x, w.cols, static_cast<int>(nTok), y, ldy, m_stream);
        } else {
            matmulMma(*d, x, w.cols, nTok, y, ldy, m_stream);
        }
    }
    void expertMatmuls(const backend::ExpertProduct* products, int count) override {
        // One launch per product: routed pairs read their expert's rows in place (expertMatvec);
        // dense products run as matmul. No grouping by expert yet (cuda_model.cu's prefill does).
        for (int i = 0; i < count; ++i) {
            const backend::ExpertProduct& p = products[i];
            if (p.nPairs <= 0) continue;
            if (!p.experts && p.xDiv == 1) {
                matmul(p.w, p.x, p.nPairs, p.y, p.w.rows);
            } else if (!p.experts) {
                if (m_opError.empty()) m_opError = "a dense expert product with repeated input rows is not implemented";
            } else if (auto d = matrix(p.w)) {
                expertMatvec(*d, p.experts, p.nPairs, p.x, p.w.cols, p.xDiv, p.y, p.w.rows, m_stream);
            }
        }
    }
    void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) override {
        cuda::rmsNorm(x, w, y, rows, n, eps, m_stream);
    }
    void add(const float* a, const float* b, float* y, int64_t n) override { cuda::add(a, b, y, n, m_stream); }
    void addBias(float* y, const float* bias, int64_t rows, int64_t n) override {
        cuda::addBias(y, bias, rows, n, m_stream);
    }
    void scale(float* x, float factor, int64_t n) override { cuda::scale(x, factor, n, m_stream); }
    void softCap(float* x, int64_t n, float cap) override { cuda::softCap(x, n, cap, m_stream); }
    void swiglu(float* gate, const float* up, int64_t n) override { cuda::swiglu(gate, up, n, m_stream); }
    void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) override {
        cuda::swigluOai(gate, up, n, alpha, limit, m_stream);
    }
    void geglu(float* gate, const float* up, int64_t n) override {
        cuda::geglu(gate, up, n, reinterpret_cast<const uint16_t*>(m_gelu.data()), m_stream);
    }
    void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
              const float* table) override {
        cuda::rope(x, nTok, nHead, headDim, nRot, neox, table, m_stream);
    }
    void storeKv(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* k,
                 const float* v) override {
        const RowCache* rows = uploadRows(hostRows, nTok);
        if (rows) cuda::storeKv(shape(a), rows, nTok, k, v, m_stream);
    }
    void attention(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* q,
                   float* out) override {
        if (!supports(a)) {
            if (m_opError.empty()) m_opError = "attention with heads over 256 elements is not implemented";
            return;
        }
        int64_t maxLen = 0;
        for (int64_t t = 0; t < nTok; ++t) maxLen = std::max<int64_t>(maxLen, hostRows[t].pos + 1);
        const RowCache* rows = uploadRows(hostRows, nTok);
        if (!rows) return;
        const AttentionShape s = shape(a);
        const int nSplit = attentionSplits(s, nTok, maxLen, kMaxSplits);
        const uint64_t need = 4ull * static_cast<uint64_t>(attentionPartialFloats(s, kMaxSplits));
        if (m_partials.bytes() < need) {
            cudaStreamSynchronize(m_stream);
            auto p = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Scratch, need, "attention partials");
            if (!p) {
                if (m_opError.empty()) m_opError = p.error().message;
                return;
            }
            m_partials = std::move(p.value());
        }
        cuda::attention(s, rows, nTok, nSplit, q, out, reinterpret_cast<float*>(m_partials.data()), m_stream);
    }
    // ops_mla.cu over attn_kv_b dequantized to f32 for the call (embedRows over an index of its
    // rows): correct first; a V3-sized layer's rows are 64 MiB of f32 per pass, a cost to remove.
    void latentAttention(const backend::LatentAttention& a, const backend::RowCache* hostRows, int64_t nTok,
                         const float* q, float* out) override {
        if (nTok <= 0) return;
        if (!supports(a)) {
            if (m_opError.empty()) m_opError = "latent attention of rank over 512 or a rope part over 64 is not implemented";
            return;
        }
        auto w = matrix(a.kvB);
        if (!w) return;
        const int64_t nRows = static_cast<int64_t>(a.nHead) * (a.dNope + a.dV);
        const uint64_t wfBytes = 4ull * static_cast<uint64_t>(nRows * a.rank);
        const uint64_t latBytes = 4ull * static_cast<uint64_t>(nTok * a.nHead * a.rank);
        if (m_iota.bytes() < 4ull * static_cast<uint64_t>(nRows)) m_iotaRows = 0;  // grown below: refilled
        if (!grow(m_mlaW, wfBytes, "latent attention weights") || !grow(m_mlaQ, latBytes, "latent attention queries")
            || !grow(m_mlaO, latBytes, "latent attention outputs") || !grow(m_iota, 4ull * static_cast<uint64_t>(nRows), "row index"))
            return;
        if (m_iotaRows < nRows) {
            std::vector<int32_t> iota(static_cast<size_t>(nRows));
            for (int64_t i = 0; i < nRows; ++i) iota[static_cast<size_t>(i)] = static_cast<int32_t>(i);
            upload(m_iota.data(), iota.data(), iota.size() * 4);
            m_iotaRows = nRows;
        }
        float* wf = reinterpret_cast<float*>(m_mlaW.data());
        cuda::embedRows(*w, reinterpret_cast<const int32_t*>(m_iota.data()), nRows, wf, m_stream);
        const RowCache* rows = uploadRows(hostRows, nTok);
        if (!rows) return;
        const MlaShape shape{a.nHead, a.dNope, a.dRope, a.dV, a.rank, a.f16, a.scale};
        float* qLat = reinterpret_cast<float*>(m_mlaQ.data());
        float* oLat = reinterpret_cast<float*>(m_mlaO.data());
        mlaAbsorb(wf, q, nTok, shape, qLat, m_stream);
        mlaAttention(rows, nTok, shape, q, qLat, oLat, m_stream);
        mlaUpProject(wf, oLat, nTok, shape, out, m_stream);
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
    }
    void copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) override {
        if (rows > 0 && cols > 0)
            note(cudaMemcpy2DAsync(dst, static_cast<size_t>(ldd) * 4, src, static_cast<size_t>(lds) * 4,
                                   static_cast<size_t>(cols) * 4, static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                                   m_stream));
    }
    void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override {
        if (nExpert > kMaxExperts || U > kMaxUsedExperts) {
            if (m_opError.empty())
                m_opError = std::to_string(nExpert) + " experts (" + std::to_string(U) + " used) exceed the limits";
            return;
        }
        cuda::routeSoftmaxTopK(logits, nTok, nExpert, U, experts, weights, m_stream);
    }
    void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override {
        if (nExpert > kMaxExperts || U > kMaxUsedExperts) {
            if (m_opError.empty())
                m_opError = std::to_string(nExpert) + " experts (" + std::to_string(U) + " used) exceed the limits";
            return;
        }
        cuda::routeTopKSoftmax(logits, nTok, nExpert, U, experts, weights, m_stream);
    }
    void routeGrouped(const backend::GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U,
                      float* selection, int32_t* experts, float* weights) override {
        if (nExpert > kMaxExperts || U > kMaxUsedExperts) {
            if (m_opError.empty())
                m_opError = std::to_string(nExpert) + " experts (" + std::to_string(U) + " used) exceed the limits";
            return;
        }
        cuda::routeGrouped(r.sigmoid, r.selectionBias, r.nGroups, r.nGroupsUsed, r.normalize, r.scale, scores, nTok,
                           nExpert, U, selection, experts, weights, m_stream);
    }
    void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) override {
        cuda::addExpertBias(y, bias, experts, nPairs, n, m_stream);
    }
    void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) override {
        cuda::combineExperts(y, weights, nTok, U, n, out, m_stream);
    }

private:
    Error fail(cudaError_t e) const { return Error{"cuda:" + std::to_string(m_device) + ": " + cudaErrorText(e)}; }
    void note(cudaError_t e) {
        if (e != cudaSuccess && m_firstError == cudaSuccess) m_firstError = e;
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

    // The kernels find layer L of a row's cache at base + L * (its K and V bytes); the interface's
    // rows point at the layer already, so the kernels see layer 0.
    static AttentionShape shape(const backend::Attention& a) {
        return AttentionShape{a.nHead, a.nHeadKv, a.dimK, a.dimV, a.f16, a.scale, a.softCap, a.window, 0, a.sinks};
    }
    // A scratch buffer of at least `bytes` (grown after the stream is idle: ops may still read it).
    bool grow(DeviceBuffer& b, uint64_t bytes, const char* what) {
        if (b.bytes() >= bytes) return true;
        cudaStreamSynchronize(m_stream);
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
        const uint64_t bytes = m_hostRows.size() * sizeof(RowCache);
        if (m_rows.bytes() < bytes) {
            cudaStreamSynchronize(m_stream);
            auto r = DeviceBuffer::allocate(m_device, m_ledger, VramKind::Scratch, std::max<uint64_t>(bytes, 4096),
                                            "the row table");
            if (!r) {
                if (m_opError.empty()) m_opError = r.error().message;
                return nullptr;
            }
            m_rows = std::move(r.value());
        }
        // Synchronous: the table is rewritten by the next op while this one may still read it.
        cudaStreamSynchronize(m_stream);
        note(cudaMemcpy(m_rows.data(), m_hostRows.data(), bytes, cudaMemcpyHostToDevice));
        return reinterpret_cast<const RowCache*>(m_rows.data());
    }

    int m_device;
    std::string m_name;
    cudaStream_t m_stream = nullptr;
    Ledger m_ledger;
    std::unordered_map<void*, DeviceBuffer> m_buffers;
    DeviceBuffer m_gelu, m_rows, m_partials;
    DeviceBuffer m_mlaW, m_mlaQ, m_mlaO, m_iota;  // latentAttention's f32 attn_kv_b, qLat, oLat, row index
    int64_t m_iotaRows = 0;
    std::vector<RowCache> m_hostRows;
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
