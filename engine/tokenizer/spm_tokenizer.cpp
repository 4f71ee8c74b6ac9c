// SentencePiece BPE, as llama.cpp's llm_tokenizer_spm_session (src/llama-vocab.cpp):
//   * the text is cut into "characters" by the length its lead bytes announce (no validation);
//   * adjacent symbols whose concatenation is a vocabulary token merge, highest score first,
//     ties to the leftmost pair;
//   * a final symbol that is no token is written as byte tokens (<0xNN>, else the byte itself).
//
// Speed-up that keeps the result identical: a boundary between two characters that never
// appear next to each other inside any token can never be crossed by a merge, so the text is
// cut there and the pieces are merged independently (their merges do not interact).
#include "tokenizer/merge_engine.h"
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

#include <bit>
#include <cstring>

namespace verdict::tok {

namespace {

// A character (1..4 bytes) packed into 32 bits. Different characters may share a key only
// when they differ in bytes that are zero, which only makes the "crossable" set larger: safe.
inline uint32_t packChunk(const char* p, size_t len) {
    uint32_t v = 0;
    std::memcpy(&v, p, len);
    return v;
}

inline size_t chunkLength(std::string_view t, size_t pos) {
    return std::min(utf8LeadLength(uint8_t(t[pos])), t.size() - pos);
}

// Score -> priority where a higher score gives a smaller number (order-preserving bit trick).
inline uint32_t scorePriority(float score) {
    if (score == 0.0f) score = 0.0f;  // -0 ties with +0 as in a float comparison
    uint32_t bits = std::bit_cast<uint32_t>(score);
    bits = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    return ~bits;
}

}  // namespace

SpmModel::SpmModel(const Vocab& vocab) : m_vocab(vocab) {
    const int32_t n = vocab.size();
    for (uint32_t c = 0; c < 128; ++c) {
        const char ch = char(c);
        m_asciiIds[c] = vocab.find(std::string_view(&ch, 1));
    }
    for (int b = 0; b < 256; ++b) m_byteIds[b] = vocab.byteToken(uint8_t(b));

    m_pairs.reserve(size_t(n) * 2);
    m_crossable.reserve(size_t(n) * 4);
    std::vector<size_t> cuts;
    for (int32_t id = 0; id < n; ++id) {
        const std::string_view t = vocab.text(id);
        cuts.clear();
        for (size_t pos = 0; pos < t.size(); pos += chunkLength(t, pos)) cuts.push_back(pos);
        cuts.push_back(t.size());
        for (size_t k = 1; k + 1 < cuts.size(); ++k) {
            const size_t a = cuts[k - 1], m = cuts[k], b = cuts[k + 1];
            m_crossable.insert((uint64_t(packChunk(t.data() + a, m - a)) << 32) | packChunk(t.data() + m, b - m));
            if (m - a == 1 && b - m == 1 && uint8_t(t[a]) < 128 && uint8_t(t[m]) < 128) {
                const unsigned bit = unsigned(uint8_t(t[a])) * 128 + uint8_t(t[m]);
                m_crossableAscii[bit >> 6] |= uint64_t(1) << (bit & 63);
            }
            const int32_t left = vocab.find(t.substr(0, m));
            if (left == kNoToken) continue;
            const int32_t right = vocab.find(t.substr(m));
            if (right == kNoToken) continue;
            m_pairs.insert(PairMap::key(left, right), uint64_t(uint32_t(id)));
        }
    }
}

int32_t SpmModel::chunkId(std::string_view chunk, ChunkCache& cache) const {
    if (chunk.size() == 1 && uint8_t(chunk[0]) < 128) return m_asciiIds[uint8_t(chunk[0])];
    const uint64_t key = (uint64_t(chunk.size()) << 32) | packChunk(chunk.data(), chunk.size());  // never 0
    const size_t slot = size_t((key * 0x9E3779B97F4A7C15ull) >> 52);
    if (cache.keys[slot] == key) return cache.ids[slot];
    const int32_t id = m_vocab.find(chunk);
    cache.keys[slot] = key;
    cache.ids[slot] = id;
    return id;
}

void SpmModel::encode(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    ChunkCache cache;
    std::vector<MergeSymbol> syms;
    size_t segBegin = 0;
    size_t prev = 0;
    size_t prevLen = chunkLength(text, 0);
    for (size_t pos = prevLen; pos < text.size();) {
        const size_t len = chunkLength(text, pos);
        bool crossable;
        if (prevLen == 1 && len == 1 && uint8_t(text[prev]) < 128 && uint8_t(text[pos]) < 128) {
            const unsigned bit = unsigned(uint8_t(text[prev])) * 128 + uint8_t(text[pos]);
            crossable = (m_crossableAscii[bit >> 6] >> (bit & 63)) & 1;
        } else {
            crossable = m_crossable.contains((uint64_t(packChunk(text.data() + prev, prevLen)) << 32) |
                                             packChunk(text.data() + pos, len));
        }
        if (!crossable) {
            encodeSegment(text, segBegin, pos, out, syms, cache);
            segBegin = pos;
        }
        prev = pos;
        prevLen = len;
        pos += len;
    }
    encodeSegment(text, segBegin, text.size(), out, syms, cache);
}

void SpmModel::encodeSegment(std::string_view text, size_t begin, size_t end, std::vector<int32_t>& out,
                             std::vector<MergeSymbol>& syms, ChunkCache& cache) const {
    syms.clear();
    for (size_t pos = begin; pos < end;) {
        const size_t len = chunkLength(text, pos);
        const int32_t idx = int32_t(syms.size());
        syms.push_back(MergeSymbol{chunkId(text.substr(pos, len), cache), uint32_t(pos), uint32_t(len), idx - 1, idx + 1});
        pos += len;
    }
    syms.back().next = -1;

    runMerges(syms, [&](const MergeSymbol& l, const MergeSymbol& r, uint32_t& prio, int32_t& result) {
        int32_t merged;
        if (l.id >= 0 && r.id >= 0) {
            const uint64_t* v = m_pairs.find(PairMap::key(l.id, r.id));
            if (!v) return false;
            merged = int32_t(*v);
        } else {
            // A character that is no token: look the concatenated text up directly.
            merged = m_vocab.find(text.substr(l.start, size_t(l.len) + r.len));
            if (merged == kNoToken) return false;
        }
        prio = scorePriority(m_vocab.scores[size_t(merged)]);
        result = merged;
        return true;
    });

    for (int32_t i = 0; i >= 0; i = syms[size_t(i)].next) {
        const MergeSymbol& s = syms[size_t(i)];
        if (s.id >= 0) {
            out.push_back(s.id);
            continue;
        }
        for (uint32_t k = 0; k < s.len; ++k) {
            const int32_t b = m_byteIds[uint8_t(text[s.start + k])];
            // llama.cpp aborts when a vocabulary lacks a byte token; unknown is the safe stand-in.
            if (b != kNoToken) out.push_back(b);
            else if (m_vocab.unk != kNoToken) out.push_back(m_vocab.unk);
        }
    }
}

}  // namespace verdict::tok
