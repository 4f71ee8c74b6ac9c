// The per-model tokenization algorithms behind Tokenizer (internal).
#pragma once

#include "tokenizer/flat_hash.h"
#include "tokenizer/merge_engine.h"
#include "tokenizer/vocab.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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

// Byte-level BPE (llama.cpp llm_tokenizer_bpe): pre-tokenized words, bytes shown as the GPT-2
// alphabet, merged by rank.
class BpeModel {
public:
    static Result<std::unique_ptr<BpeModel>> create(const Vocab& vocab);
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    explicit BpeModel(const Vocab& vocab) : m_vocab(vocab) {}
    void encodeWord(std::string_view word, const uint32_t* cps, size_t nCps, std::vector<int32_t>& out,
                    std::vector<MergeSymbol>& syms, std::string& scratch) const;
    void mergePart(std::string_view word, size_t begin, size_t end, std::vector<int32_t>& out,
                   std::vector<MergeSymbol>& syms) const;
    void emitFallback(std::string_view bytes, std::vector<int32_t>& out) const;

    bool crossable(uint32_t leftCp, uint32_t rightCp, uint8_t leftByte, uint8_t rightByte) const;
    void addCrossings(std::string_view mergedText);

    const Vocab& m_vocab;
    PairMap m_ranks;              // (left, right) -> rank << 32 | merged symbol
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
