// A backend wrapper for tests that proves a forward pass hands ops nothing but backend memory, as a
// GPU needs, while computing exactly what the wrapped host-memory backend (cpu::CpuBackend)
// computes. It says hostMemory() is false, so the forward takes the path a device backend takes
// (uploads, downloads), and before forwarding each call unchanged it checks every backend pointer
// the call takes, over the extent the op will touch (the shapes of backend/ops/backend.h), against
// the allocations made through it: a range must lie wholly inside one live allocation. A host
// buffer, a stale pointer or a span that runs past its allocation is a violation: recorded, not
// fatal, so that a test can report every one it finds.
//
// Pointers named host* (the RowCache tables) are host memory by the interface; the `base` of each
// of their rows is checked.
//
// A pass (beginPass to the next download or synchronize) belongs to the thread that began it: an
// allocation or release from another thread in the meantime is a violation too — on a GPU it
// would land inside a pass being recorded as a CUDA graph (the engine's pass lock,
// ModelImpl::lockPasses, must keep them out). The bookkeeping is locked, so the wrapper may be
// called from several threads.
#pragma once

#include "backend/ops/backend.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace verdict::test {

class CheckedBackend final : public backend::Backend {
public:
    // `inner` must be a host-memory backend: the checks read expert ids from its memory.
    explicit CheckedBackend(backend::Backend& inner);

    // The first kMaxStoredViolations messages, in order; violationCount() counts all of them.
    static constexpr size_t kMaxStoredViolations = 50;
    const std::vector<std::string>& violations() const { return m_violations; }
    uint64_t violationCount() const { return m_violationCount; }
    void clearViolations();
    uint64_t liveBytes() const { return m_liveBytes; }  // the bytes asked for by the live allocations
    size_t liveAllocations() const { return m_allocations.size(); }
    // The next synchronize() reports this failure, as a device backend reports a failed op.
    void failNextSynchronize(std::string message) { m_syncFailure = std::move(message); }

    std::string name() const override;
    bool supports(tensor::TensorType type) const override;
    bool supports(const backend::Attention& a) const override;
    bool supports(const backend::LatentAttention& a) const override;

    Result<void*> allocate(uint64_t bytes, std::string_view what,
                           backend::Purpose purpose = backend::Purpose::Activations) override;
    void release(void* p) override;
    void upload(void* dst, const void* host, uint64_t bytes) override;
    void download(void* host, const void* src, uint64_t bytes) override;
    Result<void> synchronize() override;
    void beginPass(int64_t rows) override;
    bool hostMemory() const override { return false; }  // the point: the forward must treat it as a device
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
    struct Allocation {
        uint64_t bytes;
        std::string what;
    };

    // The live allocation holding address p (its start in `start`), or null.
    const Allocation* holding(const void* p, uintptr_t& start) const;
    // True when [p, p + bytes) lies wholly inside one live allocation.
    bool contains(const void* p, uint64_t bytes) const;
    void reportOutside(const char* op, const std::string& arg, const void* p, uint64_t bytes);
    // contains(), or a violation naming op and arg; true for bytes 0 and, when `optional`, a null p
    // (an absent argument).
    bool check(const char* op, const char* arg, const void* p, uint64_t bytes, bool optional = false);
    bool checkFloats(const char* op, const char* arg, const float* p, int64_t n, bool optional = false);
    bool checkInts(const char* op, const char* arg, const int32_t* p, int64_t n, bool optional = false);
    void checkMatrix(const char* op, const char* arg, const backend::Matrix& w);
    // Each row's cache: base over capacity * bytesPerPosition, pos within the capacity.
    void checkRows(const char* op, const backend::RowCache* hostRows, int64_t nTok, uint64_t bytesPerPosition);
    void violation(std::string message);
    // A violation when a pass of another thread is running (the class comment).
    void outsideThePass(const char* op, std::string_view what);

    backend::Backend& m_in;
    std::map<uintptr_t, Allocation> m_allocations;  // by start address
    uint64_t m_liveBytes = 0;
    std::vector<std::string> m_violations;
    uint64_t m_violationCount = 0;
    std::string m_syncFailure;  // failNextSynchronize
    bool m_inPass = false;      // beginPass .. download / synchronize
    std::thread::id m_passThread;
    mutable std::recursive_mutex m_mutex;  // everything above
};

}  // namespace verdict::test
