#include "tokenizer/flat_hash.h"

#include <algorithm>

namespace verdict::tok {

void TextIndex::reserve(size_t n, size_t bytes) {
    m_blob.reserve(bytes);
    m_offsets.reserve(n + 1);
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    if (cap > m_slots.size()) {
        m_slots.assign(cap, Slot{});
        m_mask = cap - 1;
        for (size_t id = 0; id + 1 < m_offsets.size(); ++id) {
            const std::string_view s = at(int32_t(id));
            const uint64_t h = hashBytes(s.data(), s.size());
            size_t i = size_t(h) & m_mask;
            while (m_slots[i].id >= 0) i = (i + 1) & m_mask;
            m_slots[i] = Slot{uint32_t(h >> 32), int32_t(id)};
        }
    }
}

void TextIndex::grow() { reserve(std::max<size_t>(size() * 2, 8), m_blob.size()); }

int32_t TextIndex::add(std::string_view s, bool* duplicate) {
    if (duplicate) *duplicate = false;
    if ((size() + 1) * 2 > m_slots.size()) grow();
    const uint64_t h = hashBytes(s.data(), s.size());
    const uint32_t tag = uint32_t(h >> 32);
    size_t i = size_t(h) & m_mask;
    while (m_slots[i].id >= 0) {
        if (m_slots[i].hash == tag && at(m_slots[i].id) == s) {
            if (duplicate) *duplicate = true;
            return m_slots[i].id;
        }
        i = (i + 1) & m_mask;
    }
    const int32_t id = int32_t(size());
    m_blob.append(s);
    m_offsets.push_back(m_blob.size());
    m_slots[i] = Slot{tag, id};
    return id;
}

int32_t TextIndex::find(std::string_view s) const {
    if (m_slots.empty()) return -1;
    const uint64_t h = hashBytes(s.data(), s.size());
    const uint32_t tag = uint32_t(h >> 32);
    size_t i = size_t(h) & m_mask;
    while (m_slots[i].id >= 0) {
        if (m_slots[i].hash == tag && at(m_slots[i].id) == s) return m_slots[i].id;
        i = (i + 1) & m_mask;
    }
    return -1;
}

void PairMap::reserve(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    if (cap > m_slots.size()) rehash(cap);
}

void PairMap::rehash(size_t capacity) {
    std::vector<Entry> old = std::move(m_slots);
    m_slots.assign(capacity, Entry{});
    m_mask = capacity - 1;
    for (const Entry& e : old) {
        if (e.k == kEmpty) continue;
        size_t i = size_t(mix64(e.k)) & m_mask;
        while (m_slots[i].k != kEmpty) i = (i + 1) & m_mask;
        m_slots[i] = e;
    }
}

bool PairMap::insert(uint64_t k, uint64_t v) {
    if ((m_count + 1) * 2 > m_slots.size()) rehash(std::max<size_t>(m_slots.size() * 2, 16));
    size_t i = size_t(mix64(k)) & m_mask;
    while (m_slots[i].k != kEmpty) {
        if (m_slots[i].k == k) return false;
        i = (i + 1) & m_mask;
    }
    m_slots[i] = Entry{k, v};
    ++m_count;
    return true;
}

}  // namespace verdict::tok
