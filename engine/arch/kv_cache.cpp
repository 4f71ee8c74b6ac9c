#include "arch/kv_cache.h"

#include "backend/ops/backend.h"

#include <algorithm>
#include <string>

namespace verdict::session {

KvCache::KvCache(backend::Backend& be, int64_t nLayer, int64_t nHeadKv, int64_t headDimK, int64_t headDimV,
                 int64_t capacity, bool f16, int64_t firstLayer)
    : m_be(be), m_nLayer(nLayer), m_nHeadKv(nHeadKv), m_headDimK(headDimK), m_headDimV(headDimV),
      m_capacity(capacity), m_firstLayer(std::clamp<int64_t>(firstLayer, 0, nLayer)), m_f16(f16) {
    const uint64_t elem = f16 ? 2 : 4;
    m_kBytes = static_cast<uint64_t>(nHeadKv * capacity * headDimK) * elem;
    const uint64_t vBytes = static_cast<uint64_t>(nHeadKv * capacity * headDimV) * elem;
    m_layerBytes = (m_kBytes + vBytes + 63) / 64 * 64;
    m_bytes = m_layerBytes * static_cast<uint64_t>(nLayer - m_firstLayer);
}

KvCache::~KvCache() {
    if (m_data) m_be.release(m_data);
}

Result<std::unique_ptr<KvCache>> KvCache::create(backend::Backend& be, int64_t nLayer, int64_t nHeadKv,
                                                 int64_t headDimK, int64_t headDimV, int64_t capacity, bool f16,
                                                 int64_t firstLayer) {
    std::unique_ptr<KvCache> c(new KvCache(be, nLayer, nHeadKv, headDimK, headDimV, capacity, f16, firstLayer));
    auto p = be.allocate(c->m_bytes == 0 ? 64 : c->m_bytes, "the KV cache", backend::Purpose::KvCache);
    if (!p)
        return Error{"cannot allocate the KV cache: " + std::to_string(c->m_bytes) + " bytes for "
                     + std::to_string(capacity) + " positions (" + p.error().message + ")"};
    c->m_data = static_cast<uint8_t*>(p.value());
    return c;
}

bool KvCache::sameLayout(const KvCache& o) const {
    return m_nLayer == o.m_nLayer && m_firstLayer == o.m_firstLayer && m_nHeadKv == o.m_nHeadKv &&
           m_headDimK == o.m_headDimK && m_headDimV == o.m_headDimV && m_f16 == o.m_f16;
}

void KvCache::copyPositions(const KvCache& src, int64_t from, int64_t to) {
    if (to <= from) return;
    const uint64_t elem = m_f16 ? 2 : 4;
    for (int64_t layer = 0; layer < m_nLayer - m_firstLayer; ++layer) {
        uint8_t* dst = m_data + layer * m_layerBytes;
        const uint8_t* s = src.m_data + layer * src.m_layerBytes;
        for (int64_t g = 0; g < m_nHeadKv; ++g) {
            m_be.copy(dst + ((g * m_capacity + from) * m_headDimK) * elem,
                      s + ((g * src.m_capacity + from) * m_headDimK) * elem,
                      static_cast<uint64_t>((to - from) * m_headDimK) * elem);
            m_be.copy(dst + m_kBytes + ((g * m_capacity + from) * m_headDimV) * elem,
                      s + src.m_kBytes + ((g * src.m_capacity + from) * m_headDimV) * elem,
                      static_cast<uint64_t>((to - from) * m_headDimV) * elem);
        }
    }
}

}  // namespace verdict::session
