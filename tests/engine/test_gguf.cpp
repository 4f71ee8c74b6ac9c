// GGUF reader/writer: round trips, split models, and one named case per kind of hostile input.
#include "fixtures.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

#include <QtTest/QtTest>

#include <cstring>
#include <fstream>
#include <iterator>

using namespace verdict;
using namespace verdict::gguf;
using tensor::TensorType;

namespace {

// Little-endian byte builder for hand-made (and deliberately broken) files.
struct Bytes {
    std::vector<uint8_t> b;
    template <class T>
    Bytes& pod(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        b.insert(b.end(), p, p + sizeof v);
        return *this;
    }
    Bytes& str(const std::string& s) {
        pod<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& padTo(size_t align) {
        while (b.size() % align) b.push_back(0);
        return *this;
    }
    Bytes& zeros(size_t n) {
        b.insert(b.end(), n, 0);
        return *this;
    }
};

// Header with the given counts.
Bytes header(uint64_t nTensors, uint64_t nKv, uint32_t version = 3, uint32_t magic = kMagic) {
    Bytes x;
    x.pod(magic).pod(version).pod(nTensors).pod(nKv);
    return x;
}

void tensorInfo(Bytes& x, const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    x.str(name).pod<uint32_t>(static_cast<uint32_t>(ne.size()));
    for (auto d : ne) x.pod(d);
    x.pod(type).pod(offset);
}

// A valid file: one u32 key and two 8-element F32 tensors.
Bytes validFile() {
    Bytes x = header(2, 1);
    x.str("general.architecture").pod<uint32_t>(8).str("llama");
    tensorInfo(x, "a", {8}, 0, 0);
    tensorInfo(x, "b", {8}, 0, 32);
    x.padTo(32).zeros(64);
    return x;
}

std::string parseError(const Bytes& x) {
    auto r = GgufFile::parse(x.b.data(), x.b.size(), "bad.gguf");
    if (r) return {};
    return r.error().message;
}

std::vector<uint8_t> readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

QString tempPath(const QString& name) { return QDir::temp().filePath("verdict-test-" + QString::number(QCoreApplication::applicationPid()) + "-" + name); }

}  // namespace

struct CorruptCase {
    Bytes bytes;
    std::string mustMention;  // a word the one-line reason must contain
};
Q_DECLARE_METATYPE(CorruptCase)

class TestGguf : public QObject {
    Q_OBJECT
private slots:
    void validHandMade() {
        Bytes x = validFile();
        auto r = GgufFile::parse(x.b.data(), x.b.size(), "ok.gguf");
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE((*r)->tensors().size(), size_t(2));
        QCOMPARE((*r)->getString("general.architecture").value_or(""), std::string("llama"));
        QCOMPARE((*r)->tensor("b")->offset, uint64_t(32));
        QCOMPARE((*r)->tensor("b")->nBytes, uint64_t(32));
    }

