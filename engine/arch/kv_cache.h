// The key/value cache of one session: for every layer, the rotated keys and the values of every
// position evaluated so far, in f32 (default, matches the llama.cpp references) or f16, in the
// memory of the backend that runs the forward passes (the backend ops read and write it).
//
// Layout per layer (see backend/cpu/ops_attention.h):
//   K: [nHeadKv][capacity][headDimK]    V: [nHeadKv][capacity][headDimV]
#pragma once

#include "verdict/engine/result.h"

namespace verdict::backend { class Backend; }

#include <cstdint>
#include <memory>

namespace verdict::session {

class KvCache {
public:
    // Layers [firstLayer, nLayer) (a split pass's backend holds only its blocks). Fails (instead of
    // aborting) when the backend cannot allocate the memory.
    static Result<std::unique_ptr<KvCache>> create(backend::Backend& be, int64_t nLayer, int64_t nHeadKv,
                                                   int64_t headDimK, int64_t headDimV, int64_t capacity, bool f16,
                                                   int64_t firstLayer = 0);
    ~KvCache();
    KvCache(const KvCache&) = delete;
    KvCache& operator=(const KvCache&) = delete;

    int64_t capacity() const { return m_capacity; }
    bool f16() const { return m_f16; }
    uint64_t bytes() const { return m_bytes; }

    // A layer's K, V right after it (backend memory): what a backend op's RowCache points at.
    uint8_t* layerBase(int64_t layer) { return m_data + (layer - m_firstLayer) * m_layerBytes; }

    // True when copyPositions can copy from `other`: the same layers, heads, sizes and element type.
    bool sameLayout(const KvCache& other) const;
    // Copies positions [from, to) of every layer from `src` (sameLayout, the same backend; to <= both
    // capacities): what evaluating the same tokens would have stored, without the forward pass.
    void copyPositions(const KvCache& src, int64_t from, int64_t to);

private:
    KvCache(backend::Backend& be, int64_t nLayer, int64_t nHeadKv, int64_t headDimK, int64_t headDimV,
            int64_t capacity, bool f16, int64_t firstLayer);

    backend::Backend& m_be;
    int64_t m_nLayer, m_nHeadKv, m_headDimK, m_headDimV, m_capacity, m_firstLayer;
    bool m_f16;
    uint64_t m_kBytes = 0, m_layerBytes = 0, m_bytes = 0;
    // Not zeroed: on the CPU pages are touched only as positions are written, so a large n_ctx
    // costs address space, not resident memory, until it is used.
    uint8_t* m_data = nullptr;
};

}  // namespace verdict::session
