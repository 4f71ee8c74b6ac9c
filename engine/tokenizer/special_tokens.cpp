// Splitting text at special tokens, with the result of llama.cpp's tokenizer_st_partition
// (src/llama-vocab.cpp): special tokens are taken longest first (same length: lower id first);
// each claims its leftmost non-overlapping occurrences in the text that no earlier token has
// claimed. LSTRIP / RSTRIP tokens also swallow the white space next to them.
//
// llama.cpp rescans the whole text once per special token; here one pass finds which token
// lengths occur at all, then each occurring length class is matched with a trie walk over the
// still unclaimed bytes (at most one token of a given length starts at a position).
#include "tokenizer/models.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace verdict::tok {

SpecialMatcher::SpecialMatcher(const Vocab& vocab) : m_vocab(vocab) {
    // Build with a hash map of edges, then lay the edges out per node.
    PairMap edges;  // (node, byte) -> child
    std::vector<std::vector<std::pair<uint8_t, int32_t>>> children(1);
    m_terminal.push_back(-1);  // root
    for (size_t rank = 0; rank < vocab.specialTokens.size(); ++rank) {
        const int32_t id = vocab.specialTokens[rank];
        const std::string_view t = vocab.text(id);
        if (t.empty()) continue;
        if (!(vocab.attr(id) & (kAttrControl | kAttrUnknown))) m_hasUserDefined = true;
        m_maxLength = std::max(m_maxLength, t.size());
        m_firstByte[uint8_t(t[0])] = true;
        int32_t node = 0;
        for (const char ch : t) {
            const uint64_t* found = edges.find(PairMap::key(node, uint8_t(ch)));
            int32_t next;
            if (found) {
                next = int32_t(*found);
            } else {
                next = int32_t(m_terminal.size());
                m_terminal.push_back(-1);
                children.emplace_back();
                children[size_t(node)].emplace_back(uint8_t(ch), next);
                edges.insert(PairMap::key(node, uint8_t(ch)), uint64_t(next));
            }
            node = next;
        }
        m_terminal[size_t(node)] = int32_t(rank);
    }
    std::fill(std::begin(m_rootChild), std::end(m_rootChild), -1);
    for (const auto& [byte, target] : children[0]) m_rootChild[byte] = target;
    m_firstEdge.reserve(children.size() + 1);
    for (const auto& c : children) {
        m_firstEdge.push_back(uint32_t(m_edgeByte.size()));
        for (const auto& [byte, target] : c) {
            m_edgeByte.push_back(byte);
            m_edgeTarget.push_back(target);
        }
    }
    m_firstEdge.push_back(uint32_t(m_edgeByte.size()));
}

bool SpecialMatcher::eligible(int32_t rank, bool parseSpecial) const {
    return parseSpecial || !(m_vocab.attr(m_vocab.specialTokens[size_t(rank)]) & (kAttrControl | kAttrUnknown));
}

void SpecialMatcher::partition(std::string_view text, bool parseSpecial, std::vector<Fragment>& out) const {
    out.clear();
    const size_t n = text.size();
    if (n == 0) return;
    auto whole = [&] { out.push_back(Fragment{kNoToken, 0, uint32_t(n)}); };
    if (m_maxLength == 0 || (!parseSpecial && !m_hasUserDefined)) return whole();

    // Which token lengths occur anywhere?
    std::vector<char> lengthOccurs(m_maxLength + 1, 0);
    bool any = false;
    for (size_t p = 0; p < n; ++p) {
        if (!m_firstByte[uint8_t(text[p])]) continue;
        int32_t node = 0;
        for (size_t d = 0; p + d < n; ++d) {
            node = child(node, uint8_t(text[p + d]));
            if (node < 0) break;
            const int32_t rank = m_terminal[size_t(node)];
            if (rank >= 0 && eligible(rank, parseSpecial)) {
                lengthOccurs[d + 1] = 1;
                any = true;
            }
        }
    }
    if (!any) return whole();

    enum : uint8_t { kFree = 0, kToken = 1, kStripped = 2 };
    std::vector<uint8_t> state(n, kFree);
    struct Selection {
        uint32_t pos, len, lstrip, rstrip;
        int32_t id;
    };
    std::vector<Selection> selections;
    struct Occurrence {
        int32_t rank;
        uint32_t pos;
    };
    std::vector<Occurrence> occ;
    auto isSpace = [](char ch) { return std::isspace(static_cast<unsigned char>(ch)) != 0; };

    for (size_t len = m_maxLength; len > 0; --len) {
        if (!lengthOccurs[len]) continue;
        occ.clear();
        for (size_t p = 0; p + len <= n; ++p) {
            if (state[p] != kFree || !m_firstByte[uint8_t(text[p])]) continue;
            int32_t node = 0;
            size_t d = 0;
            for (; d < len && state[p + d] == kFree; ++d) {
                node = child(node, uint8_t(text[p + d]));
                if (node < 0) break;
            }
            if (d != len || node < 0) continue;
            const int32_t rank = m_terminal[size_t(node)];
            if (rank >= 0 && eligible(rank, parseSpecial)) occ.push_back(Occurrence{rank, uint32_t(p)});
        }
        std::stable_sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) { return a.rank < b.rank; });
        size_t resumeAt = 0;  // a token resumes its search after its previous match
        int32_t lastRank = -1;
        for (const Occurrence& o : occ) {
            if (o.rank != lastRank) {
                lastRank = o.rank;
                resumeAt = 0;
            }
            if (o.pos < resumeAt) continue;
            bool free = true;
            for (size_t k = 0; k < len && free; ++k) free = state[o.pos + k] == kFree;
            if (!free) continue;
            const int32_t id = m_vocab.specialTokens[size_t(o.rank)];
            const uint32_t attr = m_vocab.attr(id);
            Selection sel{o.pos, uint32_t(len), 0, 0, id};
            std::fill(state.begin() + o.pos, state.begin() + o.pos + len, kToken);
            if (attr & kAttrLStrip) {
                for (size_t q = o.pos; q > 0 && state[q - 1] == kFree && isSpace(text[q - 1]); --q) {
                    state[q - 1] = kStripped;
                    ++sel.lstrip;
                }
            }
            size_t r = o.pos + len;
            if (attr & kAttrRStrip) {
                for (; r < n && state[r] == kFree && isSpace(text[r]); ++r) {
                    state[r] = kStripped;
                    ++sel.rstrip;
                }
            }
            resumeAt = r;
            selections.push_back(sel);
        }
    }

    std::sort(selections.begin(), selections.end(), [](const Selection& a, const Selection& b) { return a.pos < b.pos; });
    size_t cur = 0;
    for (const Selection& s : selections) {
        const size_t textEnd = s.pos - s.lstrip;
        if (textEnd > cur) out.push_back(Fragment{kNoToken, uint32_t(cur), uint32_t(textEnd)});
        out.push_back(Fragment{s.id, s.pos, s.pos + s.len});
        cur = s.pos + s.len + s.rstrip;
    }
    if (cur < n) out.push_back(Fragment{kNoToken, uint32_t(cur), uint32_t(n)});
}

}  // namespace verdict::tok
