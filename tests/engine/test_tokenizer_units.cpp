// Tokenizer unit tests on small hand-made vocabularies: merge order and tie-breaking of the
// SentencePiece and BPE models, byte fallback, WordPiece, special token partitioning, and the
// load errors of malformed metadata (VocabSpec and GGUF).
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::tok;

namespace {

QByteArray qids(const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) s += " " + std::to_string(id);
    return QByteArray::fromStdString(s);
}

// ids of `texts` in `tok`, for readable expectations.
std::vector<int32_t> idsOf(const Tokenizer& tok, std::initializer_list<const char*> texts) {
    std::vector<int32_t> ids;
    for (const char* t : texts) {
        const auto id = tok.tokenId(t);
        ids.push_back(id ? *id : -2);
    }
    return ids;
}

// SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, then `pieces` with `scores`.
VocabSpec spmSpec(const std::vector<std::pair<std::string, float>>& pieces) {
    VocabSpec s;
    s.model = "llama";
    s.tokens = {"<unk>", "<s>", "</s>"};
    s.tokenTypes = {2, 3, 3};
    s.scores = {0, 0, 0};
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        s.tokens.push_back(buf);
        s.tokenTypes.push_back(6);
        s.scores.push_back(0);
    }
    for (const auto& [text, score] : pieces) {
        s.tokens.push_back(text);
        s.tokenTypes.push_back(1);
        s.scores.push_back(score);
    }
    return s;
}

// Byte-level BPE vocabulary: the 256 byte characters, then `extra` tokens, with `merges`.
VocabSpec bpeSpec(const std::vector<std::string>& extra, const std::vector<std::string>& merges,
                  const std::string& pre = "gpt-2") {
    VocabSpec s;
    s.model = "gpt2";
    s.pre = pre;
    for (int b = 0; b < 256; ++b) {
        std::string ch;
        appendUtf8(ch, byteToAlphabetCp(uint8_t(b)));
        s.tokens.push_back(ch);
    }
    for (const auto& t : extra) s.tokens.push_back(t);
    s.merges = merges;
    s.bos = 0;
    s.eos = 0;
    return s;
}

std::shared_ptr<const Tokenizer> make(VocabSpec spec) {
    auto t = Tokenizer::fromSpec(std::move(spec));
    if (!t) qWarning("%s", t.error().message.c_str());
    return t ? t.value() : nullptr;
}

}  // namespace

class TestTokenizerUnits : public QObject {
    Q_OBJECT

private slots:
    void spmMergesHighestScoreFirst();
    void spmTiesGoToTheLeft();
    void spmByteFallback();
    void bpeMergesByRank();
    void bpeMergeResultOutsideVocabulary();
    void bpeIgnoreMerges();
    void wordPiece();
    void specialTokensLongestFirst();
    void specialTokensRepeatAndOverlap();
    void loadErrors_data();
    void loadErrors();
    void ggufErrors();
    void ggufRoundTrip();
};

void TestTokenizerUnits::spmMergesHighestScoreFirst() {
    // "▁abc": "bc" (score -1) beats "ab" (-2), so "▁a" + "bc" wins over "▁ab" + "c".
    auto tok = make(spmSpec({{"\xE2\x96\x81", -5}, {"a", -5}, {"b", -5}, {"c", -5}, {"ab", -2}, {"bc", -1},
                             {"\xE2\x96\x81" "a", -3}, {"\xE2\x96\x81" "ab", -0.5f}}));
    QVERIFY(tok);
    QCOMPARE(qids(tok->encode("abc", false, false)), qids(idsOf(*tok, {"\xE2\x96\x81" "a", "bc"})));
    // Without the space prefix "ab" is never formed either.
    QCOMPARE(qids(tok->encode("abc", true, false)), qids(idsOf(*tok, {"<s>", "\xE2\x96\x81" "a", "bc"})));
}

void TestTokenizerUnits::spmTiesGoToTheLeft() {
    auto tok = make(spmSpec({{"\xE2\x96\x81", -1}, {"a", -1}, {"aa", -1}}));
    QVERIFY(tok);
    QCOMPARE(qids(tok->encode("aaa", false, false)), qids(idsOf(*tok, {"\xE2\x96\x81", "aa", "a"})));
    QCOMPARE(qids(tok->encode("aaaaa", false, false)), qids(idsOf(*tok, {"\xE2\x96\x81", "aa", "aa", "a"})));
    // A long run goes through the heap path; the result must follow the same rule.
    std::string run(1001, 'a');
    std::vector<int32_t> expected{*tok->tokenId("\xE2\x96\x81")};
    for (int i = 0; i < 500; ++i) expected.push_back(*tok->tokenId("aa"));
    expected.push_back(*tok->tokenId("a"));
    QCOMPARE(qids(tok->encode(run, false, false)), qids(expected));
}

