// Pre-tokenizers against an oracle that runs the regular expressions the way llama.cpp does
// (src/unicode.cpp unicode_regex_split: std::regex over its "collapsed" text when the expression
// uses \p{..}, std::wregex over the code points otherwise), on thousands of random strings
// mixing scripts, digits, white space, punctuation and symbols; plus checks of the Unicode
// tables and of the Kimi-K2 splitter.
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

#include <QtTest/QtTest>

#include <random>
#include <regex>

using namespace verdict;
using namespace verdict::tok;

namespace {

// ---- oracle ------------------------------------------------------------------------------

// ASCII members of each class, as llama.cpp's collapsed-regex table lists them.
std::string asciiMembers(char cls) {
    switch (cls) {
        case 'N': return "\x30-\x39";
        case 'L': return "\x41-\x5A\x61-\x7A";
        case 'P': return "\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\\\x5B-\\\x5D\x5F\\\x7B\\\x7D";
        case 'M': return "";
        case 'S': return "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C";
    }
    return "";
}

char collapsedByte(char cls) {
    switch (cls) {
        case 'N': return char(0xD1);
        case 'L': return char(0xD2);
        case 'P': return char(0xD3);
        case 'M': return char(0xD4);
        case 'S': return char(0xD5);
    }
    return char(0xD0);
}

char collapse(uint32_t cp) {
    if (cp < 128) return char(cp);
    const uint16_t f = cpFlags(cp);
    if (f & kCpWhitespace) return 0x0B;
    if (f & kCpNumber) return collapsedByte('N');
    if (f & kCpLetter) return collapsedByte('L');
    if (f & kCpPunct) return collapsedByte('P');
    if (f & kCpMark) return collapsedByte('M');
    if (f & kCpSymbol) return collapsedByte('S');
    return char(0xD0);
}

// \p{X} -> [<collapsed byte><ASCII members>] (without the brackets inside a class).
std::string collapseRegex(const std::string& re) {
    std::string out;
    bool inside = false;
    for (size_t i = 0; i < re.size(); ++i) {
        if (re[i] == '[' && (i == 0 || re[i - 1] != '\\')) {
            out += '[';
            inside = true;
            continue;
        }
        if (inside && re[i] == ']' && re[i - 1] != '\\') {
            out += ']';
            inside = false;
            continue;
        }
        if (re[i] == '\\' && i + 4 < re.size() && re[i + 1] == 'p' && re[i + 2] == '{' && re[i + 4] == '}') {
            const char cls = re[i + 3];
            if (!inside) out += '[';
            out += collapsedByte(cls);
            out += asciiMembers(cls);
            if (!inside) out += ']';
            i += 4;
            continue;
        }
        out += re[i];
    }
    return out;
}

std::wstring wide(const std::string& utf8) {
    std::vector<uint32_t> cps;
    decodeUtf8(utf8, cps);
    return std::wstring(cps.begin(), cps.end());
}

template <class CharT>
std::vector<size_t> splitStl(const std::basic_string<CharT>& text, const std::basic_regex<CharT>& re,
                             const std::vector<size_t>& offsets) {
    std::vector<size_t> out;
    size_t start = 0;
    for (size_t len : offsets) {
        std::regex_iterator<const CharT*> it(text.data() + start, text.data() + start + len, re), end;
        size_t prev = 0;
        for (; it != end; ++it) {
            const size_t pos = size_t(it->position());
            if (pos > prev) out.push_back(pos - prev);
            out.push_back(size_t(it->length()));
            prev = pos + size_t(it->length());
        }
        if (prev < len) out.push_back(len - prev);
        start += len;
    }
    return out;
}

struct Expr {
    std::string utf8;    // with \p{..}: run on the collapsed text
    std::wstring wideRe;  // otherwise: run with std::wregex
};

std::vector<size_t> oracle(const std::vector<uint32_t>& cps, const std::vector<Expr>& exprs) {
    std::vector<size_t> offsets{cps.size()};
    std::string collapsed;
    for (uint32_t cp : cps) collapsed += collapse(cp);
    std::wstring wtext;
    for (uint32_t cp : cps) wtext += wchar_t((cp > 0x7F && (cpFlags(cp) & kCpWhitespace)) ? 0x0B : cp);
    for (const Expr& e : exprs) {
        if (!e.utf8.empty()) offsets = splitStl(collapsed, std::regex(collapseRegex(e.utf8)), offsets);
        else offsets = splitStl(wtext, std::wregex(e.wideRe), offsets);
    }
    if (cps.empty()) offsets.clear();
    return offsets;
}

Expr p(const std::string& re) { return Expr{re, {}}; }
Expr w(const std::string& re) { return Expr{{}, wide(re)}; }

std::wstring rangesClass(std::initializer_list<std::pair<uint32_t, uint32_t>> r) {
    std::wstring s = L"[";
    for (auto [lo, hi] : r) {
        s += wchar_t(lo);
        if (hi != lo) {
            s += L'-';
            s += wchar_t(hi);
        }
    }
    return s + L"]";
}

// The expressions of llama.cpp's llm_tokenizer_bpe (src/llama-vocab.cpp).
const std::string kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const std::string kContractions = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const std::string kLlama3 = kContractions +
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kQwen2 = kContractions +
    "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen 3.5 (llama.cpp v0.5.0): Qwen2's with combining marks in the letter runs.
const std::string kQwen35 = kContractions +
    "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kUpperLower = "((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+";
const std::string kUpperLower2 = "((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*";
const std::string kGpt4o = "[^\\r\\n\\p{L}\\p{N}]?" + kUpperLower + kContractions + "?|[^\\r\\n\\p{L}\\p{N}]?" +
    kUpperLower2 + kContractions + "?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kTekken = "[^\\r\\n\\p{L}\\p{N}]?" + kUpperLower + "|[^\\r\\n\\p{L}\\p{N}]?" + kUpperLower2 +
    "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const std::string kDeepseek3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?"
    "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+";
const std::string kPunctRun = "[\\p{P}\\$\\+<=>\\^~\\|]+";
const std::string kBloom = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+";

std::vector<Expr> exprsOf(PreType t) {
    const Expr cjk{{}, rangesClass({{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}}) + L"+"};
    switch (t) {
        case PreType::Default: return {p(kPunctRun), p(kGpt2), p("\\p{N}+"), w("[0-9][0-9][0-9]")};
        case PreType::Gpt2: return {p(kGpt2)};
        case PreType::Llama3: return {p(kLlama3)};
        case PreType::Qwen2: return {p(kQwen2)};
        case PreType::Qwen35: return {p(kQwen35)};
        case PreType::DeepseekLlm: {
            const std::wstring letters = rangesClass({
                {0x41, 0x5A}, {0x61, 0x7A}, {0xB5, 0xB5}, {0xC0, 0xD6}, {0xD8, 0xF6}, {0xF8, 0x1BA}, {0x1BC, 0x1BF},
                {0x1C4, 0x293}, {0x295, 0x2AF}, {0x370, 0x373}, {0x376, 0x377}, {0x37B, 0x37D}, {0x37F, 0x37F},
                {0x386, 0x386}, {0x388, 0x38A}, {0x38C, 0x38C}, {0x38E, 0x3A1}, {0x3A3, 0x3F5}, {0x3F7, 0x481},
                {0x48A, 0x52F}, {0x531, 0x556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD},
                {0x1C90, 0x1CBA}, {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A},
                {0x1E00, 0x1F15}, {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57},
                {0x1F59, 0x1F59}, {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4},
                {0x1FB6, 0x1FBC}, {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3},
                {0x1FD6, 0x1FDB}, {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102},
                {0x2107, 0x2107}, {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124},
                {0x2126, 0x2126}, {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139},
                {0x213C, 0x213F}, {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B},
                {0x2C7E, 0x2CE4}, {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B},
                {0xA722, 0xA76F}, {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06},
                {0xFB13, 0xFB17}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3},
                {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943}});
            const std::wstring punct = rangesClass({{0x21, 0x2F}, {0x3A, 0x7E}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
                                                    {0x2018, 0x201F}, {0x3000, 0x3002}});
            return {w("[\r\n]"), Expr{{}, L"\\s?" + letters + L"+"}, Expr{{}, L"\\s?" + punct + L"+"}, w("\\s+$"), cjk,
                    p("\\p{N}+")};
        }
        case PreType::DeepseekCoder: return {w("[\r\n]"), p("\\s?\\p{L}+"), p("\\s?\\p{P}+"), cjk, p("\\p{N}")};
        case PreType::Deepseek3:
            return {p("\\p{N}{1,3}"), Expr{{}, rangesClass({{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}}) + L"+"},
                    p(kDeepseek3)};
        case PreType::Falcon: return {p(kPunctRun), p(kGpt2), w("[0-9][0-9][0-9]")};
        case PreType::Starcoder: return {p("\\p{N}"), p(kGpt2)};
        case PreType::Gpt4o: return {p(kGpt4o)};
        case PreType::Tekken: return {p(kTekken)};
        case PreType::Bloom: return {w(kBloom)};
        case PreType::Viking: return {w(kBloom), p("\\p{N}")};
        case PreType::KimiK2: break;
    }
    return {};
}

std::vector<size_t> mine(PreType t, const std::vector<uint32_t>& cps) {
    std::vector<size_t> out;
    size_t expect = 0;
    bool contiguous = true;
    auto sink = [&](size_t b, size_t e) {
        contiguous = contiguous && b == expect && e > b;
        expect = e;
        out.push_back(e - b);
    };
    preTokenize(t, cps.data(), cps.size(), WordSink(sink));
    if (!contiguous || expect != cps.size()) out.push_back(size_t(-1));  // gaps or overlaps: fail
    return out;
}

// Code points that exercise every branch: cased and uncased letters of several scripts,
// digits, white space inside and outside ASCII, the contractions, the DeepSeek class borders.
const std::vector<uint32_t> kAlphabet = {
    'a', 'b', 'e', 'l', 'r', 's', 't', 'v', 'm', 'd', 'Z', 'Q', 'S', 'T', 'L', 'D', 'E', ' ', ' ', ' ', '\t', '\n',
    '\r', '\'', '\'', '0', '1', '7', '.', ',', '!', '?', '-', '_', '$', '+', '<', '=', '>', '^', '~', '|', '/', '(',
    ')', '`', '"', '#', '@', '[', ']', '{', '}', '\\', ':', ';', '%', '&', '*', 0x0B, 0x0C, 0x1F, 0x00, 0x7F,
    0xE9, 0xC9, 0xDF, 0xF1, 0xB5, 0xAA, 0xB2, 0xBD, 0xA9, 0xA0, 0x85, 0x3A9, 0x3C9, 0x414, 0x436, 0x301, 0x308,
    0x664, 0x966, 0x2160, 0x4E2D, 0x56FD, 0x9FA5, 0x9FA6, 0x4E00, 0x3042, 0x30AB, 0x30FC, 0xD55C, 0x3131, 0x3000,
    0x2009, 0x2028, 0x200B, 0x20AC, 0x1F600, 0x1F999, 0xFF01, 0xFF21, 0xFF41, 0xFF10, 0x2026, 0x3002, 0xFF0C,
    0x3001, 0x964, 0x6D4, 0x60C, 0x2018, 0x201C, 0x17F, 0x212A, 0x130, 0x1F5F, 0x1FBE, 0x1E900, 0xE000, 0xFFFD,
    0x378, 0x10FFFF, 0x20000, 0x2B820, 0x0800, 0x1C90, 0x2183, 0xA640};

std::string describe(const std::vector<uint32_t>& cps) {
    std::string s;
    for (uint32_t cp : cps) s += QString::asprintf("%X ", cp).toStdString();
    return s;
}

std::string lens(const std::vector<size_t>& v) {
    std::string s;
    for (size_t x : v) s += std::to_string(x) + " ";
    return s;
}

}  // namespace

Q_DECLARE_METATYPE(PreType)

class TestTokenizerPretok : public QObject {
    Q_OBJECT

private slots:
    void matchesRegexOracle_data();
    void matchesRegexOracle();
    void kimiK2();
    void unicodeTables();
    void utf8Decoding();
    void namesAreKnown();
};

void TestTokenizerPretok::matchesRegexOracle_data() {
    QTest::addColumn<PreType>("type");
    QTest::addRow("default") << PreType::Default;
    QTest::addRow("gpt2") << PreType::Gpt2;
    QTest::addRow("llama3") << PreType::Llama3;
    QTest::addRow("qwen2") << PreType::Qwen2;
    QTest::addRow("qwen35") << PreType::Qwen35;
    QTest::addRow("deepseek-llm") << PreType::DeepseekLlm;
    QTest::addRow("deepseek-coder") << PreType::DeepseekCoder;
    QTest::addRow("deepseek-v3") << PreType::Deepseek3;
    QTest::addRow("falcon") << PreType::Falcon;
    QTest::addRow("starcoder") << PreType::Starcoder;
    QTest::addRow("gpt-4o") << PreType::Gpt4o;
    QTest::addRow("tekken") << PreType::Tekken;
    QTest::addRow("bloom") << PreType::Bloom;
    QTest::addRow("viking") << PreType::Viking;
}

void TestTokenizerPretok::matchesRegexOracle() {
    QFETCH(PreType, type);
    const std::vector<Expr> exprs = exprsOf(type);
    std::mt19937 rng(uint32_t(type) + 1);
    std::vector<std::vector<uint32_t>> inputs;
    for (const char* s : {"", "Hello world", " Hello World!", "I've been 'told he's there, 'RE you sure? 'M not",
                          "   Hello\n    Hello", "3333333 3.3 3..3", "\t\t\n\n  \n", "HELLOworld ÉCOLEécole ǅungla",
                          "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～", "a  ~b  ~~  c\r\n\r\n d  "}) {
        std::vector<uint32_t> cps;
        decodeUtf8(s, cps);
        inputs.push_back(cps);
    }
    for (int i = 0; i < 2000; ++i) {
        std::vector<uint32_t> cps(rng() % 24);
        for (uint32_t& cp : cps) cp = kAlphabet[rng() % kAlphabet.size()];
        inputs.push_back(cps);
    }
    int failures = 0;
    for (const auto& cps : inputs) {
        const auto expected = oracle(cps, exprs);
        const auto got = mine(type, cps);
        if (expected == got) continue;
        if (++failures <= 5)
            qWarning("input %s\n  regex: %s\n  mine:  %s", describe(cps).c_str(), lens(expected).c_str(), lens(got).c_str());
    }
    QCOMPARE(failures, 0);
}

void TestTokenizerPretok::kimiK2() {
    // Kimi-K2 has no expression std::regex can run (Han is excluded from the letter classes);
    // these follow from its pattern by hand.
    auto split = [](const char* s) {
        std::vector<uint32_t> cps;
        decodeUtf8(s, cps);
        std::vector<std::string> words;
        auto sink = [&](size_t b, size_t e) {
            std::string w;
            for (size_t i = b; i < e; ++i) appendUtf8(w, cps[i]);
            words.push_back(w);
        };
        preTokenize(PreType::KimiK2, cps.data(), cps.size(), WordSink(sink));
        return words;
    };
    QCOMPARE(split("Hello世界 world"), (std::vector<std::string>{"Hello", "世界", " world"}));
    QCOMPARE(split("they're 12345!!\n\nok"), (std::vector<std::string>{"they're", " ", "123", "45", "!!\n\n", "ok"}));
    QCOMPARE(split("a  b"), (std::vector<std::string>{"a", " ", " b"}));
    QCOMPARE(split("中文abc中"), (std::vector<std::string>{"中文", "abc", "中"}));
}

void TestTokenizerPretok::unicodeTables() {
    QCOMPARE(cpFlags('a'), uint16_t(kCpLetter));
    QCOMPARE(cpFlags('7'), uint16_t(kCpNumber));
    QCOMPARE(cpFlags(' '), uint16_t(kCpSeparator | kCpWhitespace));
    QCOMPARE(cpFlags('\n'), uint16_t(kCpControl | kCpWhitespace));
    QCOMPARE(cpFlags('~'), uint16_t(kCpSymbol));
    QCOMPARE(cpFlags(0x4E2D), uint16_t(kCpLetter));     // 中
    QCOMPARE(cpFlags(0x0301), uint16_t(kCpMark));       // combining acute
    QCOMPARE(cpFlags(0x0664), uint16_t(kCpNumber));     // Arabic-Indic four
    QCOMPARE(cpFlags(0x3000), uint16_t(kCpSeparator | kCpWhitespace));
    QCOMPARE(cpFlags(0x0085), uint16_t(kCpControl | kCpWhitespace));
    QCOMPARE(cpFlags(0x200B), uint16_t(kCpControl));    // zero width space: Cf, not White_Space
    QCOMPARE(cpFlags(0x1F600), uint16_t(kCpSymbol));
    QCOMPARE(cpFlags(0x0378), uint16_t(kCpUndefined));  // unassigned
    QCOMPARE(cpFlags(0xD800), uint16_t(kCpControl));    // surrogate
    QCOMPARE(cpFlags(0x110000), uint16_t(kCpUndefined));
    QCOMPARE(cpToLower('A'), uint32_t('a'));
    QCOMPARE(cpToLower(0xC9), uint32_t(0xE9));   // É
    QCOMPARE(cpToLower(0x130), uint32_t('i'));   // İ (simple mapping)
    QCOMPARE(cpToLower(0x212A), uint32_t('k'));  // Kelvin sign
    QCOMPARE(cpToLower(0x4E2D), uint32_t(0x4E2D));
    QCOMPARE(cpNfdFirst(0xE9), uint32_t('e'));
    QCOMPARE(cpNfdFirst(0x1E09), uint32_t('c'));  // ḉ: c + cedilla + acute
    QCOMPARE(cpNfdFirst(0xD55C), uint32_t(0x1112));  // 한 -> jamo ᄒ
    QCOMPARE(cpNfdFirst('a'), uint32_t('a'));
    QVERIFY(cpIsHan(0x4E2D) && !cpIsHan(0x3042));
    QCOMPARE(byteToAlphabetCp(' '), uint32_t(0x120));  // Ġ
    QCOMPARE(byteToAlphabetCp('A'), uint32_t('A'));
    for (int b = 0; b < 256; ++b) QCOMPARE(alphabetCpToByte(byteToAlphabetCp(uint8_t(b))), b);
}

void TestTokenizerPretok::utf8Decoding() {
    auto cps = [](std::string_view s) {
        std::vector<uint32_t> v;
        decodeUtf8(s, v);
        return v;
    };
    QCOMPARE(cps("a\xC3\xA9"), (std::vector<uint32_t>{'a', 0xE9}));
    QCOMPARE(cps("\xFF"), (std::vector<uint32_t>{0xFFFD}));
    QCOMPARE(cps("\xE4\xB8"), (std::vector<uint32_t>{0xFFFD, 0xFFFD}));    // truncated: each byte
    QCOMPARE(cps("\xC0\x80"), (std::vector<uint32_t>{0}));                 // overlong accepted (llama.cpp)
    QCOMPARE(cps("\xED\xA0\x80"), (std::vector<uint32_t>{0xD800}));        // surrogate accepted
    QCOMPARE(cps("\xF5\x80\x80\x80"), (std::vector<uint32_t>{0xFFFD}));    // past U+10FFFF
    std::string out;
    QVERIFY(!canonicalizeUtf8("plain \xE4\xB8\xAD", out));
    QVERIFY(canonicalizeUtf8("a\xFF" "b\xC0\x80", out));
    QCOMPARE(QByteArray::fromStdString(out), QByteArray("a\xEF\xBF\xBD" "b\0", 6));
    QCOMPARE(strictUtf8Sequence("\xE4\xB8"), 0);
    QCOMPARE(strictUtf8Sequence("\xE4\xB8\xAD"), 3);
    QCOMPARE(strictUtf8Sequence("\xC0\x80"), -1);
    QCOMPARE(strictUtf8Sequence("\xED\xA0\x80"), -1);
    QCOMPARE(strictUtf8Sequence("\xF4\x90\x80\x80"), -1);
}

void TestTokenizerPretok::namesAreKnown() {
    for (const char* n : {"default", "gpt-2", "llama3", "llama-bpe", "qwen2", "deepseek-llm", "deepseek-coder",
                          "deepseek-v3", "falcon", "starcoder", "refact", "mpt", "command-r", "gpt-4o", "kimi-k2", ""})
        QVERIFY2(lookupPreTokenizer(n).has_value(), n);
    QVERIFY(!lookupPreTokenizer("no-such-pre").has_value());
    QCOMPARE(lookupPreTokenizer("refact")->type, PreType::Starcoder);
    QVERIFY(lookupPreTokenizer("llama-bpe")->ignoreMerges);
    QVERIFY(!lookupPreTokenizer("qwen2")->cleanSpaces);
}

QTEST_GUILESS_MAIN(TestTokenizerPretok)
#include "test_tokenizer_pretok.moc"
