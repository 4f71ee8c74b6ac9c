// The per-model tokenization algorithms behind Tokenizer (internal).
#pragma once

#include "tokenizer/flat_hash.h"
#include "tokenizer/merge_engine.h"
#include "tokenizer/vocab.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::tok {

// SentencePiece BPE (llama.cpp llm_tokenizer_spm): characters merge pairwise into the
// highest-scoring token; what never becomes a token falls back to <0xNN> byte tokens.
class SpmModel {
public:
    explicit SpmModel(const Vocab& vocab);
    // `text` is already prefixed and has spaces escaped as U+2581.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    // Per-call memo of character -> token id (direct-mapped, keyed by length and bytes).
    struct ChunkCache {
        std::vector<uint64_t> keys = std::vector<uint64_t>(4096, 0);
        std::vector<int32_t> ids = std::vector<int32_t>(4096, kNoToken);
    };
    void encodeSegment(std::string_view text, size_t begin, size_t end, std::vector<int32_t>& out,
                       std::vector<MergeSymbol>& syms, ChunkCache& cache) const;
    int32_t chunkId(std::string_view chunk, ChunkCache& cache) const;

    const Vocab& m_vocab;
    PairMap m_pairs;       // (left id, right id) -> merged token id
    KeySet m_crossable;    // pairs of adjacent characters that occur inside some token
    std::vector<uint64_t> m_crossableAscii = std::vector<uint64_t>(128 * 128 / 64, 0);  // same, ASCII pairs
    int32_t m_asciiIds[128];
    int32_t m_byteIds[256];  // byte fallback token per byte
};

// tokenizer.ggml.merges as a table over symbol ids: vocabulary entries keep their token id,
// strings that occur in merges but are no token get private ids >= nVocab, so that merging
// works on integers only. Shared by the byte-level and the character-level BPE.
class MergeTable {
public:
    // `onNewPair(joined)` sees the text of every (left, right) pair the first time it enters.
    template <class OnNewPair>
    static Result<MergeTable> build(const Vocab& vocab, OnNewPair&& onNewPair);
    // Symbol id of `text`: its token id, its private id, or -1.
    int32_t symbol(std::string_view text) const {
        const int32_t id = m_vocab->find(text);
        if (id != kNoToken) return id;
        const int32_t p = m_private.find(text);
        return p < 0 ? -1 : m_nVocab + p;
    }
    // runMerges' lookup: whether (left, right) merges, with its rank as the priority.
    bool lookup(const MergeSymbol& l, const MergeSymbol& r, uint32_t& priority, int32_t& result) const {
        if (l.id < 0 || r.id < 0) return false;
        const uint64_t* v = m_ranks.find(PairMap::key(l.id, r.id));
        if (!v) return false;
        priority = uint32_t(*v >> 32);
        result = int32_t(uint32_t(*v));
        return true;
    }

private:
    explicit MergeTable(const Vocab& vocab) : m_vocab(&vocab), m_nVocab(vocab.size()) {}
    const Vocab* m_vocab;
    int32_t m_nVocab;
    PairMap m_ranks;
    TextIndex m_private;
};

template <class OnNewPair>
Result<MergeTable> MergeTable::build(const Vocab& vocab, OnNewPair&& onNewPair) {
    MergeTable t(vocab);
    auto symbolOf = [&](std::string_view text) -> int32_t {
        const int32_t id = t.symbol(text);
        return id >= 0 ? id : t.m_nVocab + t.m_private.add(text);
    };
    t.m_ranks.reserve(vocab.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string& merge = vocab.merges[rank];
        // "left right": split at the first space after the first byte (llama.cpp find(' ', 1)).
        const size_t space = merge.find(' ', 1);
        if (space == std::string::npos) continue;  // llama.cpp records ("", "") which never matches
        const std::string_view left(merge.data(), space);
        const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
        if (left.empty() || right.empty()) continue;
        if (rank > 0xFFFFFFFEull) return Error{"tokenizer.ggml.merges: too many merges"};
        const int32_t l = symbolOf(left);
        const int32_t r = symbolOf(right);
        joined.assign(left);
        joined.append(right);
        const int32_t merged = symbolOf(joined);
        if (t.m_ranks.insert(PairMap::key(l, r), (uint64_t(rank) << 32) | uint32_t(merged))) onNewPair(joined);
    }
    return t;
}

