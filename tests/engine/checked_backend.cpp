#include "checked_backend.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace verdict::test {

namespace {

// Counts below zero touch nothing.
uint64_t count(int64_t n) { return n > 0 ? static_cast<uint64_t>(n) : 0; }

uint64_t floatBytes(int64_t n) { return count(n) * sizeof(float); }

std::string address(const void* p) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", p);
    return buf;
}

std::string describe(uint64_t bytes, const void* p) { return std::to_string(bytes) + " bytes at " + address(p); }

// Rows of `cols` floats `ld` apart: the last row ends (rows - 1) * ld + cols floats in.
uint64_t stridedFloatBytes(int64_t rows, int64_t ld, int64_t cols) {
    if (rows <= 0 || cols <= 0) return 0;
    return floatBytes((rows - 1) * ld + cols);
}

}  // namespace

CheckedBackend::CheckedBackend(backend::Backend& inner) : m_in(inner) {}

void CheckedBackend::clearViolations() {
    const std::lock_guard lock(m_mutex);
    m_violations.clear();
    m_violationCount = 0;
}

void CheckedBackend::violation(std::string message) {
    const std::lock_guard lock(m_mutex);
    ++m_violationCount;
    if (m_violations.size() < kMaxStoredViolations) m_violations.push_back(std::move(message));
}

const CheckedBackend::Allocation* CheckedBackend::holding(const void* p, uintptr_t& start) const {
    const std::lock_guard lock(m_mutex);
    const auto at = reinterpret_cast<uintptr_t>(p);
    // The allocation starting at or below p is the only one that can hold it.
    auto it = m_allocations.upper_bound(at);
    if (it == m_allocations.begin()) return nullptr;
    --it;
    if (at - it->first >= it->second.bytes) return nullptr;
    start = it->first;
    return &it->second;
}

bool CheckedBackend::contains(const void* p, uint64_t bytes) const {
    const std::lock_guard lock(m_mutex);
    uintptr_t start = 0;
    const Allocation* in = holding(p, start);
    return in && bytes <= in->bytes - (reinterpret_cast<uintptr_t>(p) - start);
}

void CheckedBackend::reportOutside(const char* op, const std::string& arg, const void* p, uint64_t bytes) {
    const std::lock_guard lock(m_mutex);
    std::string message = std::string(op) + ": " + arg + " (" + describe(bytes, p)
        + ") is not inside one backend allocation";
    // A range that starts inside an allocation overruns it (a wrong extent rather than a host
    // buffer): say by how much, and which allocation.
    uintptr_t start = 0;
    if (const Allocation* in = holding(p, start)) {
        const uint64_t room = in->bytes - (reinterpret_cast<uintptr_t>(p) - start);
        message += ": it runs " + std::to_string(bytes - room) + " bytes past the end of " + in->what + " ("
            + describe(in->bytes, reinterpret_cast<const void*>(start)) + ")";
    }
    violation(std::move(message));
}

bool CheckedBackend::check(const char* op, const char* arg, const void* p, uint64_t bytes, bool optional) {
    if (bytes == 0 || (optional && !p) || contains(p, bytes)) return true;
    reportOutside(op, arg, p, bytes);
    return false;
}

bool CheckedBackend::checkFloats(const char* op, const char* arg, const float* p, int64_t n, bool optional) {
    return check(op, arg, p, floatBytes(n), optional);
}

bool CheckedBackend::checkInts(const char* op, const char* arg, const int32_t* p, int64_t n, bool optional) {
    return check(op, arg, p, count(n) * sizeof(int32_t), optional);
}

void CheckedBackend::checkMatrix(const char* op, const char* arg, const backend::Matrix& w) {
    // The whole stack: an op reading any matrix of it needs the stack to be the backend's.
    check(op, arg, w.data, count(w.nMat) * count(w.rows) * w.rowBytes);
}

void CheckedBackend::checkRows(const char* op, const backend::RowCache* hostRows, int64_t nTok,
                               uint64_t bytesPerPosition) {
    if (nTok <= 0) return;
    if (!hostRows) {
        violation(std::string(op) + ": hostRows is null for " + std::to_string(nTok) + " rows");
        return;
    }
    for (int64_t t = 0; t < nTok; ++t) {
        const backend::RowCache& r = hostRows[t];
        const uint64_t bytes = count(r.capacity) * bytesPerPosition;
        if (bytes > 0 && !contains(r.base, bytes))
            reportOutside(op, "hostRows[" + std::to_string(t) + "].base", r.base, bytes);
        // A position past the capacity reads or writes outside the cache the base check covered.
        if (r.pos < 0 || r.pos >= r.capacity)
            violation(std::string(op) + ": hostRows[" + std::to_string(t) + "].pos " + std::to_string(r.pos)
                      + " is outside its capacity " + std::to_string(r.capacity));
    }
}