    void corrupt_data() {
        QTest::addColumn<CorruptCase>("c");
        auto add = [](const char* name, Bytes b, std::string word) { QTest::newRow(name) << CorruptCase{std::move(b), std::move(word)}; };

        add("empty file", Bytes{}, "truncated");
        { Bytes x = validFile(); x.b.resize(10); add("truncated header", x, "truncated"); }
        { Bytes x = validFile(); x.b.resize(60); add("truncated in metadata", x, "offset"); }
        { Bytes x = validFile(); x.b.resize(x.b.size() - 10); add("truncated tensor data", x, "past the end"); }
        add("wrong magic", header(0, 0, 3, 0x12345678), "magic");
        add("version 1", header(0, 0, 1), "v1");
        add("version 99", header(0, 0, 99), "version");
        add("2^60 tensors", header(uint64_t(1) << 60, 0), "tensors cannot fit");
        add("2^60 keys", header(0, uint64_t(1) << 60), "cannot fit");
        { Bytes x = header(0, 1); x.pod<uint64_t>(uint64_t(1) << 40).zeros(8); add("key length past EOF", x, "past the end"); }
        { Bytes x = header(0, 1); x.str("k").pod<uint32_t>(8).pod<uint64_t>(1000).zeros(4); add("string value past EOF", x, "past the end"); }
        { Bytes x = header(0, 1); x.str("k").pod<uint32_t>(13).zeros(8); add("unknown value type", x, "unknown value type"); }
        { Bytes x = header(0, 1); x.str("k").pod<uint32_t>(9).pod<uint32_t>(4).pod<uint64_t>(uint64_t(1) << 60); add("absurd array count", x, "array count"); }
        { Bytes x = header(0, 1); x.str("k").pod<uint32_t>(9).pod<uint32_t>(77).pod<uint64_t>(1); add("unknown array element type", x, "element type"); }
        { Bytes x = header(0, 1); x.str("k").pod<uint32_t>(7).pod<uint8_t>(5); add("bool not 0 or 1", x, "bool"); }
        { Bytes x = header(0, 2); x.str("k").pod<uint32_t>(4).pod<uint32_t>(1); x.str("k").pod<uint32_t>(4).pod<uint32_t>(2); add("duplicate key", x, "duplicate"); }
        { Bytes x = header(0, 1); x.str("general.alignment").pod<uint32_t>(4).pod<uint32_t>(24); add("alignment not a power of two", x, "alignment"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {8}, 4, 0); x.padTo(32).zeros(32); add("removed type id 4", x, "type id"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {8}, 1000, 0); x.padTo(32).zeros(32); add("unknown type id", x, "type id"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {8, 1, 1, 1, 1}, 0, 0); x.padTo(32).zeros(32); add("five dims", x, "n_dims"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {uint64_t(1) << 40, uint64_t(1) << 40}, 0, 0); x.padTo(32).zeros(32); add("dims overflow", x, "overflow"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {uint64_t(1) << 63}, 0, 0); x.padTo(32).zeros(32); add("negative dim", x, "negative"); }
        // f32 [2^62, 1]: 2^62 elements fit in int64, their 2^64 bytes do not (it used to wrap to 0 and pass).
        { Bytes x = header(1, 0); tensorInfo(x, "t", {uint64_t(1) << 62, 1}, 0, 0); x.padTo(32).zeros(32); add("byte size overflows", x, "byte size overflows"); }
        // A tensor name with terminal escapes and 5000 bytes: quoted, escaped and cut in the message.
        {
            Bytes x = header(1, 0);
            tensorInfo(x, "\x1b]0;owned\x07\x1b[2J" + std::string(5000, 'A'), {8}, 1000, 0);
            x.padTo(32).zeros(32);
            add("hostile tensor name", x, "'\\x1b]0;owned\\x07\\x1b[2J");
        }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {33}, 2, 0); x.padTo(32).zeros(64); add("row not multiple of block", x, "block size"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {8}, 0, 1024); x.padTo(32).zeros(32); add("data out of range", x, "past the end"); }
        // The super-block formats read only (i-quants, ternary): rows of 128 are not whole IQ2_XXS
        // blocks; two TQ1_0 rows of 256 need 108 bytes, the file has 54.
        { Bytes x = header(1, 0); tensorInfo(x, "t", {128}, 16, 0); x.padTo(32).zeros(66); add("i-quant row not whole blocks", x, "block size"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {256, 2}, 34, 0); x.padTo(32).zeros(54); add("ternary data short", x, "past the end"); }
        { Bytes x = header(1, 0); tensorInfo(x, "t", {8}, 0, 7); x.padTo(32).zeros(64); add("misaligned offset", x, "alignment"); }
        { Bytes x = header(2, 0); tensorInfo(x, "a", {16}, 0, 0); tensorInfo(x, "b", {8}, 0, 32); x.padTo(32).zeros(96); add("overlapping tensors", x, "overlaps"); }
        { Bytes x = header(2, 0); tensorInfo(x, "a", {8}, 0, 0); tensorInfo(x, "a", {8}, 0, 32); x.padTo(32).zeros(64); add("duplicate tensor name", x, "duplicate"); }
        {
            // Array nesting deeper than any real file.
            Bytes x = header(0, 1);
            x.str("k").pod<uint32_t>(9);
            for (int i = 0; i < 6; ++i) x.pod<uint32_t>(9).pod<uint64_t>(1);
            x.pod<uint32_t>(4).pod<uint64_t>(1).pod<uint32_t>(0);
            add("arrays nested too deep", x, "nested");
        }
    }

    void corrupt() {
        QFETCH(CorruptCase, c);
        std::string err = parseError(c.bytes);
        QVERIFY2(!err.empty(), "a corrupt file parsed without error");
        QVERIFY2(err.rfind("bad.gguf: ", 0) == 0, err.c_str());  // names the file
        QVERIFY2(err.find('\n') == std::string::npos, err.c_str());  // one line
        QVERIFY2(err.find(c.mustMention) != std::string::npos, ("reason lacks '" + c.mustMention + "': " + err).c_str());
        // What came from the file is quoted: no control byte reaches the message, and it stays short.
        for (unsigned char ch : err) QVERIFY2(ch >= 0x20 && ch != 0x7f, err.c_str());
        QVERIFY2(err.size() < 600, err.c_str());
    }

    // Every prefix of a valid file must fail cleanly (no crash, no huge allocation).
    void everyTruncation() {
        Bytes x = validFile();
        for (size_t n = 0; n < x.b.size(); ++n) {
            auto r = GgufFile::parse(x.b.data(), n, "cut.gguf");
            QVERIFY2(!r.ok(), ("prefix of " + std::to_string(n) + " bytes parsed").c_str());
        }
    }

    void writeReadAllValueTypes() {
        GgufWriter w;
        w.set("u8", Value::u8(200));
        w.set("i8", Value::i8(-100));
        w.set("u16", Value::u16(60000));
        w.set("i16", Value::i16(-30000));
        w.set("u32", Value::u32(4000000000u));
        w.set("i32", Value::i32(-2000000000));
        w.set("u64", Value::u64(uint64_t(1) << 63));
        w.set("i64", Value::i64(-(int64_t(1) << 62)));
        w.set("f32", Value::f32(1.5f));
        w.set("f64", Value::f64(-2.25));
        w.set("bool", Value::boolean(true));
        w.set("str", Value::str("héllo\n"));
        w.set("arr", Value::stringArray({"a", "", "ccc"}));
        w.set("nested", Value::array(ValueType::Array, {Value::i32Array({1, 2}), Value::i32Array({})}));
        std::vector<float> data(64);
        for (size_t i = 0; i < data.size(); ++i) data[i] = float(i) * 0.5f;
        w.addTensor("t0", TensorType::F32, {16, 4}, data.data(), data.size() * 4);
        w.addTensor("t1", TensorType::F32, {3}, data.data(), 12);
        const QString path = tempPath("values.gguf");
        auto wr = w.write(path.toStdString());
        QVERIFY2(wr.ok(), wr.ok() ? "" : wr.error().message.c_str());

        auto r = GgufFile::open(path.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const auto& f = **r;
        QCOMPARE(f.getUInt("u8").value(), uint64_t(200));
        QCOMPARE(f.getInt("i8").value(), int64_t(-100));
        QCOMPARE(f.getUInt("u16").value(), uint64_t(60000));
        QCOMPARE(f.getInt("i16").value(), int64_t(-30000));
        QCOMPARE(f.getUInt("u32").value(), uint64_t(4000000000u));
        QCOMPARE(f.getInt("i32").value(), int64_t(-2000000000));
        QCOMPARE(f.getUInt("u64").value(), uint64_t(1) << 63);
        QCOMPARE(f.getInt("i64").value(), -(int64_t(1) << 62));
        QCOMPARE(f.getFloat("f32").value(), 1.5);
        QCOMPARE(f.getFloat("f64").value(), -2.25);
        QCOMPARE(f.getBool("bool").value(), true);
        QCOMPARE(f.getString("str").value(), std::string("héllo\n"));
        QCOMPARE(f.getArray("arr")->size(), size_t(3));
        QCOMPARE(*(*f.getArray("arr"))[2].asString(), std::string("ccc"));
        const auto* nested = f.getArray("nested");
        QCOMPARE(nested->size(), size_t(2));
        QCOMPARE((*nested)[0].asArray()->at(1).asInt().value(), int64_t(2));
        QCOMPARE(f.find("u16")->type, ValueType::UInt16);
        const TensorInfo* t1 = f.tensor("t1");
        QVERIFY(t1);
        QCOMPARE(t1->offset % 32, uint64_t(0));
        QCOMPARE(std::memcmp(t1->data, data.data(), 12), 0);
        QCOMPARE(f.tensor("t0")->shapeString(), std::string("[16, 4]"));
        QFile::remove(path);
    }

    void writerRejectsBadShape() {
        GgufWriter w;
        std::vector<uint8_t> data(18);
        w.addTensor("q", TensorType::Q4_0, {33}, data.data(), data.size());
        const QString path = tempPath("bad-shape.gguf");
        auto r = w.write(path.toStdString());
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("block size") != std::string::npos);
        QVERIFY(!QFile::exists(path));
    }

    // Reading any fixture and writing it back gives the identical bytes.
    void roundTripFixtures_data() {
        QTest::addColumn<QString>("file");
        for (const char* f : {"models/stories260K.gguf", "models/llama-2-tiny-random.gguf", "models/synth-llama-q4_k.gguf",
                              "models/synth-llama-moe-q8_0.gguf", "models/synth-deepseek2-q4_k.gguf",
                              "tokenizer/ggml-vocab-gpt-2.gguf"})
            QTest::newRow(f) << QString(f);
    }
    void roundTripFixtures() {
        QFETCH(QString, file);
        const auto path = verdict::test::fixture(file.toStdString());
        VERDICT_NEED_FIXTURE(path);
        auto r = GgufFile::open(path.string());
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        const auto& f = **r;
        GgufWriter w(f.version());
        for (const auto& [k, v] : f.metadata()) w.set(k, v);
        for (const auto& t : f.tensors())
            w.addTensor(t.name, t.type, std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + t.nDims), t.data, t.nBytes);
        const QString out = tempPath("roundtrip.gguf");
        auto wr = w.write(out.toStdString());
        QVERIFY2(wr.ok(), wr.ok() ? "" : wr.error().message.c_str());
        QVERIFY2(readAll(out.toStdString()) == readAll(path.string()), "written file differs from the original");
        QFile::remove(out);
    }

    void splitModel() {
        // Two parts, as gguf-split writes them: metadata in part 1, split.* keys in both.
        const QString prefix = tempPath("split");
        std::vector<float> a(32, 1.0f), b(32, 2.0f);
        for (uint32_t part = 1; part <= 2; ++part) {
            GgufWriter w;
            if (part == 1) w.set("general.architecture", Value::str("llama"));
            w.set("split.no", Value::u16(static_cast<uint16_t>(part - 1)));
            w.set("split.count", Value::u16(2));
            w.set("split.tensors.count", Value::i32(2));
            if (part == 1) w.addTensor("a", TensorType::F32, {32}, a.data(), 128);
            else w.addTensor("b", TensorType::F32, {32}, b.data(), 128);
            auto r = w.write(splitPath(prefix.toStdString(), part, 2));
            QVERIFY(r.ok());
        }
        // Opening any part opens the whole model.
        auto r = GgufFile::open(splitPath(prefix.toStdString(), 2, 2));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE((*r)->tensors().size(), size_t(2));
        QCOMPARE((*r)->partPaths().size(), size_t(2));
        QCOMPARE((*r)->getString("general.architecture").value_or(""), std::string("llama"));
        float got = 0;
        std::memcpy(&got, (*r)->tensor("b")->data, 4);
        QCOMPARE(got, 2.0f);
        // A missing part is an error naming that part.
        QFile::remove(QString::fromStdString(splitPath(prefix.toStdString(), 2, 2)));
        auto missing = GgufFile::open(splitPath(prefix.toStdString(), 1, 2));
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("00002-of-00002") != std::string::npos);
        QFile::remove(QString::fromStdString(splitPath(prefix.toStdString(), 1, 2)));
    }

    void splitNames() {
        auto s = parseSplitName("/m/Model-Q4_K_M-00002-of-00005.gguf");
        QVERIFY(s);
        QCOMPARE(s->prefix, std::string("/m/Model-Q4_K_M"));
        QCOMPARE(s->part, 2u);
        QCOMPARE(s->count, 5u);
        QVERIFY(!parseSplitName("model.gguf"));
        QVERIFY(!parseSplitName("m-00006-of-00005.gguf"));
        QCOMPARE(splitPath("x", 3, 12), std::string("x-00003-of-00012.gguf"));
    }

    void missingFile() {
        auto r = GgufFile::open("/nonexistent/model.gguf");
        QVERIFY(!r.ok());
        QVERIFY(r.error().message.find("/nonexistent/model.gguf") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestGguf)
#include "test_gguf.moc"
