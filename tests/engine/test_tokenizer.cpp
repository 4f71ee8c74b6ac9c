// Tokenizer golden tests: llama.cpp's tokenizer test vectors (every case of every set), the
// prompts and generated pieces of the reference JSON files, special tokens, BOS/EOS, bad input
// and concurrent use. Fixture format: ../shared/fixtures/tokenizer/README.md.
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest/QtTest>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

using namespace verdict;
using namespace verdict::tok;

namespace {

struct VectorSet {
    std::string name;   // row name
    std::string gguf;   // vocabulary file, relative to the fixtures
    std::string cases;  // stem of .inp/.out, relative to the fixtures
    size_t nCases = 46;
};
}  // namespace
Q_DECLARE_METATYPE(VectorSet)

namespace {

const std::vector<VectorSet>& vectorSets() {
    static const std::vector<VectorSet> sets = [] {
        std::vector<VectorSet> v;
        for (const char* n : {"bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "llama-spm", "mpt",
                              "phi-3", "refact", "starcoder"}) {
            const std::string f = std::string("tokenizer/ggml-vocab-") + n + ".gguf";
            v.push_back(VectorSet{n, f, f});
        }
        v.push_back(VectorSet{"stories260K", "models/stories260K.gguf", "tokenizer/llamacpp-generated/stories260K.gguf"});
        // llama.cpp v0.5.0 (tokenizer/README.md "Added"): Llama 3's and Qwen 2's BPE, Command-R, and
        // Qwen 3.5's pre-tokenizer (combining marks; 4 more cases in NFD).
        for (const char* n : {"llama-bpe", "qwen2", "command-r"}) {
            const std::string f = std::string("tokenizer/ggml-vocab-") + n + ".gguf";
            v.push_back(VectorSet{n, f, f});
        }
        v.push_back(VectorSet{"qwen35", "tokenizer/ggml-vocab-qwen35.gguf", "tokenizer/ggml-vocab-qwen35.gguf", 50});
        // Gemma 4: character-level BPE (tokenizer.ggml.model gemma4); its .inp ends without a separator.
        v.push_back(VectorSet{"gemma-4", "tokenizer/ggml-vocab-gemma-4.gguf", "tokenizer/ggml-vocab-gemma-4.gguf"});
        // v0.5.0's case files of the first ten sets (case 2 is now "Äpfel"), same vocabularies.
        for (const char* n : {"bert-bge", "deepseek-coder", "deepseek-llm", "falcon", "gpt-2", "llama-spm", "mpt",
                              "phi-3", "refact", "starcoder"}) {
            const std::string f = std::string("tokenizer/ggml-vocab-") + n + ".gguf";
            v.push_back(VectorSet{std::string("v0.5.0/") + n, f, std::string("tokenizer/v0.5.0/ggml-vocab-") + n + ".gguf"});
        }
        return v;
    }();
    return sets;
}

std::string readFile(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

struct Case {
    std::string text;
    std::vector<int32_t> ids;
};

// .inp: cases separated by "\n__ggml_vocab_test__\n" (usually also after the last one; where it
// is not, the text after the final separator is one more case, as llama.cpp v0.5.0 reads it);
// .out: one line of ids per case.
std::vector<Case> readCases(const std::string& stem) {
    const std::string inp = readFile(test::fixture(stem + ".inp"));
    const std::string out = readFile(test::fixture(stem + ".out"));
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<Case> cases;
    size_t pos = 0;
    for (size_t hit; (hit = inp.find(sep, pos)) != std::string::npos; pos = hit + sep.size())
        cases.push_back(Case{inp.substr(pos, hit - pos), {}});
    if (pos < inp.size()) cases.push_back(Case{inp.substr(pos), {}});
    std::istringstream lines(out);
    std::string line;
    size_t i = 0;
    while (std::getline(lines, line) && i < cases.size()) {
        std::istringstream ids(line);
        int32_t id;
        while (ids >> id) cases[i].ids.push_back(id);
        ++i;
    }
    if (i != cases.size()) cases.clear();  // malformed fixture: the caller fails on the count
    return cases;
}

std::shared_ptr<const Tokenizer> load(const std::string& relative, std::string* error = nullptr) {
    auto file = gguf::GgufFile::open(test::fixture(relative).string());
    if (!file) {
        if (error) *error = file.error().message;
        return nullptr;
    }
    auto tok = Tokenizer::fromGguf(**file);
    if (!tok) {
        if (error) *error = tok.error().message;
        return nullptr;
    }
    return tok.value();
}

std::string idsToString(const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) s += " " + std::to_string(id);
    return s;
}

// QCOMPARE-friendly forms (QByteArray prints both sides on failure).
QByteArray qb(const std::string& s) { return QByteArray::fromStdString(s); }
QByteArray qids(const std::vector<int32_t>& ids) { return qb(idsToString(ids)); }

std::string toHex(const std::string& bytes) {
    static const char* kHex = "0123456789abcdef";
    std::string s;
    for (unsigned char c : bytes) {
        s.push_back(kHex[c >> 4]);
        s.push_back(kHex[c & 15]);
    }
    return s;
}

// SentencePiece text as the model sees it (spaces as U+2581). Comparing in this form makes the
// byte-fallback round trip exact even where an invalid sequence swallowed part of an escaped space.
std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == ' ') out += "\xE2\x96\x81";
        else out += c;
    }
    return out;
}

