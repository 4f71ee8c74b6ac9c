// Model discovery (core/models/model_discovery.h) over fake tool layouts built in a temporary
// home: LM Studio (with a split model and a broken split), Ollama (manifest + blob, another
// namespace, a second tag of the same blob, malformed manifests), the Hugging Face cache
// (snapshot symlinks into blobs, two revisions, refs/main, a broken link, a split model),
// GPT4All (top level only), non-GGUF files, symlink loops, the depth limit, and the env vars.
#include "core/models/model_discovery.h"
#include "gguf/gguf_writer.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

using namespace verdict;
using namespace verdict::core;
namespace fs = std::filesystem;

namespace {

// A small valid GGUF (header + metadata, no tensors), padded so sizes differ per file.
void writeGguf(const fs::path& path, const std::string& name, size_t padBytes = 0) {
    fs::create_directories(path.parent_path());
    gguf::GgufWriter w;
    w.set("general.architecture", gguf::Value::str("llama"));
    w.set("general.name", gguf::Value::str(name));
    if (padBytes) w.set("test.padding", gguf::Value::str(std::string(padBytes, 'x')));
    auto r = w.write(path.string());
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
}

void writeText(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

const std::string kHexA(64, 'a');
const std::string kHexB(64, 'b');

std::string manifest(const std::string& digest) {
    return "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
           "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
           kHexB + "\",\"size\":10},\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.template\",\"digest\":\"sha256:" +
           kHexB + "\",\"size\":5},{\"mediaType\":\"application/vnd.ollama.image.model\",\"digest\":\"" + digest +
           "\",\"size\":100}]}";
}

const DiscoveredModel* findByName(const std::vector<DiscoveredModel>& ms, const std::string& source, const std::string& name) {
    for (const auto& m : ms)
        if (m.source == source && m.name == name) return &m;
    return nullptr;
}

bool anyWarningContains(const std::vector<std::string>& ws, const std::string& text) {
    for (const auto& w : ws)
        if (w.find(text) != std::string::npos) return true;
    return false;
}

std::string joined(const std::vector<std::string>& ws) {
    std::string s;
    for (const auto& w : ws) s += w + "\n";
    return s;
}

}  // namespace

class TestModelDiscovery : public QObject {
    Q_OBJECT
private slots:
    void toolLayouts() {
        QTemporaryDir tmp;
        const fs::path home = tmp.path().toStdString();

        // LM Studio: publisher/repo/*.gguf; a split model; a split with a missing part; a
        // ".gguf" that is not GGUF; a non-gguf file; the second root under ~/.cache.
        const fs::path lms = home / ".lmstudio/models";
        writeGguf(lms / "pub/repo/model-Q4_K_M.gguf", "lms");
        writeGguf(lms / "pub/big/big-00001-of-00002.gguf", "big1", 100);
        writeGguf(lms / "pub/big/big-00002-of-00002.gguf", "big2", 300);
        writeGguf(lms / "pub/broken/x-00001-of-00003.gguf", "broken");
        writeText(lms / "pub/repo/fake.gguf", "this is not a model");
        writeText(lms / "pub/repo/README.md", "GGUF readme");
        writeGguf(home / ".cache/lm-studio/models/old/repo/legacy.gguf", "legacy");

        // Ollama: two tags of one blob, another namespace, malformed manifests.
        const fs::path oll = home / ".ollama/models";
        writeGguf(oll / ("blobs/sha256-" + kHexA), "ollama-blob");
        writeText(oll / "manifests/registry.ollama.ai/library/tiny/latest", manifest("sha256:" + kHexA));
        writeText(oll / "manifests/registry.ollama.ai/library/tiny/q4", manifest("sha256:" + kHexA));
        writeText(oll / "manifests/registry.ollama.ai/library/garbled/1b", "{not json");
        writeText(oll / "manifests/registry.ollama.ai/library/nolayer/1b", "{\"layers\":[]}");
        writeText(oll / "manifests/registry.ollama.ai/library/noblob/1b", manifest("sha256:" + kHexB));
        writeText(oll / "manifests/registry.ollama.ai/library/evil/1b", manifest("sha256:../../../etc/passwd"));
        writeText(oll / ("blobs/sha256-" + std::string(64, 'c')), "not gguf");
        writeText(oll / "manifests/registry.ollama.ai/library/notgguf/1b", manifest("sha256:" + std::string(64, 'c')));
        writeGguf(oll / ("blobs/sha256-" + std::string(64, 'd')), "other-ns");
        writeText(oll / "manifests/registry.ollama.ai/someone/thing/q8", manifest("sha256:" + std::string(64, 'd')));

        // Hugging Face: blobs + two snapshots (rev2 is refs/main) linking the same file name to
        // different blobs; a broken link; a split model via links.
        const fs::path repo = home / ".cache/huggingface/hub/models--TheOrg--Tiny-GGUF";
        writeGguf(repo / "blobs/old", "hf-old");
        writeGguf(repo / "blobs/new", "hf-new", 50);
        writeGguf(repo / "blobs/p1", "hf-p1", 10);
        writeGguf(repo / "blobs/p2", "hf-p2", 20);
        writeText(repo / "refs/main", "rev2\n");
        fs::create_directories(repo / "snapshots/rev1");
        fs::create_directories(repo / "snapshots/rev2/sub");
        fs::create_symlink("../../blobs/old", repo / "snapshots/rev1/tiny.Q8_0.gguf");
        fs::create_symlink("../../blobs/new", repo / "snapshots/rev2/tiny.Q8_0.gguf");
        fs::create_symlink("../../blobs/gone", repo / "snapshots/rev2/missing.gguf");
        fs::create_symlink("../../../blobs/p1", repo / "snapshots/rev2/sub/s-00001-of-00002.gguf");
        fs::create_symlink("../../../blobs/p2", repo / "snapshots/rev2/sub/s-00002-of-00002.gguf");

        // GPT4All: top level only.
        const fs::path g4a = home / ".local/share/nomic.ai/GPT4All";
        writeGguf(g4a / "gpt.gguf", "gpt");
        writeGguf(g4a / "nested/deeper.gguf", "deeper");

        const DiscoveryResult r = discoverModels(discoveryRootsUnder(home.string()));
        const auto& ms = r.models;
        const std::string warnings = joined(r.warnings);

        // LM Studio
        const DiscoveredModel* lm = findByName(ms, "lmstudio", "pub/repo/model-Q4_K_M.gguf");
        QVERIFY(lm);
        QCOMPARE(lm->path, (lms / "pub/repo/model-Q4_K_M.gguf").string());
        QCOMPARE(lm->bytes, uint64_t(fs::file_size(lm->path)));
        QVERIFY(findByName(ms, "lmstudio", "old/repo/legacy.gguf"));
        const DiscoveredModel* big = findByName(ms, "lmstudio", "pub/big/big-00001-of-00002.gguf");
        QVERIFY(big);
        QCOMPARE(big->bytes, uint64_t(fs::file_size(lms / "pub/big/big-00001-of-00002.gguf") +
                                      fs::file_size(lms / "pub/big/big-00002-of-00002.gguf")));
        QVERIFY(!findByName(ms, "lmstudio", "pub/big/big-00002-of-00002.gguf"));
        QVERIFY(!findByName(ms, "lmstudio", "pub/broken/x-00001-of-00003.gguf"));
        QVERIFY2(anyWarningContains(r.warnings, "x-00001-of-00003.gguf: split model part 2 of 3 is missing"), warnings.c_str());
        QVERIFY(!findByName(ms, "lmstudio", "pub/repo/fake.gguf"));

        // Ollama
        const DiscoveredModel* tiny = findByName(ms, "ollama", "tiny:latest");
        QVERIFY2(tiny, warnings.c_str());
        QCOMPARE(tiny->path, (oll / ("blobs/sha256-" + kHexA)).string());
        QVERIFY(!findByName(ms, "ollama", "tiny:q4"));  // same blob: listed once
        QVERIFY(findByName(ms, "ollama", "someone/thing:q8"));
        QVERIFY2(anyWarningContains(r.warnings, "library/garbled/1b: not a JSON object"), warnings.c_str());
        QVERIFY2(anyWarningContains(r.warnings, "library/nolayer/1b: no layer with mediaType application/vnd.ollama.image.model"),
                 warnings.c_str());
        QVERIFY2(anyWarningContains(r.warnings, "library/noblob/1b: blob"), warnings.c_str());
        QVERIFY2(anyWarningContains(r.warnings, "library/evil/1b: model layer digest"), warnings.c_str());
        QVERIFY2(anyWarningContains(r.warnings, "library/notgguf/1b: blob"), warnings.c_str());

        // Hugging Face: refs/main's revision wins; the split is listed once with both parts' bytes.
        const DiscoveredModel* hf = findByName(ms, "huggingface", "TheOrg/Tiny-GGUF/tiny.Q8_0.gguf");
        QVERIFY2(hf, warnings.c_str());
        QCOMPARE(hf->path, (repo / "snapshots/rev2/tiny.Q8_0.gguf").string());
        QCOMPARE(hf->bytes, uint64_t(fs::file_size(repo / "blobs/new")));
        const DiscoveredModel* hfSplit = findByName(ms, "huggingface", "TheOrg/Tiny-GGUF/sub/s-00001-of-00002.gguf");
        QVERIFY(hfSplit);
        QCOMPARE(hfSplit->bytes, uint64_t(fs::file_size(repo / "blobs/p1") + fs::file_size(repo / "blobs/p2")));
        QVERIFY(!findByName(ms, "huggingface", "TheOrg/Tiny-GGUF/missing.gguf"));

        // GPT4All
        QVERIFY(findByName(ms, "gpt4all", "gpt.gguf"));
        QVERIFY(!findByName(ms, "gpt4all", "nested/deeper.gguf"));

        // Exactly these, in source order.
        std::vector<std::string> got;
        for (const auto& m : ms) got.push_back(m.source + " " + m.name);
        const std::vector<std::string> want = {"lmstudio old/repo/legacy.gguf",
                                               "lmstudio pub/big/big-00001-of-00002.gguf",
                                               "lmstudio pub/repo/model-Q4_K_M.gguf",
                                               "ollama someone/thing:q8",
                                               "ollama tiny:latest",
                                               "huggingface TheOrg/Tiny-GGUF/sub/s-00001-of-00002.gguf",
                                               "huggingface TheOrg/Tiny-GGUF/tiny.Q8_0.gguf",
                                               "gpt4all gpt.gguf"};
        QCOMPARE(got, want);
    }

