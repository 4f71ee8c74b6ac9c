#include "tokenizer/pre_tokenizer.h"

#include "tokenizer/pre_tokenizer_detail.h"

#include <algorithm>

namespace verdict::tok {

using namespace pretok;

namespace {

struct NamedPre {
    std::string_view name;
    PreTokenizerInfo info;
};

PreTokenizerInfo make(PreType t, bool cleanSpaces = true) {
    PreTokenizerInfo i;
    i.type = t;
    i.cleanSpaces = cleanSpaces;
    return i;
}

PreTokenizerInfo withIgnoreMergesAndBos(PreTokenizerInfo i) {
    i.ignoreMerges = true;
    i.addBos = true;
    return i;
}

PreTokenizerInfo withSep(PreTokenizerInfo i) {
    i.addSep = true;
    return i;
}

PreTokenizerInfo withoutBos(PreTokenizerInfo i) {
    i.noBos = true;
    return i;
}

// Names and flags from llama.cpp's llama_vocab::impl::load (src/llama-vocab.cpp).
const NamedPre kPreTokenizers[] = {
    {"default", make(PreType::Default)},
    {"llama3", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"llama-v3", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"llama-bpe", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"falcon3", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"falcon-h1", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"pixtral", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"midm-2.0", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"lfm2", withIgnoreMergesAndBos(make(PreType::Llama3))},
    {"dbrx", make(PreType::Llama3)},
    {"smaug-bpe", make(PreType::Llama3)},
    {"glm4", withoutBos(make(PreType::Llama3))},
    {"chatglm-bpe", withoutBos(make(PreType::Llama3))},
    {"deepseek-llm", make(PreType::DeepseekLlm, false)},
    {"deepseek-coder", make(PreType::DeepseekCoder, false)},
    {"deepseek-v3", make(PreType::Deepseek3, false)},
    {"hunyuan-dense", make(PreType::Deepseek3, false)},
    {"falcon", make(PreType::Falcon)},
    {"mpt", make(PreType::Gpt2)},
    {"gpt-2", make(PreType::Gpt2)},
    {"phi-2", make(PreType::Gpt2)},
    {"jina-es", make(PreType::Gpt2)},
    {"jina-de", make(PreType::Gpt2)},
    {"gigachat", make(PreType::Gpt2)},
    {"jina-v2-es", make(PreType::Gpt2)},
    {"jina-v2-de", make(PreType::Gpt2)},
    {"a.x-4.0", make(PreType::Gpt2)},
    {"mellum", make(PreType::Gpt2)},
    {"modern-bert", make(PreType::Gpt2)},
    {"exaone4", make(PreType::Gpt2)},
    {"olmo", make(PreType::Gpt2)},
    {"jais", make(PreType::Gpt2)},
    {"trillion", make(PreType::Gpt2, false)},
    {"granite-docling", make(PreType::Gpt2, false)},
    {"jina-v1-en", withSep(make(PreType::Gpt2))},
    {"jina-v2-code", withSep(make(PreType::Gpt2))},
    {"roberta-bpe", withSep(make(PreType::Gpt2))},
    {"starcoder", make(PreType::Starcoder)},
    {"refact", make(PreType::Starcoder)},
    {"command-r", make(PreType::Starcoder, false)},
    {"smollm", make(PreType::Starcoder, false)},
    {"codeshell", make(PreType::Starcoder)},
    {"exaone", make(PreType::Starcoder)},
    {"minerva-7b", make(PreType::Starcoder)},
    {"qwen2", make(PreType::Qwen2, false)},
    {"qwen35", make(PreType::Qwen35, false)},
    {"deepseek-r1-qwen", make(PreType::Qwen2, false)},
    {"kormo", make(PreType::Qwen2, false)},
    {"megrez", make(PreType::Qwen2)},
    {"stablelm2", make(PreType::Qwen2)},
    {"hunyuan", make(PreType::Qwen2, false)},
    {"grok-2", make(PreType::Qwen2, false)},
    {"gpt-4o", make(PreType::Gpt4o, false)},
    {"llama4", make(PreType::Gpt4o, false)},
    {"minimax-m2", make(PreType::Gpt4o, false)},
    {"tekken", withIgnoreMergesAndBos(make(PreType::Tekken, false))},
    {"kimi-k2", make(PreType::KimiK2, false)},
    {"bloom", make(PreType::Bloom)},
    {"gpt3-finnish", make(PreType::Bloom)},
    {"poro-chat", make(PreType::Bloom, false)},
    {"viking", make(PreType::Viking, false)},
};

// ---- single-class expressions ----------------------------------------------------------

// \p{P} plus the ASCII symbols llama.cpp lists: [\p{P}\$\+<=>\^~\|]+
// (Predicates and matchers are lambdas so that the templates below inline them.)
constexpr auto isPunctOrListedSymbol = [](const uint32_t* c, size_t i, size_t e) {
    if (i >= e) return false;
    const uint32_t x = c[i];
    if (x == '$' || x == '+' || x == '<' || x == '=' || x == '>' || x == '^' || x == '~' || x == '|') return true;
    return (regexFlagsAt(c, i, e) & kCpPunct) != 0;
};

template <class Pred>
size_t runOf(const uint32_t* c, size_t p, size_t e, Pred pred, size_t maxLen = size_t(-1)) {
    size_t end = p;
    while (end < e && end - p < maxLen && pred(c, end, e)) ++end;
    return end - p;
}

constexpr auto isNumber = [](const uint32_t* c, size_t i, size_t e) { return (regexFlagsAt(c, i, e) & kCpNumber) != 0; };
constexpr auto isLetter = [](const uint32_t* c, size_t i, size_t e) { return (regexFlagsAt(c, i, e) & kCpLetter) != 0; };
constexpr auto isPunct = [](const uint32_t* c, size_t i, size_t e) { return (regexFlagsAt(c, i, e) & kCpPunct) != 0; };

// \s?X+ : one optional white space before a run of X.
template <class Pred>
size_t spaceThenRun(const uint32_t* c, size_t p, size_t e, Pred pred) {
    if (isSpaceAt(c, p, e) && p + 1 < e && pred(c, p + 1, e)) return 1 + runOf(c, p + 1, e, pred);
    return runOf(c, p, e, pred);
}

struct CpRange {
    uint32_t lo, hi;
};

// Character classes of the DeepSeek expressions, as code point ranges (llama-vocab.cpp; the
// letter class lists the cased letters of Unicode).
const CpRange kDeepseekLetters[] = {
    {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA},
    {0x1BC, 0x1BF}, {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377},
    {0x37B, 0x37D}, {0x37F, 0x37F}, {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C},
    {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481}, {0x48A, 0x52F}, {0x531, 0x556},
    {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF},
    {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15}, {0x1F18, 0x1F1D},
    {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE},
    {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC},
    {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107}, {0x210A, 0x2113},
    {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126}, {0x2128, 0x2128},
    {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F}, {0x2145, 0x2149},
    {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE},
    {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F}, {0xA771, 0xA787},
    {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17}, {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
// [!-/:-~！-／：-～‘-‟　-。]
const CpRange kDeepseekPunct[] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002},
};
// [一-龥ࠀ-一가-퟿]
const CpRange kDeepseekCjk[] = {{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}};
// [一-龥぀-ゟ゠-ヿ]
const CpRange kDeepseek3Cjk[] = {{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}};

// A character class of a std::wregex expression, tested on code points as that path sees them
// (wideSeen): a bitmap over the BMP with the white space mapping folded in, ranges above it.
class CpClass {
public:
    template <size_t N>
    explicit CpClass(const CpRange (&r)[N]) : m_ranges(r, r + N), m_bmp(0x10000 / 64, 0) {
        for (uint32_t cp = 0; cp < 0x10000; ++cp) {
            if (inRanges(wideSeen(cp))) m_bmp[cp >> 6] |= uint64_t(1) << (cp & 63);
        }
    }
    bool contains(uint32_t cp) const {
        if (cp < 0x10000) return (m_bmp[cp >> 6] >> (cp & 63)) & 1;
        return inRanges(cp);  // no white space above the BMP
    }

private:
    bool inRanges(uint32_t cp) const {
        for (const CpRange& x : m_ranges) {
            if (cp >= x.lo && cp <= x.hi) return true;
        }
        return false;
    }
    std::vector<CpRange> m_ranges;
    std::vector<uint64_t> m_bmp;
};

const CpClass& deepseekLetters() {
    static const CpClass c(kDeepseekLetters);
    return c;
}
const CpClass& deepseekPunct() {
    static const CpClass c(kDeepseekPunct);
    return c;
}
const CpClass& deepseekCjk() {
    static const CpClass c(kDeepseekCjk);
    return c;
}
const CpClass& deepseek3Cjk() {
    static const CpClass c(kDeepseek3Cjk);
    return c;
}

auto wideClass(const CpClass& cls) {
    return [&cls](const uint32_t* c, size_t i, size_t e) { return i < e && cls.contains(c[i]); };
}

// [^(\s|.,!?…。，、।۔،)] of the Bloom family.
constexpr auto isBloomWordChar = [](const uint32_t* c, size_t i, size_t e) {
    if (i >= e || isSpaceAt(c, i, e)) return false;
    switch (c[i]) {
        case '(': case '|': case '.': case ',': case '!': case '?': case ')':
        case 0x2026: case 0x3002: case 0xFF0C: case 0x3001: case 0x0964: case 0x06D4: case 0x060C:
            return false;
        default:
            return true;
    }
};

// ---- matchers of the single-class expressions ------------------------------------------

constexpr auto matchPunctRun = [](const uint32_t* c, size_t p, size_t e) { return runOf(c, p, e, isPunctOrListedSymbol); };
constexpr auto matchNumberRun = [](const uint32_t* c, size_t p, size_t e) { return runOf(c, p, e, isNumber); };
constexpr auto matchNumber = [](const uint32_t* c, size_t p, size_t e) { return runOf(c, p, e, isNumber, 1); };
constexpr auto matchNumber3 = [](const uint32_t* c, size_t p, size_t e) { return runOf(c, p, e, isNumber, 3); };

// [0-9][0-9][0-9]
constexpr auto matchThreeDigits = [](const uint32_t* c, size_t p, size_t e) -> size_t {
    auto d = [&](size_t i) { return i < e && c[i] >= '0' && c[i] <= '9'; };
    return (d(p) && d(p + 1) && d(p + 2)) ? 3 : 0;
};

// [\r\n]
constexpr auto matchLineBreak = [](const uint32_t* c, size_t p, size_t) -> size_t { return isCrLf(c[p]) ? 1 : 0; };

//  ?[^(\s|.,!?…。，、।۔،)]+
constexpr auto matchBloom = [](const uint32_t* c, size_t p, size_t e) {
    if (c[p] == ' ' && isBloomWordChar(c, p + 1, e)) return 1 + runOf(c, p + 1, e, isBloomWordChar);
    return runOf(c, p, e, isBloomWordChar);
};

// \s+$ : the white space that ends the piece.
template <class Next>
void splitTrailingSpace(const uint32_t* c, size_t b, size_t e, Next&& next) {
    size_t t = e;
    while (t > b && isSpaceAt(c, t - 1, e)) --t;
    if (t > b) next(b, t);
    if (t < e) next(t, e);
}

}  // namespace

std::optional<PreTokenizerInfo> lookupPreTokenizer(std::string_view name) {
    if (name.empty()) return make(PreType::Default);
    for (const NamedPre& p : kPreTokenizers) {
        if (p.name == name) return p.info;
    }
    return std::nullopt;
}

// Stages run depth first: every piece a stage produces goes straight through the following
// stages, so no list of intermediate pieces is ever built.
void preTokenize(PreType type, const uint32_t* c, size_t n, WordSink sink) {
    if (n == 0) return;
    auto gpt2 = [&](auto&& next) {
        return [c, &next](size_t b, size_t e) { splitGpt2(c, b, e, WordSink(next)); };
    };
    auto by = [c](auto match, auto&& next) {
        return [c, match, &next](size_t b, size_t e) { splitByMatches(c, b, e, match, next); };
    };
    switch (type) {
        case PreType::Default: {
            auto s4 = by(matchThreeDigits, sink);
            auto s3 = by(matchNumberRun, s4);
            auto s2 = gpt2(s3);
            by(matchPunctRun, s2)(0, n);
            break;
        }
        case PreType::Gpt2:
            splitGpt2(c, 0, n, sink);
            break;
        case PreType::Llama3:
            splitLlama3(c, 0, n, 3, sink);
            break;
        case PreType::Qwen2:
            splitLlama3(c, 0, n, 1, sink);
            break;
        case PreType::Qwen35:
            splitLlama3(c, 0, n, 1, sink, true);
            break;
        case PreType::DeepseekLlm: {
            auto s6 = by(matchNumberRun, sink);
            auto s5 = by([&k = deepseekCjk()](const uint32_t* t, size_t p, size_t e) { return runOf(t, p, e, wideClass(k)); }, s6);
            auto s4 = [c, &s5](size_t b, size_t e) { splitTrailingSpace(c, b, e, s5); };
            auto s3 = by([&k = deepseekPunct()](const uint32_t* t, size_t p, size_t e) { return spaceThenRun(t, p, e, wideClass(k)); }, s4);
            auto s2 = by([&k = deepseekLetters()](const uint32_t* t, size_t p, size_t e) { return spaceThenRun(t, p, e, wideClass(k)); }, s3);
            by(matchLineBreak, s2)(0, n);
            break;
        }
        case PreType::DeepseekCoder: {
            auto s5 = by(matchNumber, sink);
            auto s4 = by([&k = deepseekCjk()](const uint32_t* t, size_t p, size_t e) { return runOf(t, p, e, wideClass(k)); }, s5);
            auto s3 = by([](const uint32_t* t, size_t p, size_t e) { return spaceThenRun(t, p, e, isPunct); }, s4);
            auto s2 = by([](const uint32_t* t, size_t p, size_t e) { return spaceThenRun(t, p, e, isLetter); }, s3);
            by(matchLineBreak, s2)(0, n);
            break;
        }
        case PreType::Deepseek3: {
            auto s3 = by([](const uint32_t* t, size_t p, size_t e) { return matchDeepseek3(t, p, e); }, sink);
            auto s2 = by([&k = deepseek3Cjk()](const uint32_t* t, size_t p, size_t e) { return runOf(t, p, e, wideClass(k)); }, s3);
            by(matchNumber3, s2)(0, n);
            break;
        }
        case PreType::Falcon: {
            auto s3 = by(matchThreeDigits, sink);
            auto s2 = gpt2(s3);
            by(matchPunctRun, s2)(0, n);
            break;
        }
        case PreType::Starcoder: {
            auto s2 = gpt2(sink);
            by(matchNumber, s2)(0, n);
            break;
        }
        case PreType::Gpt4o:
            by([](const uint32_t* t, size_t p, size_t e) { return matchGpt4o(t, p, e, true, 3); }, sink)(0, n);
            break;
        case PreType::Tekken:
            by([](const uint32_t* t, size_t p, size_t e) { return matchGpt4o(t, p, e, false, 1); }, sink)(0, n);
            break;
        case PreType::KimiK2:
            splitKimiK2(c, 0, n, sink);
            break;
        case PreType::Bloom:
            by(matchBloom, sink)(0, n);
            break;
        case PreType::Viking: {
            auto s2 = by(matchNumber, sink);
            by(matchBloom, s2)(0, n);
            break;
        }
    }
}

}  // namespace verdict::tok