bool isValidUtf8(std::string_view s) {
    for (size_t i = 0; i < s.size();) {
        const int n = strictUtf8Sequence(s.substr(i));
        if (n <= 0) return false;
        i += size_t(n);
    }
    return true;
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private slots:
    void vectors_data();
    void vectors();
    void vectorsFromManyThreads();
    void referencePrompts_data();
    void referencePrompts();
    void specialTokensOnlyWhenAsked();
    void userDefinedTokensAlwaysMatched();
    void rstripAttribute();
    void addSpecialFollowsVocabulary();
    void piecesAreExactBytes();
    void gemma4CharacterBpe();
    void decodeMatchesLlamaCpp();
    void streamDecoderHoldsIncompleteCharacters();
    void invalidUtf8();
    void largeInputs();
};

void TestTokenizer::vectors_data() {
    QTest::addColumn<VectorSet>("set");
    for (const VectorSet& s : vectorSets()) QTest::addRow("%s", s.name.c_str()) << s;
}

void TestTokenizer::vectors() {
    QFETCH(VectorSet, set);
    VERDICT_NEED_FIXTURE(test::fixture(set.gguf));
    VERDICT_NEED_FIXTURE(test::fixture(set.cases + ".inp"));
    std::string error;
    auto tok = load(set.gguf, &error);
    QVERIFY2(tok, error.c_str());  // a missing pre-tokenizer fails here
    const std::vector<Case> cases = readCases(set.cases);
    QCOMPARE(cases.size(), set.nCases);
    int passed = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
        // As llama.cpp's test-tokenizer-0: add_special = false, parse_special = false.
        const std::vector<int32_t> got = tok->encode(cases[i].text, false, false);
        if (got == cases[i].ids) {
            ++passed;
            continue;
        }
        qWarning("%s case %zu %s\n  expected:%s\n  got:     %s", set.name.c_str(), i,
                 QByteArray::fromStdString(cases[i].text).toPercentEncoding(" ").constData(),
                 idsToString(cases[i].ids).c_str(), idsToString(got).c_str());
    }
    qInfo("%s: %d/%zu cases pass", set.name.c_str(), passed, cases.size());
    QCOMPARE(passed, int(cases.size()));
}