std::string CheckedBackend::name() const { return "checked " + m_in.name(); }

bool CheckedBackend::supports(tensor::TensorType type) const { return m_in.supports(type); }

bool CheckedBackend::supports(const backend::Attention& a) const { return m_in.supports(a); }

bool CheckedBackend::supports(const backend::LatentAttention& a) const { return m_in.supports(a); }

void CheckedBackend::outsideThePass(const char* op, std::string_view what) {
    if (m_inPass && std::this_thread::get_id() != m_passThread)
        violation(std::string(op) + " (" + std::string(what) + ") from another thread while a pass is running");
}

void CheckedBackend::beginPass(int64_t rows) {
    {
        const std::lock_guard lock(m_mutex);
        if (!m_inPass) {
            m_inPass = true;
            m_passThread = std::this_thread::get_id();
        } else if (std::this_thread::get_id() != m_passThread) {
            violation("beginPass from another thread while a pass is running");
        }
    }
    m_in.beginPass(rows);
}

Result<void*> CheckedBackend::allocate(uint64_t bytes, std::string_view what, backend::Purpose purpose) {
    const std::lock_guard lock(m_mutex);
    outsideThePass("allocate", what);
    auto r = m_in.allocate(bytes, what, purpose);
    if (!r) return r;
    m_allocations[reinterpret_cast<uintptr_t>(r.value())] = Allocation{bytes, std::string(what)};
    m_liveBytes += bytes;
    return r;
}

void CheckedBackend::release(void* p) {
    const std::lock_guard lock(m_mutex);
    outsideThePass("release", address(p));
    if (!p) {  // releasing nothing, which every backend accepts
        m_in.release(p);
        return;
    }
    auto it = m_allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == m_allocations.end()) {
        // Not handed to the inner backend: freeing it there could corrupt the heap.
        violation("release: " + address(p) + " is not the start of a live backend allocation");
        return;
    }
    m_liveBytes -= it->second.bytes;
    m_allocations.erase(it);
    m_in.release(p);
}

void CheckedBackend::upload(void* dst, const void* host, uint64_t bytes) {
    check("upload", "dst", dst, bytes);
    m_in.upload(dst, host, bytes);
}

void CheckedBackend::download(void* host, const void* src, uint64_t bytes) {
    check("download", "src", src, bytes);
    m_in.download(host, src, bytes);
    const std::lock_guard lock(m_mutex);
    m_inPass = false;
}

Result<void> CheckedBackend::synchronize() {
    {
        const std::lock_guard lock(m_mutex);
        m_inPass = false;
    }
    if (!m_syncFailure.empty()) {
        Error e{m_syncFailure};
        m_syncFailure.clear();
        return e;
    }
    return m_in.synchronize();
}

void CheckedBackend::copy(void* dst, const void* src, uint64_t bytes) {
    check("copy", "dst", dst, bytes);
    check("copy", "src", src, bytes);
    m_in.copy(dst, src, bytes);
}

void CheckedBackend::embedRows(const backend::Matrix& w, const int32_t* tokens, int64_t nTok, float* out) {
    if (nTok > 0) checkMatrix("embedRows", "w", w);
    checkInts("embedRows", "tokens", tokens, nTok);
    checkFloats("embedRows", "out", out, nTok * w.cols);
    m_in.embedRows(w, tokens, nTok, out);
}

void CheckedBackend::matmul(const backend::Matrix& w, const float* x, int64_t nTok, float* y, int64_t ldy) {
    if (nTok > 0) {
        checkMatrix("matmul", "w", w);
        checkFloats("matmul", "x", x, nTok * w.cols);
        check("matmul", "y", y, stridedFloatBytes(nTok, ldy, w.rows));
    }
    m_in.matmul(w, x, nTok, y, ldy);
}

