// `verdict discover` end to end: --root at a temporary home holding a Hugging Face cache whose
// snapshot links to the stories260K fixture (a link, not a copy), a GPT4All file with a bare
// GGUF header (no metadata: listed, fit unknown, error named), a malformed Ollama manifest
// (a warning) and a non-GGUF file (ignored). Checks the JSON shape.
#include "cli_process.h"
#include "fixtures.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

using verdict::test::CliRun;
using verdict::test::runVerdict;

void writeBytes(const fs::path& p, const std::string& bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
}

// "GGUF", version 3, 0 tensors, 0 metadata pairs (little-endian): a valid, empty GGUF.
std::string bareGguf() {
    std::string s = "GGUF";
    const uint32_t version = 3;
    const uint64_t zero = 0;
    s.append(reinterpret_cast<const char*>(&version), 4);
    s.append(reinterpret_cast<const char*>(&zero), 8);
    s.append(reinterpret_cast<const char*>(&zero), 8);
    return s;
}

}  // namespace

class TestCliDiscover : public QObject {
    Q_OBJECT
private slots:
    void jsonShape() {
        const auto model = verdict::test::fixture("models/stories260K.gguf");
        VERDICT_NEED_FIXTURE(model);
        QTemporaryDir tmp;
        const fs::path home = tmp.path().toStdString();
        const fs::path repo = home / ".cache/huggingface/hub/models--karpathy--tinyllamas";
        fs::create_directories(repo / "snapshots/r1");
        fs::create_directories(repo / "blobs");
        fs::create_symlink(fs::absolute(model), repo / "blobs/deadbeef");
        fs::create_symlink("../../blobs/deadbeef", repo / "snapshots/r1/stories260K.gguf");
        writeBytes(home / ".local/share/nomic.ai/GPT4All/empty.gguf", bareGguf());
        writeBytes(home / ".local/share/nomic.ai/GPT4All/notes.gguf", "plain text");
        writeBytes(home / ".ollama/models/manifests/registry.ollama.ai/library/bad/latest", "[1,2");

        CliRun r = runVerdict({"discover", "--root", QString::fromStdString(home.string()), "--json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const nlohmann::json j = nlohmann::json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(j.is_object(), r.out.constData());
        QVERIFY(j["models"].is_array());
        QCOMPARE(j["models"].size(), size_t(2));

        const auto& hf = j["models"][0];
        QCOMPARE(hf["source"].get<std::string>(), std::string("huggingface"));
        QCOMPARE(hf["name"].get<std::string>(), std::string("karpathy/tinyllamas/stories260K.gguf"));
        QCOMPARE(hf["path"].get<std::string>(), (repo / "snapshots/r1/stories260K.gguf").string());
        QCOMPARE(hf["bytes"].get<uint64_t>(), uint64_t(fs::file_size(model)));
        QVERIFY(hf["error"].is_null());
        const auto& fit = hf["fit"];
        QVERIFY2(fit.is_object(), hf.dump().c_str());
        const std::string badge = fit["fit"].get<std::string>();
        QVERIFY(badge == "fits" || badge == "tight" || badge == "wont_fit");
        QCOMPARE(fit["device"].get<std::string>(), std::string("cpu"));
        QVERIFY(fit["ctx"].get<uint64_t>() > 0 && fit["ctx"].get<uint64_t>() <= 4096);
        // A 1 MB model needs more than its file (KV, scratch, the 256 MiB overhead).
        QVERIFY(fit["need_bytes"].get<uint64_t>() > (256ull << 20));
        QVERIFY(fit["have_bytes"].is_number_unsigned());
        QVERIFY(fit["reason"].get<std::string>().rfind("needs ", 0) == 0);
        if (fit["have_bytes"].get<uint64_t>() > 4 * fit["need_bytes"].get<uint64_t>()) QCOMPARE(badge, std::string("fits"));

        const auto& g = j["models"][1];
        QCOMPARE(g["source"].get<std::string>(), std::string("gpt4all"));
        QCOMPARE(g["name"].get<std::string>(), std::string("empty.gguf"));
        QVERIFY(g["fit"].is_null());
        QVERIFY2(g["error"].is_string() && g["error"].get<std::string>().find("empty.gguf") != std::string::npos,
                 g.dump().c_str());

        QVERIFY(j["warnings"].is_array());
        QCOMPARE(j["warnings"].size(), size_t(1));
        QVERIFY(j["warnings"][0].get<std::string>().find("library/bad/latest") != std::string::npos);

        // --no-fit skips the metadata; text output lists both; a folder adds "folder" models.
        CliRun nf = runVerdict({"discover", "--root", QString::fromStdString(home.string()), "--no-fit", "--json"});
        QCOMPARE(nf.exitCode, 0);
        const auto nj = nlohmann::json::parse(nf.out.toStdString());
        QVERIFY(nj["models"][0]["fit"].is_null() && nj["models"][0]["error"].is_null());
        CliRun text = runVerdict({"discover", "--root", QString::fromStdString(home.string())});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.contains("karpathy/tinyllamas/stories260K.gguf"));
        QVERIFY(text.err.contains("warning"));
        CliRun folder = runVerdict({"discover", "--root", QString::fromStdString((home / "empty-home").string()), "--folder",
                                 QString::fromStdString((home / ".local/share/nomic.ai").string()), "--no-fit", "--json"});
        QCOMPARE(folder.exitCode, 0);
        const auto fj = nlohmann::json::parse(folder.out.toStdString());
        QCOMPARE(fj["models"].size(), size_t(1));
        QCOMPARE(fj["models"][0]["source"].get<std::string>(), std::string("folder"));
        QCOMPARE(fj["models"][0]["name"].get<std::string>(), std::string("GPT4All/empty.gguf"));

        CliRun bad = runVerdict({"discover", "extra"});
        QCOMPARE(bad.exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestCliDiscover)
#include "test_cli_discover.moc"