void TestTokenizer::vectorsFromManyThreads() {
    struct Loaded {
        std::shared_ptr<const Tokenizer> tok;
        std::vector<Case> cases;
    };
    std::vector<Loaded> all;
    for (const VectorSet& s : vectorSets()) {
        VERDICT_NEED_FIXTURE(test::fixture(s.gguf));
        auto tok = load(s.gguf);
        QVERIFY(tok);
        all.push_back(Loaded{tok, readCases(s.cases)});
    }
    // Every thread runs every case of every set, in its own order, several times.
    std::atomic<int> mismatches{0};
    std::atomic<int> runs{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 6; ++t) {
        threads.emplace_back([&, t] {
            std::mt19937 rng(t);
            for (int round = 0; round < 3; ++round) {
                std::vector<std::pair<size_t, size_t>> order;
                for (size_t s = 0; s < all.size(); ++s)
                    for (size_t c = 0; c < all[s].cases.size(); ++c) order.emplace_back(s, c);
                std::shuffle(order.begin(), order.end(), rng);
                for (auto [s, c] : order) {
                    if (all[s].tok->encode(all[s].cases[c].text, false, false) != all[s].cases[c].ids) ++mismatches;
                    ++runs;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    QCOMPARE(mismatches.load(), 0);
    QVERIFY(runs.load() >= 6 * 3 * 46);
}

void TestTokenizer::referencePrompts_data() {
    QTest::addColumn<QString>("json");
    const auto dir = test::fixture("reference");
    if (!std::filesystem::exists(dir)) {
        QTest::addRow("missing") << QString::fromStdString(dir.string());
        return;
    }
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir))
        if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
        QTest::addRow("%s", std::filesystem::path(f).stem().string().c_str()) << QString::fromStdString(f);
}

void TestTokenizer::referencePrompts() {
    QFETCH(QString, json);
    VERDICT_NEED_FIXTURE(json.toStdString());
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    const std::string model = root.value("model").toString().toStdString();  // "models/x.gguf"
    std::string error;
    auto tok = load(model, &error);
    QVERIFY2(tok, error.c_str());
    const QJsonObject meta = root.value("metadata").toObject();
    QCOMPARE(tok->addBos(), meta.value("add_bos").toBool());
    QCOMPARE(tok->addEos(), meta.value("add_eos").toBool());
    QCOMPARE(tok->bos(), meta.value("bos_id").toInt());
    QCOMPARE(tok->eos(), meta.value("eos_id").toInt());
    QCOMPARE(tok->nVocab(), meta.value("n_vocab").toInt());

    const QJsonArray cases = root.value("cases").toArray();
    QVERIFY(!cases.isEmpty());
    for (const QJsonValue& cv : cases) {
        const QJsonObject c = cv.toObject();
        const std::string prompt = c.value("prompt").toString().toStdString();
        std::vector<int32_t> expected;
        for (const QJsonValue& v : c.value("prompt_ids").toArray()) expected.push_back(v.toInt());
        // The reference tokenized with add_special = true, parse_special = false.
        QCOMPARE(qids(tok->encode(prompt, true, false)), qids(expected));
        const QJsonArray pieces = c.value("prompt_pieces").toArray();
        QCOMPARE(pieces.size(), qsizetype(expected.size()));
        for (qsizetype i = 0; i < pieces.size(); ++i)
            QCOMPARE(QString::fromStdString(tok->tokenToPiece(expected[size_t(i)], true)), pieces[i].toString());

        const QJsonArray genIds = c.value("gen_ids").toArray();
        const QJsonArray genHex = c.value("gen_pieces_hex").toArray();
        QCOMPARE(genIds.size(), genHex.size());
        std::vector<int32_t> gen;
        for (qsizetype i = 0; i < genIds.size(); ++i) {
            gen.push_back(genIds[i].toInt());
            QCOMPARE(QString::fromStdString(toHex(tok->tokenToPiece(gen.back(), false))), genHex[i].toString());
        }
        const QJsonArray isEog = c.value("gen_is_eog").toArray();
        for (qsizetype i = 0; i < isEog.size(); ++i) QCOMPARE(tok->isEog(gen[size_t(i)]), isEog[i].toBool());
    }
}

void TestTokenizer::specialTokensOnlyWhenAsked() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-llama-spm.gguf"));
    auto tok = load("tokenizer/ggml-vocab-llama-spm.gguf");
    QVERIFY(tok);
    const std::string text = "<s>Hello</s> world";
    const auto parsed = tok->encode(text, false, true);
    QCOMPARE(parsed.front(), tok->bos());
    QVERIFY(std::find(parsed.begin(), parsed.end(), tok->eos()) != parsed.end());
    // The text after a special token gets the SentencePiece space prefix again.
    std::vector<int32_t> manual{tok->bos()};
    for (int32_t id : tok->encode("Hello", false, false)) manual.push_back(id);
    manual.push_back(tok->eos());
    for (int32_t id : tok->encode(" world", false, false)) manual.push_back(id);
    QCOMPARE(qids(parsed), qids(manual));

    const auto plain = tok->encode(text, false, false);
    QVERIFY(std::find(plain.begin(), plain.end(), tok->bos()) == plain.end());
    QVERIFY(std::find(plain.begin(), plain.end(), tok->eos()) == plain.end());
    QCOMPARE(qb(tok->decode(plain)), qb(text));

    // Rendering: control tokens are hidden unless asked for.
    // The text after </s> is " world", which gets a second space prefix (as in llama.cpp); the
    // first space is dropped only when the first token is text.
    QCOMPARE(qb(tok->decode(parsed, false)), QByteArray(" Hello  world"));
    QCOMPARE(qb(tok->decode(parsed, true)), QByteArray("<s> Hello</s>  world"));
    QCOMPARE(qb(tok->tokenToPiece(tok->bos(), false)), QByteArray());
    QCOMPARE(qb(tok->tokenToPiece(tok->bos(), true)), QByteArray("<s>"));
}

void TestTokenizer::userDefinedTokensAlwaysMatched() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-deepseek-coder.gguf"));
    auto tok = load("tokenizer/ggml-vocab-deepseek-coder.gguf");
    QVERIFY(tok);
    const auto id = tok->tokenId("\xc3\xbc");  // "ü" is a user-defined token there
    QVERIFY(id.has_value());
    QVERIFY(tok->tokenAttr(*id) & kAttrUserDefined);
    const auto ids = tok->encode("F\xc3\xbchrer", false, false);
    QVERIFY(std::find(ids.begin(), ids.end(), *id) != ids.end());
    // Control tokens stay text unless parse_special.
    const std::string bosText(tok->tokenText(tok->bos()));
    const auto plain = tok->encode(bosText, false, false);
    QVERIFY(std::find(plain.begin(), plain.end(), tok->bos()) == plain.end());
    QCOMPARE(qids(tok->encode(bosText, false, true)), qids({tok->bos()}));
}

void TestTokenizer::rstripAttribute() {
    // general.name "Phi3": llama.cpp gives phi-3's special tokens RSTRIP, so the white space after
    // them disappears when they are parsed from text.
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-phi-3.gguf"));
    auto tok = load("tokenizer/ggml-vocab-phi-3.gguf");
    QVERIFY(tok);
    const auto user = tok->tokenId("<|user|>");
    QVERIFY(user.has_value());
    QVERIFY(tok->tokenAttr(*user) & kAttrRStrip);
    QCOMPARE(qids(tok->encode("<|user|>\n  Hi<|end|>", false, true)),
             qids(tok->encode("<|user|>Hi<|end|>", false, true)));
    QCOMPARE(tok->encode("<|user|>Hi", false, true).front(), *user);
}

void TestTokenizer::addSpecialFollowsVocabulary() {
    VERDICT_NEED_FIXTURE(test::fixture("models/stories260K.gguf"));
    // stories260K has no add_bos_token key: SentencePiece vocabularies then add BOS.
    auto spm = load("models/stories260K.gguf");
    QVERIFY(spm);
    QVERIFY(spm->addBos());
    QVERIFY(!spm->addEos());
    QCOMPARE(qids(spm->encode("", true, false)), qids({spm->bos()}));
    QCOMPARE(spm->encode("", false, false).size(), size_t(0));
    QCOMPARE(spm->sep(), kNoToken);  // its seperator_token_id 4294967295 is out of range
    QCOMPARE(qids(spm->eogTokens()), qids({spm->eos()}));

    auto gpt2 = load("tokenizer/ggml-vocab-gpt-2.gguf");
    QVERIFY(gpt2);
    QVERIFY(!gpt2->addBos());  // BPE default when the key is absent
    QCOMPARE(gpt2->encode("", true, false).size(), size_t(0));
    QCOMPARE(qids(gpt2->encode("Hi", true, false)), qids(gpt2->encode("Hi", false, false)));
    QVERIFY(gpt2->isEog(gpt2->eos()));

    auto deepseek = load("tokenizer/ggml-vocab-deepseek-llm.gguf");
    QVERIFY(deepseek);
    QVERIFY(deepseek->addBos());  // the key says so
    QCOMPARE(deepseek->encode("Hi", true, false).front(), deepseek->bos());

    auto bert = load("tokenizer/ggml-vocab-bert-bge.gguf");
    QVERIFY(bert);
    const auto ids = bert->encode("hello world", true, false);
    QCOMPARE(ids.front(), bert->cls());
    QCOMPARE(ids.back(), bert->sep());
    QCOMPARE(bert->cls(), 101);
    QCOMPARE(qids(bert->encode("", true, false)), qids({101, 102}));
}

void TestTokenizer::piecesAreExactBytes() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-gpt-2.gguf"));
    auto gpt2 = load("tokenizer/ggml-vocab-gpt-2.gguf");
    auto spm = load("tokenizer/ggml-vocab-llama-spm.gguf");
    QVERIFY(gpt2 && spm);
    for (const VectorSet& s : vectorSets()) {
        if (s.name != "gpt-2" && s.name != "llama-spm") continue;
        for (const Case& c : readCases(s.cases)) {
            const auto& tok = s.name == "gpt-2" ? gpt2 : spm;
            std::string joined;
            for (int32_t id : c.ids) joined += tok->tokenToPiece(id);
            // Byte-level BPE is lossless; SentencePiece adds one leading space.
            const std::string expected = s.name == "gpt-2" ? c.text : (c.text.empty() ? "" : " " + c.text);
            QCOMPARE(qb(toHex(joined)), qb(toHex(expected)));
        }
    }
    // A byte token is one raw byte (possibly half a character).
    const auto byte = spm->tokenId("<0xE4>");
    QVERIFY(byte.has_value());
    QCOMPARE(qb(spm->tokenToPiece(*byte)), QByteArray("\xE4"));
    QCOMPARE(qb(spm->tokenToPiece(-1)), QByteArray());
    QCOMPARE(qb(spm->tokenToPiece(spm->nVocab())), QByteArray());
}