void CheckedBackend::expertMatmuls(const backend::ExpertProduct* products, int count) {
    // `products` is a host table of arguments (the CUDA backend reads it on the host); what its
    // entries point at is checked.
    for (int i = 0; i < count; ++i) {
        const backend::ExpertProduct& p = products[i];
        if (p.nPairs <= 0) continue;
        checkMatrix("expertMatmuls", "w", p.w);
        if (checkInts("expertMatmuls", "experts", p.experts, p.nPairs, true) && p.experts) {
            // The expert ids select matrices of the stack: one past it reads outside the checked w.
            // The ids are in this host-readable "device" memory, final when the op is called.
            for (int64_t j = 0; j < p.nPairs; ++j)
                if (p.experts[j] < 0 || p.experts[j] >= p.w.nMat) {
                    violation("expertMatmuls: experts[" + std::to_string(j) + "] = " + std::to_string(p.experts[j])
                              + " is outside the stack of " + std::to_string(p.w.nMat) + " matrices");
                    break;
                }
        }
        const int64_t xDiv = std::max<int64_t>(p.xDiv, 1);
        checkFloats("expertMatmuls", "x", p.x, (p.nPairs + xDiv - 1) / xDiv * p.w.cols);
        checkFloats("expertMatmuls", "y", p.y, p.nPairs * p.w.rows);
    }
    m_in.expertMatmuls(products, count);
}

void CheckedBackend::rmsNorm(const float* x, const float* w, float* y, int64_t rows, int64_t n, float eps) {
    if (rows > 0) {
        checkFloats("rmsNorm", "x", x, rows * n);
        checkFloats("rmsNorm", "w", w, n, true);
        checkFloats("rmsNorm", "y", y, rows * n);
    }
    m_in.rmsNorm(x, w, y, rows, n, eps);
}

void CheckedBackend::add(const float* a, const float* b, float* y, int64_t n) {
    checkFloats("add", "a", a, n);
    checkFloats("add", "b", b, n);
    checkFloats("add", "y", y, n);
    m_in.add(a, b, y, n);
}

void CheckedBackend::addBias(float* y, const float* bias, int64_t rows, int64_t n) {
    if (rows > 0) {
        checkFloats("addBias", "y", y, rows * n);
        checkFloats("addBias", "bias", bias, n);
    }
    m_in.addBias(y, bias, rows, n);
}

void CheckedBackend::scale(float* x, float factor, int64_t n) {
    checkFloats("scale", "x", x, n);
    m_in.scale(x, factor, n);
}

void CheckedBackend::softCap(float* x, int64_t n, float cap) {
    checkFloats("softCap", "x", x, n);
    m_in.softCap(x, n, cap);
}

void CheckedBackend::swiglu(float* gate, const float* up, int64_t n) {
    checkFloats("swiglu", "gate", gate, n);
    checkFloats("swiglu", "up", up, n);
    m_in.swiglu(gate, up, n);
}

void CheckedBackend::swigluOai(float* gate, const float* up, int64_t n, float alpha, float limit) {
    checkFloats("swigluOai", "gate", gate, n);
    checkFloats("swigluOai", "up", up, n);
    m_in.swigluOai(gate, up, n, alpha, limit);
}

void CheckedBackend::geglu(float* gate, const float* up, int64_t n) {
    checkFloats("geglu", "gate", gate, n);
    checkFloats("geglu", "up", up, n);
    m_in.geglu(gate, up, n);
}

void CheckedBackend::rope(float* x, int64_t nTok, int64_t nHead, int64_t headDim, int nRot, bool neox,
                          const float* table) {
    if (nTok > 0 && nHead > 0) {
        // Only the first nRot elements of each head are touched: x may be a view that starts inside
        // a row (MLA ropes the q_pe part of every head, x = q + dNope).
        checkFloats("rope", "x", x, (nTok * nHead - 1) * headDim + nRot);
        checkFloats("rope", "table", table, nTok * nRot);
    }
    m_in.rope(x, nTok, nHead, headDim, nRot, neox, table);
}

void CheckedBackend::storeKv(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok,
                             const float* k, const float* v) {
    if (nTok > 0) {
        const uint64_t elem = a.f16 ? 2 : 4;
        checkRows("storeKv", hostRows, nTok, count(a.nHeadKv) * (count(a.dimK) + count(a.dimV)) * elem);
        checkFloats("storeKv", "k", k, nTok * a.nHeadKv * a.dimK);
        checkFloats("storeKv", "v", v, nTok * a.nHeadKv * a.dimV);
    }
    m_in.storeKv(a, hostRows, nTok, k, v);
}

void CheckedBackend::attention(const backend::Attention& a, const backend::RowCache* hostRows, int64_t nTok,
                               const float* q, float* out) {
    if (nTok > 0) {
        const uint64_t elem = a.f16 ? 2 : 4;
        checkRows("attention", hostRows, nTok, count(a.nHeadKv) * (count(a.dimK) + count(a.dimV)) * elem);
        checkFloats("attention", "q", q, nTok * a.nHead * a.dimK);
        checkFloats("attention", "out", out, nTok * a.nHead * a.dimV);
        checkFloats("attention", "sinks", a.sinks, a.nHead, true);
    }
    m_in.attention(a, hostRows, nTok, q, out);
}

