// Small open-addressing hash tables used by the tokenizers: a string -> id index that owns its
// strings, and a 64-bit key -> 64-bit value map for (left id, right id) merge pairs.
// Both are filled once at load time and then only read, so lookups are safe from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok {

inline uint64_t mix64(uint64_t x) {
    // splitmix64 finalizer
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

inline uint64_t hashBytes(const char* p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t(n) * 0xFF51AFD7ED558CCDull);
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        h = (h ^ mix64(v)) * 0x9E3779B97F4A7C15ull;
        p += 8;
        n -= 8;
    }
    uint64_t v = 0;
    std::memcpy(&v, p, n);
    h = (h ^ mix64(v + n)) * 0x9E3779B97F4A7C15ull;
    return mix64(h);
}

// Strings numbered 0..size()-1 in insertion order, with lookup by content.
class TextIndex {
public:
    // Appends `s` and returns its id; when `s` is already present returns the existing id and
    // sets *duplicate (if given) instead.
    int32_t add(std::string_view s, bool* duplicate = nullptr);
    int32_t find(std::string_view s) const;  // -1 when absent
    std::string_view at(int32_t id) const {
        return {m_blob.data() + m_offsets[size_t(id)], m_offsets[size_t(id) + 1] - m_offsets[size_t(id)]};
    }
    size_t size() const { return m_offsets.size() - 1; }
    void reserve(size_t n, size_t bytes);

private:
    struct Slot {
        uint32_t hash = 0;
        int32_t id = -1;
    };
    void grow();

    std::string m_blob;
    std::vector<size_t> m_offsets{0};
    std::vector<Slot> m_slots;
    size_t m_mask = 0;
};

// uint64 key -> uint64 value; key ~0 is reserved as the empty marker.
class PairMap {
public:
    static uint64_t key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
    void reserve(size_t n);
    // Inserts when absent; returns false (keeping the old value) when the key exists.
    bool insert(uint64_t k, uint64_t v);
    const uint64_t* find(uint64_t k) const {
        if (m_slots.empty()) return nullptr;
        size_t i = size_t(mix64(k)) & m_mask;
        for (;;) {
            const Entry& e = m_slots[i];
            if (e.k == k) return &e.v;
            if (e.k == kEmpty) return nullptr;
            i = (i + 1) & m_mask;
        }
    }
    size_t size() const { return m_count; }

private:
    static constexpr uint64_t kEmpty = ~0ull;
    struct Entry {
        uint64_t k = kEmpty;
        uint64_t v = 0;
    };
    void rehash(size_t capacity);

    std::vector<Entry> m_slots;
    size_t m_mask = 0;
    size_t m_count = 0;
};

// Set of uint64 keys (same scheme as PairMap).
class KeySet {
public:
    void reserve(size_t n) { m_map.reserve(n); }
    void insert(uint64_t k) { m_map.insert(k, 0); }
    bool contains(uint64_t k) const { return m_map.find(k) != nullptr; }
    size_t size() const { return m_map.size(); }

private:
    PairMap m_map;
};

}  // namespace verdict::tok