void TestTokenizer::gemma4CharacterBpe() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-gemma-4.gguf"));
    std::string error;
    auto g = load("tokenizer/ggml-vocab-gemma-4.gguf", &error);
    QVERIFY2(g, error.c_str());
    QCOMPARE(g->type(), VocabType::CharBpe);
    // The file's keys: BOS <bos> = 2 added, EOS <eos> = 1 ends generation, no space prefix.
    QCOMPARE(g->bos(), 2);
    QVERIFY(g->addBos());
    QVERIFY(g->isEog(1));
    QCOMPARE(g->encode("Hello", true, false).front(), 2);
    QCOMPARE(qids(g->encode("Hello", true, false)), qids({2, 9259}));
    // Lossless: the reference ids' pieces are the case text (spaces unescaped, byte tokens raw).
    for (const VectorSet& s : vectorSets()) {
        if (s.name != "gemma-4") continue;
        for (const Case& c : readCases(s.cases)) {
            std::string joined;
            for (int32_t id : c.ids) joined += g->tokenToPiece(id);
            QCOMPARE(qb(toHex(joined)), qb(toHex(c.text)));
            QCOMPARE(qb(toHex(g->decode(c.ids, false))), qb(toHex(c.text)));
        }
    }
    // A character outside the vocabulary falls back to its bytes (the llama emoji of case 18).
    QCOMPARE(qids(g->encode("\xF0\x9F\xA6\x99", false, false)),
             qids({*g->tokenId("<0xF0>"), *g->tokenId("<0x9F>"), *g->tokenId("<0xA6>"), *g->tokenId("<0x99>")}));
    // A newline run that is a token stays whole; newline runs never merge with their neighbours.
    QCOMPARE(qids(g->encode("a\n\n\nb", false, false)),
             qids({*g->tokenId("a"), *g->tokenId("\n\n\n"), *g->tokenId("b")}));
    // An invalid byte is U+FFFD, as in the byte-level BPE.
    std::string joined;
    for (int32_t id : g->encode("x\xFFy", false, false)) joined += g->tokenToPiece(id);
    QCOMPARE(qb(joined), QByteArray("x\xEF\xBF\xBDy"));
}