void TestTokenizerUnits::spmByteFallback() {
    auto tok = make(spmSpec({{"\xE2\x96\x81", -1}, {"x", -1}}));
    QVERIFY(tok);
    // "é" is no token: its two bytes become <0xC3> <0xA9>.
    QCOMPARE(qids(tok->encode("x\xC3\xA9", false, false)), qids(idsOf(*tok, {"\xE2\x96\x81", "x", "<0xC3>", "<0xA9>"})));
    QCOMPARE(QByteArray::fromStdString(tok->decode(tok->encode("x\xC3\xA9", false, false))), QByteArray("x\xC3\xA9"));
    // No byte tokens at all: unknown stands in (llama.cpp would abort).
    VocabSpec s;
    s.model = "llama";
    s.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81"};
    s.tokenTypes = {2, 3, 3, 1};
    auto noBytes = make(s);
    QVERIFY(noBytes);
    QCOMPARE(qids(noBytes->encode("q", false, false)), qids({3, 0}));
}

void TestTokenizerUnits::bpeMergesByRank() {
    // Merge ranks decide, not token ids: "b c" (rank 0) before "a b" (rank 1).
    auto first = make(bpeSpec({"ab", "bc"}, {"b c", "a b"}));
    QVERIFY(first);
    QCOMPARE(qids(first->encode("abc", false, false)), qids(idsOf(*first, {"a", "bc"})));
    auto second = make(bpeSpec({"ab", "bc"}, {"a b", "b c"}));
    QVERIFY(second);
    QCOMPARE(qids(second->encode("abc", false, false)), qids(idsOf(*second, {"ab", "c"})));
    // Equal pairs: leftmost first ("aaa" -> "aa" "a").
    auto run = make(bpeSpec({"aa"}, {"a a"}));
    QVERIFY(run);
    QCOMPARE(qids(run->encode("aaa", false, false)), qids(idsOf(*run, {"aa", "a"})));
    std::vector<int32_t> expected(500, *run->tokenId("aa"));
    expected.push_back(*run->tokenId("a"));
    QCOMPARE(qids(run->encode(std::string(1001, 'a'), false, false)), qids(expected));
}

void TestTokenizerUnits::bpeMergeResultOutsideVocabulary() {
    // "a b" merges into "ab", which is no token; "ab c" then makes "abc", which is one.
    auto tok = make(bpeSpec({"abc"}, {"a b", "ab c"}));
    QVERIFY(tok);
    QCOMPARE(qids(tok->encode("abc", false, false)), qids(idsOf(*tok, {"abc"})));
    // Stuck at "ab": llama.cpp writes the tokens of its single bytes.
    QCOMPARE(qids(tok->encode("ab", false, false)), qids(idsOf(*tok, {"a", "b"})));
}

void TestTokenizerUnits::bpeIgnoreMerges() {
    // Llama-3 style: a word that is a token is taken whole even without a merge path.
    VocabSpec spec = bpeSpec({"hello"}, {"h e"}, "llama-bpe");
    spec.addBos = false;
    auto tok = make(spec);
    QVERIFY(tok);
    QCOMPARE(qids(tok->encode("hello", false, false)), qids(idsOf(*tok, {"hello"})));
    auto gpt2 = make(bpeSpec({"hello"}, {"h e"}));
    QVERIFY(gpt2);
    // "h e" makes "he", which is no token: its bytes are written one by one.
    QCOMPARE(qids(gpt2->encode("hello", false, false)), qids(idsOf(*gpt2, {"h", "e", "l", "l", "o"})));
}

