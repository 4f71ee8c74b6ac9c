// Byte-level BPE, as llama.cpp's llm_tokenizer_bpe_session (src/llama-vocab.cpp):
//   * the text is decoded as UTF-8 (an invalid byte becomes U+FFFD), split into words by the
//     pre-tokenizer and re-encoded; every byte of a word is one symbol, shown as its character
//     of the GPT-2 byte alphabet;
//   * adjacent symbols merge by the rank of tokenizer.ggml.merges, lowest first, leftmost on
//     ties (a merge applies even when its result is not a vocabulary entry);
//   * a final symbol that is no token is written as the tokens of its single bytes, as far as
//     they exist (llama.cpp drops the others).
// With ignore_merges (Llama-3 style), a word that is itself a token is emitted directly.
//
// Symbols are numbered as MergeTable says (models.h).
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

#include <algorithm>

namespace verdict::tok {

Result<std::unique_ptr<BpeModel>> BpeModel::create(const Vocab& vocab) {
    std::vector<std::string> pairs;  // texts of the merge results, for the crossing tables
    auto merges = MergeTable::build(vocab, [&](const std::string& joined) { pairs.push_back(joined); });
    if (!merges) return merges.error();
    std::unique_ptr<BpeModel> m(new BpeModel(vocab, std::move(merges.value())));
    for (const std::string& joined : pairs) {
        std::string raw;
        for (size_t off = 0; off < joined.size();) {
            const int b = alphabetCpToByte(decodeUtf8At(joined, off));
            if (b >= 0) raw.push_back(char(b));
        }
        m->addCrossings(raw);
    }

    for (unsigned a = 0; a < 128; ++a) {
        for (unsigned b = 0; b < 128; ++b) {
            const unsigned key = (a << 8) | b;
            const bool byBytes = (m->m_crossBytes[key >> 6] >> (key & 63)) & 1;
            if (byBytes || m->m_crossChars.contains((uint64_t(a) << 32) | b)) {
                const unsigned bit = a * 128 + b;
                m->m_crossAscii[bit >> 6] |= uint64_t(1) << (bit & 63);
            }
        }
    }

    std::string ch;
    for (int b = 0; b < 256; ++b) {
        ch.clear();
        appendUtf8(ch, byteToAlphabetCp(uint8_t(b)));
        m->m_byteSymbol[b] = m->m_merges.symbol(ch);
        for (const char byte : ch) {
            const int32_t t = vocab.find(std::string_view(&byte, 1));
            if (t != kNoToken) m->m_fallback[b].push_back(t);
        }
    }
    return m;
}

namespace {

// Length of the valid UTF-8 character at s[pos], 0 when there is none.
size_t charLengthAt(std::string_view s, size_t pos) {
    const int len = strictUtf8Sequence(s.substr(pos));
    return len > 0 ? size_t(len) : 0;
}

uint64_t charPairKey(std::string_view a, std::string_view b) {
    size_t off = 0;
    const uint64_t ca = decodeUtf8At(a, off);
    off = 0;
    return (ca << 32) | decodeUtf8At(b, off);
}

}  // namespace

void BpeModel::addCrossings(std::string_view raw) {
    // Walk the characters of the merge result while it decodes cleanly from its start; every
    // boundary in that prefix that also begins a whole character is a (char, char) crossing,
    // every other inner boundary a byte-pair crossing.
    std::vector<size_t> starts;  // char starts of the aligned prefix
    size_t pos = 0;
    while (pos < raw.size()) {
        const size_t len = charLengthAt(raw, pos);
        if (len == 0) break;
        starts.push_back(pos);
        pos += len;
    }
    const size_t alignedEnd = pos;  // raw[0, alignedEnd) is whole characters
    for (size_t j = 1; j < raw.size(); ++j) {
        const bool atStart = std::binary_search(starts.begin(), starts.end(), j);
        if (atStart && j < alignedEnd) {
            const size_t before = *(std::lower_bound(starts.begin(), starts.end(), j) - 1);
            m_crossChars.insert(charPairKey(raw.substr(before, j - before), raw.substr(j)));
        } else if (!(j < alignedEnd && !atStart)) {
            const unsigned key = (unsigned(uint8_t(raw[j - 1])) << 8) | uint8_t(raw[j]);
            m_crossBytes[key >> 6] |= uint64_t(1) << (key & 63);
        }
    }
}

bool BpeModel::crossable(uint32_t leftCp, uint32_t rightCp, uint8_t leftByte, uint8_t rightByte) const {
    if (leftCp < 128 && rightCp < 128) {
        const unsigned bit = leftCp * 128 + rightCp;
        return (m_crossAscii[bit >> 6] >> (bit & 63)) & 1;
    }
    const unsigned key = (unsigned(leftByte) << 8) | rightByte;
    if (m_crossBytes[key >> 6] & (uint64_t(1) << (key & 63))) return true;
    return m_crossChars.contains((uint64_t(leftCp) << 32) | rightCp);
}

void BpeModel::emitFallback(std::string_view bytes, std::vector<int32_t>& out) const {
    for (const char b : bytes) {
        const std::vector<int32_t>& f = m_fallback[uint8_t(b)];
        out.insert(out.end(), f.begin(), f.end());
    }
}

void BpeModel::encodeWord(std::string_view word, const uint32_t* cps, size_t nCps, std::vector<int32_t>& out,
                          std::vector<MergeSymbol>& syms, std::string& scratch) const {
    if (m_vocab.ignoreMerges) {
        scratch.clear();
        for (const char b : word) appendUtf8(scratch, byteToAlphabetCp(uint8_t(b)));
        const int32_t id = m_vocab.find(scratch);
        if (id != kNoToken) {
            out.push_back(id);
            return;
        }
    }
    // Cut the word where no merge can cross (see m_crossChars); the parts merge independently.
    size_t partBegin = 0;
    size_t pos = utf8EncodedLength(cps[0]);  // byte offset of character k
    for (size_t k = 1; k < nCps; ++k) {
        if (!crossable(cps[k - 1], cps[k], uint8_t(word[pos - 1]), uint8_t(word[pos]))) {
            mergePart(word, partBegin, pos, out, syms);
            partBegin = pos;
        }
        pos += utf8EncodedLength(cps[k]);
    }
    mergePart(word, partBegin, word.size(), out, syms);
}

void BpeModel::mergePart(std::string_view word, size_t begin, size_t end, std::vector<int32_t>& out,
                         std::vector<MergeSymbol>& syms) const {
    const int32_t nVocab = m_vocab.size();
    syms.clear();
    for (size_t i = begin; i < end; ++i) {
        const int32_t idx = int32_t(i - begin);
        syms.push_back(MergeSymbol{m_byteSymbol[uint8_t(word[i])], uint32_t(i), 1, idx - 1, idx + 1});
    }
    syms.back().next = -1;
    runMerges(syms, [this](const MergeSymbol& l, const MergeSymbol& r, uint32_t& prio, int32_t& result) {
        return m_merges.lookup(l, r, prio, result);
    });
    for (int32_t i = 0; i >= 0; i = syms[size_t(i)].next) {
        const MergeSymbol& s = syms[size_t(i)];
        if (s.id >= 0 && s.id < nVocab) out.push_back(s.id);
        else emitFallback(word.substr(s.start, s.len), out);
    }
}

void BpeModel::encode(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::string canonical;
    if (canonicalizeUtf8(text, canonical)) text = canonical;

    std::vector<uint32_t> cps;
    decodeUtf8(text, cps);
    std::vector<MergeSymbol> syms;
    std::string scratch;
    size_t bytePos = 0;
    auto onWord = [&](size_t b, size_t e) {
        // Words arrive in order and without gaps: advance the byte offset alongside.
        size_t bytes = 0;
        for (size_t k = b; k < e; ++k) bytes += utf8EncodedLength(cps[k]);
        encodeWord(text.substr(bytePos, bytes), cps.data() + b, e - b, out, syms, scratch);
        bytePos += bytes;
    };
    preTokenize(m_vocab.preInfo.type, cps.data(), cps.size(), WordSink(onWord));
}

}  // namespace verdict::tok