void TestTokenizer::decodeMatchesLlamaCpp() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-gpt-2.gguf"));
    auto spm = load("tokenizer/ggml-vocab-llama-spm.gguf");
    auto gpt2 = load("tokenizer/ggml-vocab-gpt-2.gguf");
    auto bert = load("tokenizer/ggml-vocab-bert-bge.gguf");
    QVERIFY(spm && gpt2 && bert);
    // SentencePiece: the first token's leading space is dropped.
    QCOMPARE(qb(spm->decode(spm->encode("Hello world", true, false))), QByteArray(" Hello world"));
    QCOMPARE(qb(spm->decode(spm->encode("Hello world", false, false))), QByteArray("Hello world"));
    // clean_spaces (gpt-2): " ," -> "," and " 's" -> "'s", as llama_detokenize.
    QCOMPARE(qb(gpt2->decode(gpt2->encode("Hello , world 's !", false, false))), QByteArray("Hello, world's!"));
    QCOMPARE(qb(gpt2->decode(gpt2->encode("a ' b", false, false))), QByteArray("a'b"));
    QCOMPARE(qb(bert->decode(bert->encode("Hello, World!", false, false))), QByteArray(" hello, world!"));
}

void TestTokenizer::streamDecoderHoldsIncompleteCharacters() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-llama-spm.gguf"));
    auto tok = load("tokenizer/ggml-vocab-llama-spm.gguf");
    QVERIFY(tok);
    // Emoji and rare CJK characters are byte-fallback tokens in the Llama vocabulary.
    const std::string text = "h\xC3\xA9llo \xF0\x9F\x98\x80 \xE7\x8C\xAB\xF0\x9F\xA6\x99 end";
    const auto ids = tok->encode(text, false, false);
    int heldBack = 0;
    StreamDecoder dec(*tok);
    std::string streamed;
    for (int32_t id : ids) {
        const std::string part = dec.push(id);
        QVERIFY2(isValidUtf8(part), toHex(part).c_str());
        if (dec.pendingBytes() > 0) ++heldBack;
        streamed += part;
    }
    streamed += dec.flush();
    QVERIFY(heldBack > 0);  // the test really split characters across tokens
    QCOMPARE(qb(streamed), qb(" " + text));

    // Bytes that can never be valid become U+FFFD; an unfinished tail is flushed as U+FFFD.
    StreamDecoder bad(*tok);
    QCOMPARE(qb(bad.push(*tok->tokenId("<0xFF>"))), QByteArray("\xEF\xBF\xBD"));
    QCOMPARE(qb(bad.push(*tok->tokenId("<0xE4>"))), QByteArray());
    QCOMPARE(qb(bad.push(*tok->tokenId("<0x41>"))), QByteArray("\xEF\xBF\xBD" "A"));
    QCOMPARE(qb(bad.push(*tok->tokenId("<0xE4>"))), QByteArray());
    QCOMPARE(qb(bad.flush()), QByteArray("\xEF\xBF\xBD"));
    QCOMPARE(qb(bad.flush()), QByteArray());
}