    void hfWithoutRefsPrefersNewestSnapshot() {
        QTemporaryDir tmp;
        const fs::path hub = fs::path(tmp.path().toStdString()) / "hub";
        const fs::path repo = hub / "models--solo";
        writeGguf(repo / "blobs/one", "one");
        writeGguf(repo / "blobs/two", "two", 10);
        fs::create_directories(repo / "snapshots/aaa");
        fs::create_directories(repo / "snapshots/bbb");
        fs::create_symlink("../../blobs/one", repo / "snapshots/bbb/m.gguf");
        fs::create_symlink("../../blobs/two", repo / "snapshots/aaa/m.gguf");
        // aaa is newer although it sorts first.
        fs::last_write_time(repo / "snapshots/bbb", fs::file_time_type::clock::now() - std::chrono::hours(24));
        DiscoveryRoots roots;
        roots.huggingFace = {hub.string()};
        const DiscoveryResult r = discoverModels(roots);
        QCOMPARE(r.models.size(), size_t(1));
        QCOMPARE(r.models[0].name, std::string("solo/m.gguf"));
        QCOMPARE(r.models[0].path, (repo / "snapshots/aaa/m.gguf").string());
    }

    void folderScanAndLoops() {
        QTemporaryDir tmp;
        const fs::path root = fs::path(tmp.path().toStdString()) / "models";
        writeGguf(root / "a.gguf", "a");
        writeGguf(root / "sub/b.GGUF", "b");
        writeText(root / "sub/c.bin", "GGUF but not named .gguf");
        fs::create_directory_symlink("..", root / "sub/up");      // loop back to models/
        fs::create_directory_symlink(".", root / "self");         // loop onto itself
        fs::create_symlink(root / "nowhere.gguf", root / "dangling.gguf");

        const DiscoveryResult flat = scanFolder(root.string(), false);
        QCOMPARE(flat.models.size(), size_t(1));
        QCOMPARE(flat.models[0].source, std::string("folder"));
        QCOMPARE(flat.models[0].name, std::string("a.gguf"));

        const DiscoveryResult deep = scanFolder(root.string(), true);  // terminates despite the loops
        std::vector<std::string> names;
        for (const auto& m : deep.models) names.push_back(m.name);
        QCOMPARE(names, (std::vector<std::string>{"a.gguf", "sub/b.GGUF"}));

        // A folder inside a tool's folder is not listed twice.
        DiscoveryRoots roots;
        roots.gpt4all = {root.string()};
        roots.folders = {root.string()};
        const DiscoveryResult both = discoverModels(roots);
        QCOMPARE(both.models.size(), size_t(2));
        QCOMPARE(both.models[0].source, std::string("gpt4all"));
        QCOMPARE(both.models[1].source, std::string("folder"));
        QCOMPARE(both.models[1].name, std::string("sub/b.GGUF"));

        const DiscoveryResult missing = scanFolder((root / "nope").string(), true);
        QVERIFY(missing.models.empty());
        QVERIFY(anyWarningContains(missing.warnings, "nope"));
    }

