// The key/value cache of one session: for every layer, the rotated keys and the values of every
// position evaluated so far, in f32 (default, matches the llama.cpp references) or f16.
//
// Layout per layer (see backend/cpu/ops_attention.h):
//   K: [nHeadKv][capacity][headDimK]    V: [nHeadKv][capacity][headDimV]
#pragma once

#include "verdict/engine/result.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace verdict::session {

class KvCache {
public:
    // Fails (instead of aborting) when the memory cannot be allocated.
    static Result<std::unique_ptr<KvCache>> create(int64_t nLayer, int64_t nHeadKv, int64_t headDimK,
                                                   int64_t headDimV, int64_t capacity, bool f16);

    int64_t capacity() const { return m_capacity; }
    bool f16() const { return m_f16; }
    uint64_t bytes() const { return m_bytes; }

    const void* k(int64_t layer) const { return m_data.get() + layer * m_layerBytes; }
    const void* v(int64_t layer) const { return m_data.get() + layer * m_layerBytes + m_kBytes; }
    // A layer's K, V right after it: what a backend op's RowCache points at.
    uint8_t* layerBase(int64_t layer) { return m_data.get() + layer * m_layerBytes; }

    // Writes nTok positions starting at pos0: kRows [nTok][nHeadKv*headDimK], vRows
    // [nTok][nHeadKv*headDimV], converting to f16 when the cache is f16.
    void store(int64_t layer, int64_t pos0, int64_t nTok, const float* kRows, const float* vRows);

    // True when copyPositions can copy from `other`: the same layers, heads, sizes and element type.
    bool sameLayout(const KvCache& other) const;
    // Copies positions [from, to) of every layer from `src` (sameLayout; to <= both capacities):
    // what evaluating the same tokens would have stored, without the forward pass.
    void copyPositions(const KvCache& src, int64_t from, int64_t to);

private:
    KvCache(int64_t nLayer, int64_t nHeadKv, int64_t headDimK, int64_t headDimV, int64_t capacity, bool f16);

    int64_t m_nLayer, m_nHeadKv, m_headDimK, m_headDimV, m_capacity;
    bool m_f16;
    uint64_t m_kBytes = 0, m_layerBytes = 0, m_bytes = 0;
    struct Free { void operator()(uint8_t* p) const { std::free(p); } };
    // Not zeroed: pages are touched only as positions are written, so a large n_ctx costs
    // address space, not resident memory, until it is used.
    std::unique_ptr<uint8_t, Free> m_data;
};

}  // namespace verdict::session