void TestTokenizer::invalidUtf8() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-gpt-2.gguf"));
    auto spm = load("tokenizer/ggml-vocab-llama-spm.gguf");
    auto gpt2 = load("tokenizer/ggml-vocab-gpt-2.gguf");
    auto bert = load("tokenizer/ggml-vocab-bert-bge.gguf");
    QVERIFY(spm && gpt2 && bert);
    // SentencePiece keeps the raw bytes through <0xNN> tokens: nothing is lost. (Here "\xE4\xB8"
    // swallows the first byte of the escaped space, so that space comes back as raw bytes.)
    const std::string bad = "a\xFF\xC3(b\xE4\xB8 \x80z\xF8";
    std::string joined;
    for (int32_t id : spm->encode(bad, false, false)) joined += spm->tokenToPiece(id);
    QCOMPARE(qb(toHex(escaped(joined))), qb(toHex(escaped(" " + bad))));
    const auto badIds = spm->encode(bad, false, false);
    QVERIFY(std::find(badIds.begin(), badIds.end(), *spm->tokenId("<0xFF>")) != badIds.end());
    // Byte-level BPE and WordPiece read an invalid byte as U+FFFD (llama.cpp's decoder).
    const std::string fffd = "\xEF\xBF\xBD";
    const std::string replaced = "a" + fffd + fffd + "(b" + fffd + fffd + " " + fffd + "z" + fffd;
    QCOMPARE(qids(gpt2->encode(bad, false, false)), qids(gpt2->encode(replaced, false, false)));
    // Overlong forms are read as their code point, as llama.cpp does.
    QCOMPARE(qids(gpt2->encode("x\xC1\x81y", false, false)), qids(gpt2->encode("xAy", false, false)));
    // WordPiece drops U+FFFD.
    QCOMPARE(qids(bert->encode("ab\xFF" "cd", false, false)), qids(bert->encode("abcd", false, false)));
    // Empty and white-space-only input.
    for (const auto& t : {spm, gpt2, bert}) QCOMPARE(t->encode("", false, false).size(), size_t(0));
    QCOMPARE(bert->encode(" \t\n ", false, false).size(), size_t(0));
    // Random bytes never crash and SentencePiece stays lossless.
    std::mt19937 rng(7);
    for (int i = 0; i < 200; ++i) {
        std::string s(size_t(rng() % 64), '\0');
        for (char& c : s) c = char(rng() & 0xFF);
        joined.clear();
        for (int32_t id : spm->encode(s, false, false)) joined += spm->tokenToPiece(id);
        QCOMPARE(qb(toHex(escaped(joined))), qb(toHex(escaped(s.empty() ? s : " " + s))));
        for (int32_t id : gpt2->encode(s, true, true)) QVERIFY(id >= 0 && id < gpt2->nVocab());
        for (int32_t id : bert->encode(s, true, true)) QVERIFY(id >= 0 && id < bert->nVocab());
    }
}