    void depthLimit() {
        QTemporaryDir tmp;
        fs::path root = fs::path(tmp.path().toStdString()) / "deep";
        fs::path p = root;
        for (int i = 0; i < kMaxDepth; ++i) {
            std::string level = "d";  // appended, not "d" + ...: GCC 12 warns falsely (-Wrestrict) on that
            level += std::to_string(i);
            p /= level;
        }
        writeGguf(p / "reachable.gguf", "ok");          // kMaxDepth levels down: scanned
        writeGguf(p / "more/too-deep.gguf", "no");      // one more: not
        const DiscoveryResult r = scanFolder(root.string(), true);
        QCOMPARE(r.models.size(), size_t(1));
        QVERIFY(r.models[0].name.find("reachable.gguf") != std::string::npos);
        QVERIFY2(anyWarningContains(r.warnings, "levels deep"), joined(r.warnings).c_str());
    }

    void unreadableFolderIsSkipped() {
        if (geteuid() == 0) QSKIP("running as root: permissions do not restrict reading");
        QTemporaryDir tmp;
        const fs::path root = fs::path(tmp.path().toStdString()) / "m";
        writeGguf(root / "ok.gguf", "ok");
        writeGguf(root / "locked/hidden.gguf", "hidden");
        fs::permissions(root / "locked", fs::perms::none);
        const DiscoveryResult r = scanFolder(root.string(), true);
        fs::permissions(root / "locked", fs::perms::owner_all);
        QCOMPARE(r.models.size(), size_t(1));
        QCOMPARE(r.models[0].name, std::string("ok.gguf"));
    }

