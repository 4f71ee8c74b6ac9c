// Character-level BPE, tokenizer.ggml.model "gemma4" (llama.cpp v0.5.0; the rules as the
// fixtures' tokenizer/README.md describes them and its 46 vectors confirm):
//   * the fragment is decoded as UTF-8 (an invalid byte becomes U+FFFD, as in the byte-level
//     BPE) and every space is escaped as U+2581; no space prefix is added;
//   * it is cut into maximal runs of '\n' and maximal runs of anything else;
//   * a run of newlines that is itself a token is that token;
//   * otherwise each UTF-8 character is one symbol and adjacent symbols merge by the rank of
//     tokenizer.ggml.merges, lowest first, leftmost on ties (MergeTable, runMerges);
//   * a final symbol that is no token is written as the <0xNN> tokens of its bytes.
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

#include <algorithm>

namespace verdict::tok {

namespace {
constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581
}

Result<std::unique_ptr<CharBpeModel>> CharBpeModel::create(const Vocab& vocab) {
    auto merges = MergeTable::build(vocab, [](const std::string&) {});
    if (!merges) return merges.error();
    std::unique_ptr<CharBpeModel> m(new CharBpeModel(vocab, std::move(merges.value())));
    for (int b = 0; b < 256; ++b) m->m_byteIds[b] = vocab.byteToken(uint8_t(b));
    return m;
}

void CharBpeModel::mergeRun(std::string_view run, std::vector<int32_t>& out, std::vector<MergeSymbol>& syms) const {
    syms.clear();
    for (size_t pos = 0; pos < run.size();) {
        const size_t len = std::min(utf8LeadLength(uint8_t(run[pos])), run.size() - pos);
        const int32_t idx = int32_t(syms.size());
        syms.push_back(MergeSymbol{m_merges.symbol(run.substr(pos, len)), uint32_t(pos), uint32_t(len), idx - 1,
                                   idx + 1});
        pos += len;
    }
    if (syms.empty()) return;
    syms.back().next = -1;
    runMerges(syms, [this](const MergeSymbol& l, const MergeSymbol& r, uint32_t& prio, int32_t& result) {
        return m_merges.lookup(l, r, prio, result);
    });
    const int32_t nVocab = m_vocab.size();
    for (int32_t i = 0; i >= 0; i = syms[size_t(i)].next) {
        const MergeSymbol& s = syms[size_t(i)];
        if (s.id >= 0 && s.id < nVocab) {
            out.push_back(s.id);
            continue;
        }
        for (const char b : run.substr(s.start, s.len)) {
            const int32_t t = m_byteIds[uint8_t(b)];
            if (t != kNoToken) out.push_back(t);
            else if (m_vocab.unk != kNoToken) out.push_back(m_vocab.unk);
        }
    }
}

void CharBpeModel::encode(std::string_view text, std::vector<int32_t>& out) const {
    if (text.empty()) return;
    std::string canonical;
    if (canonicalizeUtf8(text, canonical)) text = canonical;
    std::string escaped;
    escaped.reserve(text.size() + text.size() / 4);
    for (const char ch : text) {
        if (ch == ' ') escaped.append(kEscapedSpace);
        else escaped.push_back(ch);
    }
    const std::string_view s = escaped;
    std::vector<MergeSymbol> syms;
    for (size_t pos = 0; pos < s.size();) {
        const bool newlines = s[pos] == '\n';
        size_t end = pos;
        while (end < s.size() && (s[end] == '\n') == newlines) ++end;
        const std::string_view run = s.substr(pos, end - pos);
        const int32_t whole = newlines ? m_vocab.find(run) : kNoToken;
        if (whole != kNoToken) out.push_back(whole);
        else mergeRun(run, out, syms);
        pos = end;
    }
}

}  // namespace verdict::tok