void CheckedBackend::latentAttention(const backend::LatentAttention& a, const backend::RowCache* hostRows,
                                     int64_t nTok, const float* q, float* out) {
    if (nTok > 0) {
        const uint64_t elem = a.f16 ? 2 : 4;
        checkRows("latentAttention", hostRows, nTok, (count(a.rank) + count(a.dRope)) * elem);
        checkFloats("latentAttention", "q", q, nTok * a.nHead * (a.dNope + a.dRope));
        checkFloats("latentAttention", "out", out, nTok * a.nHead * a.dV);
        checkMatrix("latentAttention", "kvB", a.kvB);
    }
    m_in.latentAttention(a, hostRows, nTok, q, out);
}

void CheckedBackend::roundAsMatmulInput(tensor::TensorType type, float* x, int64_t rows, int64_t K) {
    if (rows > 0) checkFloats("roundAsMatmulInput", "x", x, rows * K);
    m_in.roundAsMatmulInput(type, x, rows, K);
}

void CheckedBackend::copyRows(float* dst, int64_t ldd, const float* src, int64_t lds, int64_t rows, int64_t cols) {
    check("copyRows", "dst", dst, stridedFloatBytes(rows, ldd, cols));
    check("copyRows", "src", src, stridedFloatBytes(rows, lds, cols));
    m_in.copyRows(dst, ldd, src, lds, rows, cols);
}

void CheckedBackend::routeSoftmaxTopK(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                      float* weights) {
    if (nTok > 0) {
        checkFloats("routeSoftmaxTopK", "logits", logits, nTok * nExpert);
        checkInts("routeSoftmaxTopK", "experts", experts, nTok * U);
        checkFloats("routeSoftmaxTopK", "weights", weights, nTok * U);
    }
    m_in.routeSoftmaxTopK(logits, nTok, nExpert, U, experts, weights);
}

void CheckedBackend::routeTopKSoftmax(const float* logits, int64_t nTok, int nExpert, int U, int32_t* experts,
                                      float* weights) {
    if (nTok > 0) {
        checkFloats("routeTopKSoftmax", "logits", logits, nTok * nExpert);
        checkInts("routeTopKSoftmax", "experts", experts, nTok * U);
        checkFloats("routeTopKSoftmax", "weights", weights, nTok * U);
    }
    m_in.routeTopKSoftmax(logits, nTok, nExpert, U, experts, weights);
}

void CheckedBackend::routeGrouped(const backend::GroupedRouting& r, float* scores, int64_t nTok, int nExpert, int U,
                                  float* selection, int32_t* experts, float* weights) {
    if (nTok > 0) {
        checkFloats("routeGrouped", "scores", scores, nTok * nExpert);
        checkFloats("routeGrouped", "selection", selection, nTok * nExpert, true);
        checkInts("routeGrouped", "experts", experts, nTok * U);
        checkFloats("routeGrouped", "weights", weights, nTok * U);
        checkFloats("routeGrouped", "selectionBias", r.selectionBias, nExpert, true);
    }
    m_in.routeGrouped(r, scores, nTok, nExpert, U, selection, experts, weights);
}

void CheckedBackend::addExpertBias(float* y, const float* bias, const int32_t* experts, int64_t nPairs, int64_t n) {
    if (nPairs > 0) {
        checkFloats("addExpertBias", "y", y, nPairs * n);
        // The bias rows read are those of the experts named: up to the highest id. The ids are read
        // only once they are known to be backend memory, which on this wrapper is the host's.
        int64_t biasRows = 1;
        if (checkInts("addExpertBias", "experts", experts, nPairs)) {
            int32_t lowest = 0;
            for (int64_t p = 0; p < nPairs; ++p) {
                biasRows = std::max<int64_t>(biasRows, int64_t(experts[p]) + 1);
                lowest = std::min(lowest, experts[p]);
            }
            if (lowest < 0) violation("addExpertBias: experts holds the negative id " + std::to_string(lowest));
        }
        checkFloats("addExpertBias", "bias", bias, biasRows * n);
    }
    m_in.addExpertBias(y, bias, experts, nPairs, n);
}

void CheckedBackend::combineExperts(const float* y, const float* weights, int64_t nTok, int U, int64_t n, float* out) {
    if (nTok > 0) {
        checkFloats("combineExperts", "y", y, nTok * U * n);
        checkFloats("combineExperts", "weights", weights, nTok * U);
        checkFloats("combineExperts", "out", out, nTok * n);
    }
    m_in.combineExperts(y, weights, nTok, U, n, out);
}

}  // namespace verdict::test