// Byte-level BPE (llama.cpp llm_tokenizer_bpe): pre-tokenized words, bytes shown as the GPT-2
// alphabet, merged by rank.
class BpeModel {
public:
    static Result<std::unique_ptr<BpeModel>> create(const Vocab& vocab);
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    BpeModel(const Vocab& vocab, MergeTable merges) : m_vocab(vocab), m_merges(std::move(merges)) {}
    void encodeWord(std::string_view word, const uint32_t* cps, size_t nCps, std::vector<int32_t>& out,
                    std::vector<MergeSymbol>& syms, std::string& scratch) const;
    void mergePart(std::string_view word, size_t begin, size_t end, std::vector<int32_t>& out,
                   std::vector<MergeSymbol>& syms) const;
    void emitFallback(std::string_view bytes, std::vector<int32_t>& out) const;

    bool crossable(uint32_t leftCp, uint32_t rightCp, uint8_t leftByte, uint8_t rightByte) const;
    void addCrossings(std::string_view mergedText);

    const Vocab& m_vocab;
    MergeTable m_merges;
    // Where a merge result can span the boundary between two characters: pairs of whole
    // characters adjacent inside a merge result, and byte pairs at positions where a merge
    // result is not aligned to characters. Boundaries covered by neither split a word into
    // parts that merge independently.
    KeySet m_crossChars;
    std::vector<uint64_t> m_crossBytes = std::vector<uint64_t>(65536 / 64, 0);
    std::vector<uint64_t> m_crossAscii = std::vector<uint64_t>(128 * 128 / 64, 0);  // both, for ASCII pairs
    int32_t m_byteSymbol[256];    // symbol of each byte's alphabet character, -1 if none
    std::vector<int32_t> m_fallback[256];  // tokens emitted for a byte that ends up unmerged
};

// Character-level BPE ("gemma4"): spaces escaped as U+2581, the text cut into runs of newlines
// and runs of everything else; a newline run that is a token stays whole, every other run starts
// as one symbol per UTF-8 character and merges by rank; a final symbol that is no token is
// written as <0xNN> byte tokens.
class CharBpeModel {
public:
    static Result<std::unique_ptr<CharBpeModel>> create(const Vocab& vocab);
    // `text` is raw (spaces not yet escaped), one fragment between special tokens.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    CharBpeModel(const Vocab& vocab, MergeTable merges) : m_vocab(vocab), m_merges(std::move(merges)) {}
    void mergeRun(std::string_view run, std::vector<int32_t>& out, std::vector<MergeSymbol>& syms) const;

    const Vocab& m_vocab;
    MergeTable m_merges;
    int32_t m_byteIds[256];  // <0xNN> token per byte, kNoToken if absent
};

// WordPiece (llama.cpp llm_tokenizer_wpm).
void wpmEncode(const Vocab& vocab, std::string_view text, std::vector<int32_t>& out);

// Splits text at special tokens (llama.cpp tokenizer_st_partition).
class SpecialMatcher {
public:
    explicit SpecialMatcher(const Vocab& vocab);

    struct Fragment {
        int32_t token;   // kNoToken for a text fragment
        uint32_t begin;  // text range (text fragments)
        uint32_t end;
    };
    // Control and unknown tokens are matched only when parseSpecial; user-defined ones always.
    void partition(std::string_view text, bool parseSpecial, std::vector<Fragment>& out) const;

private:
    int32_t child(int32_t node, uint8_t byte) const {
        if (node == 0) return m_rootChild[byte];
        for (uint32_t e = m_firstEdge[size_t(node)], end = m_firstEdge[size_t(node) + 1]; e < end; ++e) {
            if (m_edgeByte[e] == byte) return m_edgeTarget[e];
        }
        return -1;
    }
    bool eligible(int32_t rank, bool parseSpecial) const;

    const Vocab& m_vocab;
    // Byte trie of the special token texts: the root's children in a table, every other node's
    // children as a short run of edges (most nodes have one child).
    int32_t m_rootChild[256];
    std::vector<uint32_t> m_firstEdge;  // node -> first edge; node + 1 -> end
    std::vector<uint8_t> m_edgeByte;
    std::vector<int32_t> m_edgeTarget;
    std::vector<int32_t> m_terminal;    // node -> rank in vocab.specialTokens, -1 if none
    bool m_firstByte[256] = {};
    size_t m_maxLength = 0;
    bool m_hasUserDefined = false;
};

}  // namespace verdict::tok
