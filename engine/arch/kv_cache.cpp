#include "arch/kv_cache.h"

#include "tensor/half.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace verdict::session {

KvCache::KvCache(int64_t nLayer, int64_t nHeadKv, int64_t headDimK, int64_t headDimV, int64_t capacity, bool f16)
    : m_nLayer(nLayer), m_nHeadKv(nHeadKv), m_headDimK(headDimK), m_headDimV(headDimV), m_capacity(capacity), m_f16(f16) {
    const uint64_t elem = f16 ? 2 : 4;
    m_kBytes = static_cast<uint64_t>(nHeadKv * capacity * headDimK) * elem;
    const uint64_t vBytes = static_cast<uint64_t>(nHeadKv * capacity * headDimV) * elem;
    m_layerBytes = (m_kBytes + vBytes + 63) / 64 * 64;
    m_bytes = m_layerBytes * static_cast<uint64_t>(nLayer);
    m_data.reset(static_cast<uint8_t*>(std::aligned_alloc(64, m_bytes == 0 ? 64 : m_bytes)));
}

Result<std::unique_ptr<KvCache>> KvCache::create(int64_t nLayer, int64_t nHeadKv, int64_t headDimK,
                                                 int64_t headDimV, int64_t capacity, bool f16) {
    std::unique_ptr<KvCache> c(new KvCache(nLayer, nHeadKv, headDimK, headDimV, capacity, f16));
    if (!c->m_data)
        return Error{"cannot allocate the KV cache: " + std::to_string(c->m_bytes) + " bytes for "
                     + std::to_string(capacity) + " positions"};
    return c;
}

void KvCache::store(int64_t layer, int64_t pos0, int64_t nTok, const float* kRows, const float* vRows) {
    uint8_t* base = m_data.get() + layer * m_layerBytes;
    const int64_t kRow = m_nHeadKv * m_headDimK, vRow = m_nHeadKv * m_headDimV;
    for (int64_t t = 0; t < nTok; ++t) {
        const int64_t pos = pos0 + t;
        for (int64_t g = 0; g < m_nHeadKv; ++g) {
            const float* ks = kRows + t * kRow + g * m_headDimK;
            const float* vs = vRows + t * vRow + g * m_headDimV;
            const int64_t kOff = (g * m_capacity + pos) * m_headDimK;
            const int64_t vOff = (g * m_capacity + pos) * m_headDimV;
            if (!m_f16) {
                std::memcpy(reinterpret_cast<float*>(base) + kOff, ks, sizeof(float) * m_headDimK);
                std::memcpy(reinterpret_cast<float*>(base + m_kBytes) + vOff, vs, sizeof(float) * m_headDimV);
            } else {
                tensor::fp32ToFp16Row(ks, reinterpret_cast<uint16_t*>(base) + kOff, m_headDimK);
                tensor::fp32ToFp16Row(vs, reinterpret_cast<uint16_t*>(base + m_kBytes) + vOff, m_headDimV);
            }
        }
    }
}

bool KvCache::sameLayout(const KvCache& o) const {
    return m_nLayer == o.m_nLayer && m_nHeadKv == o.m_nHeadKv && m_headDimK == o.m_headDimK &&
           m_headDimV == o.m_headDimV && m_f16 == o.m_f16;
}

void KvCache::copyPositions(const KvCache& src, int64_t from, int64_t to) {
    if (to <= from) return;
    const uint64_t elem = m_f16 ? 2 : 4;
    for (int64_t layer = 0; layer < m_nLayer; ++layer) {
        uint8_t* dst = m_data.get() + layer * m_layerBytes;
        const uint8_t* s = src.m_data.get() + layer * src.m_layerBytes;
        for (int64_t g = 0; g < m_nHeadKv; ++g) {
            std::memcpy(dst + ((g * m_capacity + from) * m_headDimK) * elem,
                        s + ((g * src.m_capacity + from) * m_headDimK) * elem,
                        static_cast<size_t>((to - from) * m_headDimK) * elem);
            std::memcpy(dst + m_kBytes + ((g * m_capacity + from) * m_headDimV) * elem,
                        s + src.m_kBytes + ((g * src.m_capacity + from) * m_headDimV) * elem,
                        static_cast<size_t>((to - from) * m_headDimV) * elem);
        }
    }
}

}  // namespace verdict::session
