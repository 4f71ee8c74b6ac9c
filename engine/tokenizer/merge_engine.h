// Greedy pair merging shared by the SentencePiece and byte-level BPE models.
//
// Both llama.cpp tokenizers (llm_tokenizer_spm_session, llm_tokenizer_bpe_session) repeatedly
// merge the adjacent pair with the best priority (SPM: highest score, BPE: lowest merge rank),
// ties going to the leftmost pair, until no adjacent pair can merge. Their priority queues skip
// stale entries, which makes the result equal to "always take the best current pair"; this
// engine computes exactly that, by scanning for short inputs and with a heap for long ones.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace verdict::tok {

struct MergeSymbol {
    int32_t id;      // token id, a model-private id >= nVocab, or -1 (cannot merge)
    uint32_t start;  // first byte in the text being tokenized
    uint32_t len;    // bytes covered; 0 once merged into its left neighbour
    int32_t prev;
    int32_t next;
};

// Lookup(const MergeSymbol& left, const MergeSymbol& right, uint32_t& priority, int32_t& result)
// returns whether the pair can merge; smaller priority merges first.
template <class Lookup>
void runMerges(std::vector<MergeSymbol>& s, Lookup&& lookup) {
    const size_t n = s.size();
    if (n < 2) return;
    auto merge = [&](int32_t left, int32_t result) {
        MergeSymbol& l = s[size_t(left)];
        MergeSymbol& r = s[size_t(l.next)];
        l.id = result;
        l.len += r.len;
        r.len = 0;
        l.next = r.next;
        if (r.next >= 0) s[size_t(r.next)].prev = left;
    };

    constexpr size_t kScanLimit = 24;
    if (n <= kScanLimit) {
        // Priority of the pair (i, next(i)) for every live i; ~0 = cannot merge.
        uint32_t prio[kScanLimit];
        int32_t res[kScanLimit];
        auto eval = [&](int32_t i) {
            if (i < 0) return;
            const MergeSymbol& l = s[size_t(i)];
            prio[i] = ~0u;
            if (l.next < 0) return;
            uint32_t p;
            int32_t r;
            if (lookup(l, s[size_t(l.next)], p, r)) {
                prio[i] = p;
                res[i] = r;
            }
        };
        for (size_t i = 0; i < n; ++i) eval(int32_t(i));
        for (;;) {
            int32_t best = -1;
            uint32_t bestPrio = ~0u;
            for (int32_t i = 0; i >= 0; i = s[size_t(i)].next) {
                if (prio[i] < bestPrio) {
                    bestPrio = prio[i];
                    best = i;
                }
            }
            if (best < 0) break;
            merge(best, res[best]);
            eval(s[size_t(best)].prev);
            eval(best);
        }
        return;
    }

    // 4-ary min-heap of candidate pairs. An entry remembers the ids of both sides; it is stale
    // once either side changed (ids only change by merging, into a longer, different symbol).
    struct Entry {
        uint64_t key;  // priority << 32 | left index: smaller pops first
        int32_t leftId;
        int32_t rightId;
    };
    std::vector<Entry> heap;
    heap.reserve(n);
    auto push = [&](int32_t i) {
        if (i < 0) return;
        const MergeSymbol& l = s[size_t(i)];
        if (l.next < 0) return;
        const MergeSymbol& r = s[size_t(l.next)];
        uint32_t p;
        int32_t res;
        if (!lookup(l, r, p, res)) return;
        size_t k = heap.size();
        heap.push_back(Entry{(uint64_t(p) << 32) | uint32_t(i), l.id, r.id});
        const Entry e = heap[k];
        while (k > 0) {
            const size_t parent = (k - 1) / 4;
            if (heap[parent].key <= e.key) break;
            heap[k] = heap[parent];
            k = parent;
        }
        heap[k] = e;
    };
    auto popTop = [&]() {
        const Entry top = heap[0];
        const Entry last = heap.back();
        heap.pop_back();
        const size_t m = heap.size();
        if (m > 0) {
            size_t k = 0;
            for (;;) {
                const size_t first = 4 * k + 1;
                if (first >= m) break;
                size_t best = first;
                const size_t end = std::min(first + 4, m);
                for (size_t c = first + 1; c < end; ++c) {
                    if (heap[c].key < heap[best].key) best = c;
                }
                if (heap[best].key >= last.key) break;
                heap[k] = heap[best];
                k = best;
            }
            heap[k] = last;
        }
        return top;
    };
    for (size_t i = 0; i + 1 < n; ++i) push(int32_t(i));
    while (!heap.empty()) {
        const Entry e = popTop();
        const int32_t left = int32_t(e.key & 0xFFFFFFFFu);
        const MergeSymbol& l = s[size_t(left)];
        if (l.len == 0 || l.next < 0 || l.id != e.leftId || s[size_t(l.next)].id != e.rightId) continue;
        uint32_t p;
        int32_t res;
        if (!lookup(l, s[size_t(l.next)], p, res)) continue;
        merge(left, res);
        push(s[size_t(left)].prev);
        push(left);
    }
}

}  // namespace verdict::tok
