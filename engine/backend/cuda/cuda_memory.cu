#include "backend/cuda/cuda_memory.h"

#include <cstdio>
#include <utility>

namespace verdict::cuda {

void Ledger::add(VramKind k, uint64_t bytes) {
    m_bytes[static_cast<int>(k)] += bytes;
    const uint64_t total = (m_total += bytes);
    uint64_t peak = m_peak.load();
    while (total > peak && !m_peak.compare_exchange_weak(peak, total)) {
    }
}

void Ledger::sub(VramKind k, uint64_t bytes) {
    m_bytes[static_cast<int>(k)] -= bytes;
    m_total -= bytes;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
        reset();
        m_ptr = o.m_ptr;
        m_bytes = o.m_bytes;
        m_device = o.m_device;
        m_kind = o.m_kind;
        m_ledger = o.m_ledger;
        o.m_ptr = nullptr;
        o.m_bytes = 0;
        o.m_ledger = nullptr;
    }
    return *this;
}

Result<DeviceBuffer> DeviceBuffer::allocate(int device, Ledger& ledger, VramKind kind, uint64_t bytes,
                                            const std::string& what) {
    DeviceBuffer b;
    if (bytes == 0) return std::move(b);
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
        cudaGetLastError();
        return Error{"cuda:" + std::to_string(device) + ": " + cudaErrorText(e)};
    }
    void* p = nullptr;
    if (cudaError_t e = cudaMalloc(&p, bytes); e != cudaSuccess) {
        cudaGetLastError();  // an allocation failure is not sticky; clear it
        size_t freeB = 0, totalB = 0;
        cudaMemGetInfo(&freeB, &totalB);
        return Error{"cuda:" + std::to_string(device) + ": cannot allocate " + gib(bytes) + " of device memory for "
                     + what + " (" + cudaErrorText(e) + "; " + gib(freeB) + " free of " + gib(totalB) + ")"};
    }
    b.m_ptr = static_cast<uint8_t*>(p);
    b.m_bytes = bytes;
    b.m_device = device;
    b.m_kind = kind;
    b.m_ledger = &ledger;
    ledger.add(kind, bytes);
    return std::move(b);
}

void DeviceBuffer::reset() {
    if (m_ptr) {
        cudaSetDevice(m_device);
        cudaFree(m_ptr);
        if (m_ledger) m_ledger->sub(m_kind, m_bytes);
    }
    m_ptr = nullptr;
    m_bytes = 0;
    m_ledger = nullptr;
}

std::string cudaErrorText(cudaError_t e) {
    return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

std::string gib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

}  // namespace verdict::cuda
