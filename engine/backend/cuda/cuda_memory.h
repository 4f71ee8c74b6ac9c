// Device memory of the CUDA backend: every allocation goes through a Ledger that keeps the bytes in
// use per category and their high-water mark, so the VRAM figures a user sees are the engine's own
// accounting (cross-checked with cudaMemGetInfo by the caller), and an out-of-memory becomes an
// Error naming the device, what was being allocated and how much was free.
#pragma once

#include "verdict/engine/result.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace verdict::cuda {

enum class VramKind { Weights, Kv, Scratch, Workspace };

class Ledger {
public:
    void add(VramKind k, uint64_t bytes);
    void sub(VramKind k, uint64_t bytes);
    uint64_t bytes(VramKind k) const { return m_bytes[static_cast<int>(k)].load(); }
    uint64_t peak() const { return m_peak.load(); }

private:
    std::atomic<uint64_t> m_bytes[4] = {};
    std::atomic<uint64_t> m_total{0};
    std::atomic<uint64_t> m_peak{0};
};

// One cudaMalloc'd block, freed (on its device) with the object.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    ~DeviceBuffer() { reset(); }
    DeviceBuffer(DeviceBuffer&& o) noexcept { *this = static_cast<DeviceBuffer&&>(o); }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    // what: for the message ("KV cache", "weights", ...).
    static Result<DeviceBuffer> allocate(int device, Ledger& ledger, VramKind kind, uint64_t bytes, const std::string& what);

    uint8_t* data() const { return m_ptr; }
    uint64_t bytes() const { return m_bytes; }
    void reset();

private:
    uint8_t* m_ptr = nullptr;
    uint64_t m_bytes = 0;
    int m_device = 0;
    VramKind m_kind = VramKind::Scratch;
    Ledger* m_ledger = nullptr;
};

// "cudaErrorMemoryAllocation (out of memory)".
std::string cudaErrorText(cudaError_t e);
// "1.50 GiB".
std::string gib(uint64_t bytes);

}  // namespace verdict::cuda
