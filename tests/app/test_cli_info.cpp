// `verdict info` end to end: the real binary over every fixture model (JSON checked against
// llama.cpp's figures) and over broken files (exit 2, one-line reason on stderr).
#include "fixtures.h"

#include <QtTest/QtTest>

#include <fstream>
#include <nlohmann/json.hpp>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runVerdict(const QStringList& args) {
    QProcess p;
    p.start(VERDICT_BINARY, args);
    p.waitForFinished(60000);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(), p.readAllStandardError()};
}

}  // namespace

class TestCliInfo : public QObject {
    Q_OBJECT
private slots:
    void everyFixture() {
        const auto models = verdict::test::fixture("models");
        VERDICT_NEED_FIXTURE(models);
        int checked = 0;
        for (const auto& e : std::filesystem::directory_iterator(models)) {
            if (e.path().extension() != ".gguf") continue;
            Run r = runVerdict({"info", "--json", "--ctx", "4096", QString::fromStdString(e.path().string())});
            QVERIFY2(r.exitCode == 0, r.err.constData());
            auto j = nlohmann::json::parse(r.out.toStdString());
            const auto ref = verdict::test::fixture("reference/" + e.path().stem().string() + ".json");
            if (std::filesystem::exists(ref)) {
                std::ifstream in(ref);
                auto m = nlohmann::json::parse(in)["metadata"];
                QCOMPARE(j["n_params"].get<uint64_t>(), m["n_params"].get<uint64_t>());
                QCOMPARE(j["n_vocab"].get<uint64_t>(), m["n_vocab"].get<uint64_t>());
                QCOMPARE(j["arch"].get<std::string>(), m["arch"].get<std::string>());
            }
            QCOMPARE(j["memory"]["ctx"].get<uint64_t>(), uint64_t(4096));
            QCOMPARE(j["file_bytes"].get<uint64_t>(), uint64_t(std::filesystem::file_size(e.path())));
            ++checked;
        }
        QVERIFY(checked >= 20);
    }

    void humanReadable() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        Run r = runVerdict({"info", QString::fromStdString(model.string())});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.contains("parameters:"));
        QVERIFY(r.out.contains("292.8 K"));
    }

    void saysWhatThisBuildLacks() {
        // Before any weight is read: the card names what is missing (a weight type here), or says yes.
        // Every fixture's weight types are computable, so the lacking file is stories260K with one
        // F32 matrix retyped I32 in its tensor table (same element size: the file stays valid).
        const auto src = verdict::test::fixture("models/stories260K.gguf");
        const auto ok = verdict::test::fixture("v0.5.0/models/synth-qwen3-f16.gguf");
        VERDICT_NEED_FIXTURE(src);
        VERDICT_NEED_FIXTURE(ok);
        QFile in(QString::fromStdString(src.string()));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QByteArray bytes = in.readAll();
        const QByteArray name("blk.0.ffn_up.weight");
        QByteArray entry(8, '\0');
        entry[0] = static_cast<char>(name.size());  // u64 length, then the name
        entry += name;
        const qsizetype at = bytes.indexOf(entry);
        QVERIFY(at > 0);
        const qsizetype typeAt = at + entry.size() + 4 + 2 * 8;  // n_dims u32 (2), two u64 dims
        QCOMPARE(bytes[typeAt], '\0');                           // F32
        bytes[typeAt] = 26;                                      // I32
        QTemporaryDir dir;
        const QString lacking = dir.filePath("lacking.gguf");
        QFile out(lacking);
        QVERIFY(out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size());
        out.close();
        Run r = runVerdict({"info", lacking, "--json"});
        QCOMPARE(r.exitCode, 0);
        const auto j = nlohmann::json::parse(r.out.toStdString());
        QCOMPARE(j["runs_here"]["cpu"].get<bool>(), false);
        QCOMPARE(j["runs_here"]["missing"].size(), size_t(1));
        QVERIFY(j["runs_here"]["missing"][0].get<std::string>().find("tensor type i32") != std::string::npos);
        Run text = runVerdict({"info", lacking});
        QVERIFY2(text.out.contains("runs here:            no: lacks tensor type i32"), text.out.constData());
        // The lattice i-quants are computable now: their file says yes.
        const auto iq2 = verdict::test::fixture("v0.5.0/models/synth-llama-iq2_xxs.gguf");
        VERDICT_NEED_FIXTURE(iq2);
        Run iq = runVerdict({"info", QString::fromStdString(iq2.string()), "--json"});
        QCOMPARE(nlohmann::json::parse(iq.out.toStdString())["runs_here"]["cpu"].get<bool>(), true);
        Run yes = runVerdict({"info", QString::fromStdString(ok.string()), "--json"});
        const auto y = nlohmann::json::parse(yes.out.toStdString());
        QCOMPARE(y["runs_here"]["cpu"].get<bool>(), true);
        QVERIFY(y["runs_here"]["missing"].empty());
    }

    void badFiles_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("wrong magic") << QByteArray("NOTAGGUFFILE-----------------");
        QByteArray v1("GGUF");
        v1.append(char(1)).append(3, '\0').append(16, '\0');
        QTest::newRow("version 1") << v1;
        QByteArray huge("GGUF");
        huge.append(char(3)).append(3, '\0');
        huge.append(QByteArray::fromHex("0000000000000010"));  // 2^60 tensors
        huge.append(8, '\0');
        QTest::newRow("absurd tensor count") << huge;
    }
    void badFiles() {
        QFETCH(QByteArray, bytes);
        QTemporaryFile f(QDir::temp().filePath("verdict-bad-XXXXXX.gguf"));
        QVERIFY(f.open());
        f.write(bytes);
        f.flush();
        Run r = runVerdict({"info", "--json", f.fileName()});
        QCOMPARE(r.exitCode, 2);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err.count('\n'), 1);
        QVERIFY(r.err.contains(f.fileName().toUtf8()));
    }

    void usageErrors() {
        QCOMPARE(runVerdict({"info"}).exitCode, 1);
        QCOMPARE(runVerdict({"info", "--bogus", "x.gguf"}).exitCode, 1);
        QCOMPARE(runVerdict({"info", "--ctx", "abc", "x.gguf"}).exitCode, 1);
        QCOMPARE(runVerdict({"no-such-command"}).exitCode, 1);
        Run v = runVerdict({"--version"});
        QCOMPARE(v.exitCode, 0);
        QVERIFY(v.out.startsWith("verdict "));
    }
};

QTEST_GUILESS_MAIN(TestCliInfo)
#include "test_cli_info.moc"