    void rootsFromEnvironment() {
        const QByteArray oldHome = qgetenv("HOME");
        qputenv("HOME", "/home/tester");
        qputenv("OLLAMA_MODELS", "/data/ollama");
        qunsetenv("HF_HUB_CACHE");
        qputenv("HF_HOME", "/data/hf");
        DiscoveryRoots r = defaultDiscoveryRoots();
        QCOMPARE(r.ollama, std::vector<std::string>{"/data/ollama"});
        QCOMPARE(r.huggingFace, std::vector<std::string>{"/data/hf/hub"});
        QCOMPARE(r.lmStudio.front(), std::string("/home/tester/.lmstudio/models"));
        QCOMPARE(r.gpt4all.front(), std::string("/home/tester/.local/share/nomic.ai/GPT4All"));
        qputenv("HF_HUB_CACHE", "/data/hubcache");
        qunsetenv("OLLAMA_MODELS");
        r = defaultDiscoveryRoots();
        QCOMPARE(r.huggingFace, std::vector<std::string>{"/data/hubcache"});
        QCOMPARE(r.ollama.front(), std::string("/home/tester/.ollama/models"));
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HF_HOME");
        r = defaultDiscoveryRoots();
        QCOMPARE(r.huggingFace, std::vector<std::string>{"/home/tester/.cache/huggingface/hub"});
        qputenv("HOME", oldHome);
    }

    void magic() {
        QTemporaryDir tmp;
        const fs::path d = tmp.path().toStdString();
        writeGguf(d / "m.gguf", "m");
        writeText(d / "short", "GG");
        QVERIFY(hasGgufMagic((d / "m.gguf").string()));
        QVERIFY(!hasGgufMagic((d / "short").string()));
        QVERIFY(!hasGgufMagic((d / "absent").string()));
    }
};

QTEST_GUILESS_MAIN(TestModelDiscovery)
#include "test_model_discovery.moc"
