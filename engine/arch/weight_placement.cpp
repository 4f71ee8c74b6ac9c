#include "arch/weight_placement.h"

#include <algorithm>

namespace verdict::arch {

WeightPlacement::~WeightPlacement() {
    if (m_be && m_data) m_be->release(m_data);
}

Result<std::unique_ptr<WeightPlacement>> WeightPlacement::upload(backend::Backend& be,
                                                                 std::vector<WeightRegion> regions) {
    std::erase_if(regions, [](const WeightRegion& r) { return r.host == nullptr || r.bytes == 0; });
    std::sort(regions.begin(), regions.end(), [](const WeightRegion& a, const WeightRegion& b) {
        return reinterpret_cast<uintptr_t>(a.host) < reinterpret_cast<uintptr_t>(b.host);
    });
    auto p = std::make_unique<WeightPlacement>();
    // Merge overlapping ranges (a tensor bound twice, a view and its tensor) into one span each.
    constexpr uint64_t kAlign = 256;  // every span starts aligned, as the mapping's tensors are
    for (const WeightRegion& r : regions) {
        const auto b = reinterpret_cast<uintptr_t>(r.host), e = b + r.bytes;
        if (!p->m_spans.empty() && b < p->m_spans.back().end) {
            p->m_spans.back().end = std::max(p->m_spans.back().end, e);
            continue;
        }
        p->m_spans.push_back({b, e, 0});
    }
    uint64_t total = 0;
    for (Span& s : p->m_spans) {
        s.offset = total;
        total += (s.end - s.begin + kAlign - 1) / kAlign * kAlign;
    }
    auto mem = be.allocate(std::max<uint64_t>(total, kAlign), "the model's weights", backend::Purpose::Weights);
    if (!mem) return mem.error();
    p->m_be = &be;
    p->m_data = static_cast<uint8_t*>(mem.value());
    p->m_bytes = total;
    for (const Span& s : p->m_spans)
        be.upload(p->m_data + s.offset, reinterpret_cast<const void*>(s.begin), s.end - s.begin);
    if (auto r = be.synchronize(); !r) return r.error();
    return p;
}

const void* WeightPlacement::find(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = std::upper_bound(m_spans.begin(), m_spans.end(), a,
                               [](uintptr_t x, const Span& s) { return x < s.begin; });
    if (it == m_spans.begin()) return nullptr;
    --it;
    if (a >= it->end) return nullptr;
    return m_data + it->offset + (a - it->begin);
}

}  // namespace verdict::arch