void TestTokenizerUnits::wordPiece() {
    VocabSpec s;
    s.model = "bert";
    s.tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "\xE2\x96\x81" "un", "\xE2\x96\x81" "unaff", "able",
                "aff", "\xE2\x96\x81" ",", "\xE2\x96\x81" "cafe", "\xE2\x96\x81\xE4\xB8\xAD"};
    s.tokenTypes = {3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1};
    s.unk = 1;
    s.cls = 2;
    s.sep = 3;
    s.pad = 0;
    s.mask = 4;
    s.bos = 2;
    auto tok = make(s);
    QVERIFY(tok);
    // Longest match first: "▁unaff" + "able"; lowercase; punctuation splits; accents stripped.
    QCOMPARE(qids(tok->encode("UNAFFABLE, Caf\xC3\xA9", false, false)), qids({6, 7, 9, 10}));
    // A word with an uncovered part is one [UNK]; Chinese characters are words of their own.
    QCOMPARE(qids(tok->encode("unx \xE4\xB8\xAD\xE4\xB8\xAD", true, false)), qids({2, 1, 11, 11, 3}));
}

void TestTokenizerUnits::specialTokensLongestFirst() {
    VocabSpec s = bpeSpec({"<a>", "<a><b>", "<b>"}, {});
    s.tokenTypes.assign(s.tokens.size(), 1);
    for (size_t i = 256; i < s.tokens.size(); ++i) s.tokenTypes[i] = 3;
    auto tok = make(s);
    QVERIFY(tok);
    const auto ab = *tok->tokenId("<a><b>");
    const auto a = *tok->tokenId("<a>");
    const auto b = *tok->tokenId("<b>");
    QCOMPARE(qids(tok->encode("<a><b><b><a>", false, true)), qids({ab, b, a}));
    // Not parsed: plain text.
    const auto plain = tok->encode("<a><b>", false, false);
    QVERIFY(std::find(plain.begin(), plain.end(), ab) == plain.end());
}

void TestTokenizerUnits::specialTokensRepeatAndOverlap() {
    VocabSpec s = bpeSpec({"aa", "<x>"}, {});
    s.tokenTypes.assign(s.tokens.size(), 1);
    s.tokenTypes[256] = 4;  // "aa" user-defined: matched even without parse_special
    s.tokenTypes[257] = 3;
    auto tok = make(s);
    QVERIFY(tok);
    const int32_t aa = *tok->tokenId("aa");
    const int32_t a = *tok->tokenId("a");
    // Non-overlapping, leftmost first: "aaaaa" -> aa aa a.
    QCOMPARE(qids(tok->encode("aaaaa", false, false)), qids({aa, aa, a}));
    QCOMPARE(qids(tok->encode("a<x>aa", false, true)), qids({a, *tok->tokenId("<x>"), aa}));
}

void TestTokenizerUnits::loadErrors_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("needle");
    QTest::addRow("unsupported model") << 0 << "unsupported tokenizer";
    QTest::addRow("unknown pre-tokenizer") << 1 << "unknown pre-tokenizer";
    QTest::addRow("duplicate token") << 2 << "duplicate token";
    QTest::addRow("add_bos without bos") << 3 << "add_bos_token";
    QTest::addRow("no tokens") << 4 << "empty";
    QTest::addRow("bpe without merges") << 5 << "merges";
    QTest::addRow("short scores") << 6 << "scores";
    QTest::addRow("no vocabulary") << 7 << "no vocabulary";
}

void TestTokenizerUnits::loadErrors() {
    QFETCH(int, which);
    QFETCH(QString, needle);
    VocabSpec s = spmSpec({{"a", -1}});
    switch (which) {
        case 0: s.model = "t5"; break;
        case 1: s = bpeSpec({}, {"a b"}, "no-such-pre"); break;
        case 2: s.tokens.push_back("a"); s.tokenTypes.push_back(1); s.scores.push_back(0); break;
        case 3:  // the default BOS id 1 is outside a one-token vocabulary
            s.tokens.resize(1);
            s.tokenTypes.resize(1);
            s.scores.resize(1);
            break;
        case 4: s.tokens.clear(); break;
        case 5: s = bpeSpec({}, {}); s.merges.reset(); break;
        case 6: s.scores.resize(3); break;
        case 7: s.model = "no_vocab"; break;
    }
    auto t = Tokenizer::fromSpec(s);
    QVERIFY(!t);
    QVERIFY2(QString::fromStdString(t.error().message).contains(needle), t.error().message.c_str());
}

