// Suite import, file level: JSONL / JSON array / CSV / TSV / gzip, BOM, CRLF, quoted newlines,
// per-record rejections with exact line numbers, content hashes, streaming.
#include "core/suite/byte_source.h"
#include "core/suite/suite_importer.h"
#include "fixtures.h"

#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <zlib.h>

#include <fstream>

using namespace verdict::core;

namespace {
std::string suiteFile(const char* name) { return verdict::test::testData(std::string("suites/") + name).string(); }

std::string fileSha256(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex().toStdString();
}

std::string rejectsText(const ImportResult& r) {
    std::string s;
    for (const auto& x : r.rejected) s += std::to_string(x.line) + ": " + x.reason + "\n";
    return s;
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream f(path, std::ios::binary);
    f << bytes;
}
}  // namespace

class TestSuiteImportFormats : public QObject {
    Q_OBJECT
private slots:
    void jsonlRejectsWithLineNumbers() {
        auto r = importSuite(suiteFile("prompts_mixed.jsonl"));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->shape, std::string("prompt"));
        QCOMPARE(r->format, std::string("jsonl"));
        QCOMPARE(r->items.size(), size_t(6));
        QCOMPARE(r->rejectedCount, size_t(5));
        const std::vector<int> lines = {5, 6, 7, 8, 9};
        QCOMPARE(r->rejected.size(), lines.size());
        for (size_t i = 0; i < lines.size(); ++i) QCOMPARE(r->rejected[i].line, lines[i]);
        QVERIFY2(r->rejected[0].reason.find("no prompt") != std::string::npos, rejectsText(*r).c_str());
        QVERIFY(r->rejected[1].reason.rfind("invalid JSON", 0) == 0);
        QVERIFY(r->rejected[2].reason.find("not an object") != std::string::npos);
        QVERIFY(r->rejected[3].reason.find("bad UTF-8") != std::string::npos);
        QVERIFY(r->rejected[4].reason.find("no prompt") != std::string::npos);
        // Items keep their own source line; blank line 3 is not a record.
        QCOMPARE(r->items[0].sourceLine, 1);
        QCOMPARE(r->items[2].sourceLine, 4);
        QVERIFY(r->items[0].references.empty());   // generate-only
        QVERIFY(r->items[0].scorers.empty());      // nothing to score against
        QCOMPARE(r->items[2].references, (std::vector<std::string>{"Pacific", "Pacific Ocean"}));
        QCOMPARE(r->items[2].scorers.front().name, std::string("exact"));
        QCOMPARE(r->items[3].category, std::string("中文"));
        // Duplicate ids are kept, renamed, and reported as a warning.
        QCOMPARE(r->items[4].id, std::string("dup"));
        QCOMPARE(r->items[5].id, std::string("dup@12"));
        QCOMPARE(r->warnings.size(), size_t(1));
        QCOMPARE(r->warnings[0].line, 12);
        QCOMPARE(r->items[0].id, std::string("1"));  // no id in the file: the line number
    }

    // A set cancel flag stops the import at the next item with an error naming the file (the
    // window's import dialog closed during a large file); unset, the import is unchanged.
    void cancelStopsTheImport() {
        const std::string path = suiteFile("prompts_mixed.jsonl");
        std::atomic<bool> cancel{true};
        auto stopped = importSuite(path, {}, &cancel);
        QVERIFY(!stopped.ok());
        QVERIFY2(stopped.error().message.find("cancelled") != std::string::npos, stopped.error().message.c_str());
        QVERIFY(stopped.error().message.find("prompts_mixed.jsonl") != std::string::npos);
        cancel = false;
        auto full = importSuite(path, {}, &cancel);
        QVERIFY(full.ok());
        QCOMPARE(full->items.size(), size_t(6));
    }

    void gzipMatchesPlain() {
        auto plain = importSuite(suiteFile("gsm8k_sample.jsonl"));
        auto gz = importSuite(suiteFile("gsm8k_sample.jsonl.gz"));
        QVERIFY(plain.ok() && gz.ok());
        QVERIFY(gz->gzip);
        QVERIFY(!plain->gzip);
        QCOMPARE(gz->suiteName, std::string("gsm8k_sample"));
        QCOMPARE(gz->items.size(), plain->items.size());
        for (size_t i = 0; i < gz->items.size(); ++i) {
            QCOMPARE(gz->items[i].prompt, plain->items[i].prompt);
            QCOMPARE(gz->items[i].references, plain->items[i].references);
            QCOMPARE(gz->items[i].sourceLine, plain->items[i].sourceLine);
        }
        QCOMPARE(rejectsText(*gz), rejectsText(*plain));
        // The hash is of the bytes as stored: the .gz and the plain file differ.
        QCOMPARE(plain->contentHash, fileSha256(suiteFile("gsm8k_sample.jsonl")));
        QCOMPARE(gz->contentHash, fileSha256(suiteFile("gsm8k_sample.jsonl.gz")));
        QVERIFY(gz->contentHash != plain->contentHash);
        QCOMPARE(gz->textBytes, plain->fileBytes);
    }

    // A small .gz that inflates to far more text than the limit: an error naming the limit and
    // the flag, not a process that grows until the machine kills it.
    void gzipBombIsRefused() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("bomb.jsonl.gz").toStdString();
        {
            gzFile g = gzopen(path.c_str(), "wb9");
            const std::string line = "{\"prompt\": \"" + std::string(1000, 'a') + "\", \"reference\": \"b\"}\n";
            for (int i = 0; i < 3000; ++i) gzwrite(g, line.data(), unsigned(line.size()));  // ~3 MB of text
            gzclose(g);
        }
        ImportOptions o;
        o.gzip.maxExpandedBytes = uint64_t{1} << 20;  // 1 MiB
        auto r = importSuite(path, o);
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("expands past 1 MiB") != std::string::npos, r.error().message.c_str());
        QVERIFY(r.error().message.find("--max-expanded-mib") != std::string::npos);
        o.gzip.maxExpandedBytes = 0;  // no limit: the file is genuine
        auto ok = importSuite(path, o);
        QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message.c_str());
        QCOMPARE(ok->items.size(), size_t(3000));
    }

    // A .gz that inflates far beyond any real suite file (here ~1000:1) is refused once 64 MiB have
    // come out of it, not after the size cap's 2 GiB (which took ten minutes of importing).
    void gzipRatioIsBounded() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("ratio.jsonl.gz").toStdString();
        const uint64_t total = uint64_t{80} << 20;
        {
            gzFile g = gzopen(path.c_str(), "wb9");
            const std::string block(1 << 20, '\n');
            for (uint64_t i = 0; i < (total >> 20); ++i) gzwrite(g, block.data(), unsigned(block.size()));
            gzclose(g);
        }
        auto readAll = [&](const GzipLimits& limits, uint64_t& got) -> verdict::Result<void> {
            auto src = ByteSource::open(path, limits);
            if (!src) return src.error();
            std::vector<char> buf(1 << 20);
            got = 0;
            for (;;) {
                auto n = (*src)->read(buf.data(), buf.size());
                if (!n) return n.error();
                if (*n == 0) return {};
                got += *n;
            }
        };
        uint64_t got = 0;
        auto refused = readAll(GzipLimits{}, got);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("expands more than 100:1") != std::string::npos, refused.error().message.c_str());
        QVERIFY(refused.error().message.find("--max-expand-ratio") != std::string::npos);
        QVERIFY2(got <= GzipLimits::kRatioGraceBytes + (uint64_t{1} << 20), std::to_string(got).c_str());
        GzipLimits lifted;
        lifted.maxRatio = 0;  // the file is genuine
        auto ok = readAll(lifted, got);
        QVERIFY2(ok.ok(), ok.ok() ? "" : ok.error().message.c_str());
        QCOMPARE(got, total);
    }

    void concatenatedGzipMembersAndTruncation() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("two_members.jsonl.gz").toStdString();
        for (const char* part : {"{\"prompt\": \"one\"}\n", "{\"prompt\": \"two\"}\n{\"prompt\": \"three\"}\n"}) {
            gzFile g = gzopen(path.c_str(), "ab");  // each gzopen/gzclose in append mode adds a member
            QVERIFY(g);
            gzputs(g, part);
            gzclose(g);
        }
        auto r = importSuite(path);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->items.size(), size_t(3));
        QCOMPARE(r->items[2].prompt, std::string("three"));
        QCOMPARE(r->items[2].sourceLine, 3);

        QFile f(QString::fromStdString(suiteFile("gsm8k_sample.jsonl.gz")));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray whole = f.readAll();
        const std::string cut = dir.filePath("cut.jsonl.gz").toStdString();
        writeFile(cut, whole.left(whole.size() / 2).toStdString());
        auto bad = importSuite(cut);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.error().message.find("truncated") != std::string::npos, bad.error().message.c_str());
    }

    void csvBomCrlfQuotedNewlines() {
        auto r = importSuite(suiteFile("prompts_bom_crlf.csv"));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->format, std::string("csv"));
        QCOMPARE(r->shape, std::string("prompt"));
        QCOMPARE(r->items.size(), size_t(3));
        QCOMPARE(r->items[0].prompt, std::string("Summarise in one line:\r\n\"Less is more.\""));
        QCOMPARE(r->items[0].category, std::string("writing"));  // the BOM did not stick to "prompt"
        QCOMPARE(r->items[0].sourceLine, 2);
        QCOMPARE(r->items[1].sourceLine, 4);  // the quoted newline moved it down a line
        QCOMPARE(r->items[1].references, std::vector<std::string>{"56"});
        QCOMPARE(r->items[2].prompt, std::string("List three colours, separated by commas."));
        QVERIFY(r->items[2].references.empty());  // empty cell: generate-only
        QCOMPARE(r->rejected.size(), size_t(2));
        QCOMPARE(r->rejected[0].line, 6);
        QVERIFY2(r->rejected[0].reason.find("4 fields") != std::string::npos, rejectsText(*r).c_str());
        QCOMPARE(r->rejected[1].line, 7);
        QVERIFY2(r->rejected[1].reason.find("unterminated quoted field") != std::string::npos, rejectsText(*r).c_str());
    }

    void csvBadUtf8() {
        auto r = importSuite(suiteFile("bad_utf8.csv"));
        QVERIFY(r.ok());
        QCOMPARE(r->items.size(), size_t(2));
        QCOMPARE(r->rejected.size(), size_t(1));
        QCOMPARE(r->rejected[0].line, 3);
        QVERIFY(r->rejected[0].reason.find("bad UTF-8") != std::string::npos);
    }

    void jsonArrayLineNumbers() {
        auto r = importSuite(suiteFile("aqua_rat_sample.json"));
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->format, std::string("json"));
        QCOMPARE(r->items.size(), size_t(2));
        QCOMPARE(r->items[0].sourceLine, 2);
        QCOMPARE(r->items[1].sourceLine, 8);
        QCOMPARE(r->rejected.size(), size_t(1));
        QCOMPARE(r->rejected[0].line, 14);
    }

    void malformedJsonArrayStopsWithReport() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("broken.json").toStdString();
        writeFile(path, "[\n {\"prompt\": \"a\"},\n {\"prompt\": \"b\"}\n {\"prompt\": \"c\"}\n]\n");
        auto r = importSuite(path);
        QVERIFY(r.ok());
        QCOMPARE(r->items.size(), size_t(2));
        QCOMPARE(r->rejected.size(), size_t(1));
        QCOMPARE(r->rejected[0].line, 4);
        QVERIFY(r->rejected[0].reason.find("expected ',' or ']'") != std::string::npos);
        QVERIFY(r->rejected[0].reason.find("not read") != std::string::npos);
    }

    void sameFileSameHash() {
        QTemporaryDir dir;
        const std::string a = dir.filePath("a.jsonl").toStdString();
        const std::string b = dir.filePath("b.jsonl").toStdString();
        writeFile(a, "{\"prompt\": \"x\", \"reference\": \"1\"}\n");
        writeFile(b, "{\"prompt\": \"x\", \"reference\": \"2\"}\n");
        auto r1 = importSuite(a), r2 = importSuite(a), r3 = importSuite(b);
        QVERIFY(r1.ok() && r2.ok() && r3.ok());
        QCOMPARE(r1->contentHash, r2->contentHash);
        QVERIFY(r1->contentHash != r3->contentHash);
        QCOMPARE(r1->contentHash.size(), size_t(64));
    }

    void streamingStopsEarlyButHashesAll() {
        size_t seen = 0;
        auto s = importSuiteStreaming(suiteFile("gsm8k_sample.jsonl"), {}, [&](SuiteItem&& item) {
            ++seen;
            return item.sourceLine < 2;  // stop after the second item
        });
        QVERIFY(s.ok());
        QCOMPARE(seen, size_t(2));
        QCOMPARE(s->takenCount, size_t(2));
        QCOMPARE(s->contentHash, fileSha256(suiteFile("gsm8k_sample.jsonl")));
    }

    // The in-memory entry (what fuzz_suite_import drives) reads like the file it was read from:
    // same items, rejections, hash and gzip handling, the name standing in for the path.
    void memoryImportMatchesFile() {
        for (const char* name : {"prompts_mixed.jsonl", "gsm8k_sample.jsonl.gz", "abstract_algebra_test.csv", "aqua_rat_sample.json"}) {
            const std::string path = suiteFile(name);
            std::ifstream f(path, std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
            auto fromFile = importSuiteStreaming(path, {}, [](SuiteItem&&) { return true; });
            std::vector<SuiteItem> items;
            auto fromMemory = importSuiteStreamingFromMemory(bytes, name, {}, [&](SuiteItem&& item) {
                items.push_back(std::move(item));
                return true;
            });
            QVERIFY2(fromFile.ok() && fromMemory.ok(), name);
            QCOMPARE(fromMemory->takenCount, fromFile->takenCount);
            QCOMPARE(items.size(), fromFile->takenCount);
            QCOMPARE(fromMemory->rejectedCount, fromFile->rejectedCount);
            QCOMPARE(fromMemory->shape, fromFile->shape);
            QCOMPARE(fromMemory->format, fromFile->format);
            QCOMPARE(fromMemory->gzip, fromFile->gzip);
            QCOMPARE(fromMemory->contentHash, fromFile->contentHash);
            QCOMPARE(fromMemory->fileBytes, uint64_t(bytes.size()));
            QCOMPARE(fromMemory->textBytes, fromFile->textBytes);
            QCOMPARE(fromMemory->suiteName, fromFile->suiteName);
        }
        auto empty = importSuiteStreamingFromMemory("", "empty.jsonl", {}, [](SuiteItem&&) { return true; });
        QVERIFY(empty.ok());
        QCOMPARE(empty->takenCount, size_t(0));
        auto corrupt = importSuiteStreamingFromMemory(std::string("\x1f\x8b\x08\x00garbage", 11), "bad.jsonl.gz", {},
                                                      [](SuiteItem&&) { return true; });
        QVERIFY(!corrupt.ok());
        QVERIFY2(corrupt.error().message.find("bad.jsonl.gz") != std::string::npos, corrupt.error().message.c_str());
    }

    // A float answer far outside int64 (fuzz_suite_import: 9.999e+83) is kept as JSON prints it;
    // the integer check must not convert it first (undefined behaviour, UBSan aborts).
    void hugeFloatAnswers() {
        std::vector<SuiteItem> items;
        auto r = importSuiteStreamingFromMemory("{\"question\": \"q\", \"answer\": 9.999e+83}\n"
                                                "{\"question\": \"r\", \"answer\": -1e300}\n"
                                                "{\"question\": \"s\", \"answer\": 42.0}\n",
                                                "huge.jsonl", {}, [&](SuiteItem&& item) {
                                                    items.push_back(std::move(item));
                                                    return true;
                                                });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(items.size(), size_t(3));
        QCOMPARE(items[0].references, std::vector<std::string>{"9.999e+83"});
        QCOMPARE(items[1].references, std::vector<std::string>{"-1e+300"});
        QCOMPARE(items[2].references, std::vector<std::string>{"42"});
    }

    void formatHints() {
        auto forced = importSuite(suiteFile("abstract_algebra_test.csv"), ImportOptions{"", std::nullopt, "csv-noheader"});
        QVERIFY(forced.ok());
        QCOMPARE(forced->items.size(), size_t(5));
        auto bad = importSuite(suiteFile("abstract_algebra_test.csv"), ImportOptions{"", std::nullopt, "xml"});
        QVERIFY(!bad.ok());
        QVERIFY(bad.error().message.find("unknown format hint") != std::string::npos);
        auto missing = importSuite(suiteFile("no_such_file.jsonl"));
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.find("no_such_file.jsonl") != std::string::npos);
    }

    void emptyFile() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("empty.jsonl").toStdString();
        writeFile(path, "\n\n");
        auto r = importSuite(path);
        QVERIFY(r.ok());
        QCOMPARE(r->items.size(), size_t(0));
        QCOMPARE(r->rejectedCount, size_t(0));
    }

    void unknownShapeNeedsMapping() {
        auto r = importSuite(suiteFile("alpaca_like.tsv"));
        QVERIFY(!r.ok());
        QVERIFY2(r.error().message.find("instruction") != std::string::npos, r.error().message.c_str());
        QVERIFY(r.error().message.find("mapping") != std::string::npos);
    }

    void rejectListIsCappedCountsAreNot() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("many_bad.jsonl").toStdString();
        std::string body = "{\"prompt\": \"ok\"}\n";
        for (int i = 0; i < 50; ++i) body += "{broken\n";
        writeFile(path, body);
        ImportOptions o;
        o.maxListedRejects = 10;
        auto r = importSuite(path, o);
        QVERIFY(r.ok());
        QCOMPARE(r->rejectedCount, size_t(50));
        QCOMPARE(r->rejected.size(), size_t(10));
        QCOMPARE(r->rejected.back().line, 11);
    }
};

QTEST_GUILESS_MAIN(TestSuiteImportFormats)
#include "test_suite_import_formats.moc"
