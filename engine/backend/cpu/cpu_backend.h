// The CPU implementation of backend/ops/backend.h: the kernels of backend/cpu behind the op
// interface, in host memory, over a thread pool. Matmuls and attention use the process's SIMD level
// (cpu_features.h: the best the CPU has, lowered by VERDICT_CPU_SIMD), so one build tests the
// scalar, AVX2 and AVX-512 paths by running under each level (tests/engine/test_backend_ops).
#pragma once

#include "backend/ops/backend.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace verdict::cpu {

class ThreadPool;

class CpuBackend final : public backend::Backend {
public:
    // The pool runs every op's parallel work; it must outlive the backend.
    explicit CpuBackend(ThreadPool& pool);
    ~CpuBackend() override;

    // Load time: copies of these matrices (host pointers of whole matrices or expert stacks)
    // repacked for the kernels (cpu::packWeights; types where canPack is false are skipped), which
    // matmul / expertMatmuls then read in place of the original whenever they are given a whole
    // one (same data pointer, rows and columns); every other reader (embedRows, MLA's row
    // products, views of part of a matrix) keeps reading the original. Not thread-safe: call it
    // before the backend runs passes. Returns the bytes packed; throws std::bad_alloc.
    uint64_t packMatrices(const std::vector<backend::Matrix>& matrices);

    std::string name() const override;
    bool supports(tensor::TensorType type) const override;

    Result<void*> allocate(uint64_t bytes, std::string_view what,
                           backend::Purpose purpose = backend::Purpose::Activations) override;
    void release(void* p) override;
    void upload(void* dst, const void* host, uint64_t bytes) override;
    void download(void* host, const void* src, uint64_t bytes) override;
    Result<void> synchronize() override { return {}; }  // every op has finished when it returns
    bool hostMemory() const override { return true; }
    void copy(void* dst, const void* src, uint64_t bytes) override;

    void embedRows(const backend::Matrix& w, const int32_t* tokens, int64_t nTok, float* out) override;
    void matmul(const backend::Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) override;
    void expertMatmuls(const backend::ExpertProduct* products, int count) override;
    void rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) override;
    void add(const float* a, const float* b, float* y, int64_t n) override;
    void addBias(float* y, const float* bias, int64_t rows, int64_t n) override;
    void scale(float* x, float factor, int64_t n) override;
    void softCap(float* x, int64_t n, float cap) override;
    void swiglu(float* gate, const float* up, int64_t n) override;
    void swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) override;
    void geglu(float* gate, const float* up, int64_t n) override;
    void rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
              const float* table) override;
    void storeKv(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* k,
                 const float* v) override;
    void attention(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok, const float* q,
                   float* out) override;
    void latentAttention(const backend::LatentAttention& a, const backend::RowCache* hostRows, int64_t nTok,
                         const float* q, float* out) override;
    void roundAsMatmulInput(tensor::TensorType type, float* x, int64_t rows, int64_t K) override;
    void copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) override;
    void routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override;
    void routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                          float* weights) override;
    void routeGrouped(const backend::GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U,
                      float* selection, int32_t* experts, float* weights) override;
    void addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) override;
    void combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) override;

private:
    struct Packed;
    // The packed copy of w.data when w is a whole matrix packMatrices took, else null.
    const void* packedData(const backend::Matrix& w) const;

    ThreadPool& m_pool;
    std::unordered_map<const void*, std::unique_ptr<Packed>> m_packed;  // by original data pointer
};

}  // namespace verdict::cpu