void TestTokenizerUnits::ggufErrors() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto write = [&](const char* name, auto fill) {
        gguf::GgufWriter w;
        w.set("general.architecture", gguf::Value::str("llama"));
        fill(w);
        const std::string path = dir.filePath(name).toStdString();
        auto r = w.write(path);
        if (!r) qWarning("%s", r.error().message.c_str());
        auto f = gguf::GgufFile::open(path);
        if (!f) qWarning("%s", f.error().message.c_str());
        return f;
    };
    struct Bad {
        const char* file;
        const char* needle;
        std::function<void(gguf::GgufWriter&)> fill;
    };
    const std::vector<Bad> cases = {
        {"none.gguf", "tokenizer.ggml.model", [](gguf::GgufWriter&) {}},
        {"model-int.gguf", "tokenizer.ggml.model", [](gguf::GgufWriter& w) { w.set("tokenizer.ggml.model", gguf::Value::u32(1)); }},
        {"no-tokens.gguf", "tokenizer.ggml.tokens",
         [](gguf::GgufWriter& w) { w.set("tokenizer.ggml.model", gguf::Value::str("llama")); }},
        {"tokens-int.gguf", "tokenizer.ggml.tokens",
         [](gguf::GgufWriter& w) {
             w.set("tokenizer.ggml.model", gguf::Value::str("llama"));
             w.set("tokenizer.ggml.tokens", gguf::Value::i32Array({1, 2}));
         }},
        {"scores-str.gguf", "tokenizer.ggml.scores",
         [](gguf::GgufWriter& w) {
             w.set("tokenizer.ggml.model", gguf::Value::str("llama"));
             w.set("tokenizer.ggml.tokens", gguf::Value::stringArray({"a", "b"}));
             w.set("tokenizer.ggml.scores", gguf::Value::stringArray({"a", "b"}));
         }},
        {"bos-str.gguf", "tokenizer.ggml.bos_token_id",
         [](gguf::GgufWriter& w) {
             w.set("tokenizer.ggml.model", gguf::Value::str("llama"));
             w.set("tokenizer.ggml.tokens", gguf::Value::stringArray({"a", "b"}));
             w.set("tokenizer.ggml.bos_token_id", gguf::Value::str("1"));
         }},
        {"flag-int.gguf", "tokenizer.ggml.add_bos_token",
         [](gguf::GgufWriter& w) {
             w.set("tokenizer.ggml.model", gguf::Value::str("llama"));
             w.set("tokenizer.ggml.tokens", gguf::Value::stringArray({"a", "b"}));
             w.set("tokenizer.ggml.add_bos_token", gguf::Value::u32(1));
         }},
    };
    for (const Bad& c : cases) {
        auto f = write(c.file, c.fill);
        QVERIFY(f);
        auto t = Tokenizer::fromGguf(**f);
        QVERIFY2(!t, c.file);
        QVERIFY2(t.error().message.find(c.needle) != std::string::npos, t.error().message.c_str());
        QVERIFY2(t.error().message.find(c.file) != std::string::npos, t.error().message.c_str());  // names the file
    }
}

void TestTokenizerUnits::ggufRoundTrip() {
    // A vocabulary written to GGUF and read back tokenizes like the in-memory one.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const VocabSpec spec = spmSpec({{"\xE2\x96\x81", -1}, {"h", -2}, {"i", -2}, {"hi", -1}, {"\xE2\x96\x81hi", -0.5f}});
    gguf::GgufWriter w;
    w.set("general.architecture", gguf::Value::str("llama"));
    w.set("tokenizer.ggml.model", gguf::Value::str(spec.model));
    w.set("tokenizer.ggml.tokens", gguf::Value::stringArray(spec.tokens));
    w.set("tokenizer.ggml.scores", gguf::Value::f32Array(spec.scores));
    w.set("tokenizer.ggml.token_type", gguf::Value::i32Array(spec.tokenTypes));
    w.set("tokenizer.ggml.add_eos_token", gguf::Value::boolean(true));
    const std::string path = dir.filePath("v.gguf").toStdString();
    QVERIFY(w.write(path));
    auto f = gguf::GgufFile::open(path);
    QVERIFY(f);
    auto fromFile = Tokenizer::fromGguf(**f);
    QVERIFY(fromFile);
    auto inMemory = make(spec);
    QVERIFY(inMemory);
    QVERIFY((*fromFile)->addEos());
    QVERIFY(!inMemory->addEos());
    QCOMPARE(qids((*fromFile)->encode("hi hi", true, false)),
             qids({1, *inMemory->tokenId("\xE2\x96\x81hi"), *inMemory->tokenId("\xE2\x96\x81hi"), 2}));
    QCOMPARE(qids((*fromFile)->encode("hi hi", false, false)), qids(inMemory->encode("hi hi", false, false)));
}

QTEST_GUILESS_MAIN(TestTokenizerUnits)
#include "test_tokenizer_units.moc"