void TestTokenizer::largeInputs() {
    VERDICT_NEED_FIXTURE(test::fixture("tokenizer/ggml-vocab-gpt-2.gguf"));
    std::mt19937 rng(3);
    std::string random(1 << 20, '\0');
    for (char& c : random) c = char(rng() & 0xFF);
    const std::vector<std::string> inputs = {std::string(1 << 20, 'a'), std::string(1 << 20, ' '), random};
    for (const char* name : {"llama-spm", "gpt-2", "deepseek-llm", "mpt", "bert-bge", "gemma-4"}) {
        auto tok = load(std::string("tokenizer/ggml-vocab-") + name + ".gguf");
        QVERIFY(tok);
        for (const std::string& in : inputs) {
            QElapsedTimer timer;
            timer.start();
            const auto ids = tok->encode(in, false, false);
            const qint64 ms = timer.elapsed();
            qInfo("%s: %zu bytes -> %zu tokens in %lld ms", name, in.size(), ids.size(), (long long)ms);
            if (tok->type() == VocabType::Wpm) continue;  // WordPiece normalises: not lossless
            std::string joined;
            joined.reserve(in.size() + 8);
            for (int32_t id : ids) joined += tok->tokenToPiece(id);
            if (tok->type() == VocabType::Spm) {
                QVERIFY(escaped(joined) == escaped(" " + in));
            } else {
                std::string canonical;
                if (!canonicalizeUtf8(in, canonical)) canonical = in;
                QVERIFY(joined == canonical);
            }
        }
    }
}

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
