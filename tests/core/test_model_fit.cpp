// The fit badge (core/models/model_fit.h) on hand-made cards and devices: each outcome, the 80 %
// boundary, the CUDA overhead, the recomputed estimate at another context, unknown free memory.
#include "core/models/model_fit.h"
#include "verdict/engine/model_support.h"

#include <QtTest/QtTest>

using namespace verdict;
using namespace verdict::core;

namespace {

// weights 1,000,000,000 + KV 100,000 B/token * 1000 tokens + compute 50,000,000 = 1,150,000,000;
// + CPU overhead 256 MiB (268,435,456) = 1,418,435,456 bytes needed at ctx 1000.
constexpr uint64_t kNeedCpu = 1'418'435'456ull;

ModelCard handCard() {
    ModelCard c;
    c.arch = "llama";  // what this build runs (the support check comes first)
    c.tokenizerModel = "llama";
    c.tensorTypeBytes = {{"f32", 1'000'000}, {"q4_K", 999'000'000}};
    c.nCtxTrain = 2048;
    c.nVocab = 32000;
    c.nEmbd = 4096;
    c.nFf = 11008;
    c.nHead = 32;
    c.memoryTrained.ctx = 2048;
    c.memoryTrained.weightsBytes = 1'000'000'000;
    c.memoryTrained.kvBytesPerToken = 100'000;
    c.memoryTrained.kvBytesAtCtx = 204'800'000;
    c.memoryTrained.computeBytes = 77'000'000;
    MemoryEstimate at;
    at.ctx = 1000;
    at.weightsBytes = 1'000'000'000;
    at.kvBytesPerToken = 100'000;
    at.kvBytesAtCtx = 100'000'000;
    at.computeBytes = 50'000'000;
    c.memoryAtCtx = at;
    return c;
}

DeviceInfo device(const std::string& kind, const std::string& id, uint64_t freeBytes) {
    DeviceInfo d;
    d.kind = kind;
    d.id = id;
    d.freeBytes = freeBytes;
    return d;
}

}  // namespace

class TestModelFit : public QObject {
    Q_OBJECT
private slots:
    void threeOutcomes() {
        const ModelCard c = handCard();
        // 1.418 GB of 2.0 GB = 70.9 % -> fits
        FitVerdict f = assessFit(c, 1000, device("cpu", "cpu", 2'000'000'000));
        QCOMPARE(f.needBytes, kNeedCpu);
        QCOMPARE(f.haveBytes, uint64_t(2'000'000'000));
        QVERIFY(f.fit == Fit::Fits);
        QVERIFY2(f.reason.rfind("needs 1.4 GB of 2.0 GB free on cpu", 0) == 0, f.reason.c_str());
        QVERIFY2(f.reason.find("(71%)") != std::string::npos, f.reason.c_str());
        // 1.418 GB of 1.5 GB = 94.6 % -> tight
        FitVerdict t = assessFit(c, 1000, device("cpu", "cpu", 1'500'000'000));
        QVERIFY(t.fit == Fit::Tight);
        // 1.418 GB of 1.4 GB = 101.3 % -> won't fit
        FitVerdict w = assessFit(c, 1000, device("cpu", "cpu", 1'400'000'000));
        QVERIFY(w.fit == Fit::WontFit);
        QVERIFY2(w.reason.rfind("needs 1.4 GB of 1.4 GB free on cpu", 0) == 0, w.reason.c_str());
        QCOMPARE(fitName(f.fit), std::string_view("fits"));
        QCOMPARE(fitName(t.fit), std::string_view("tight"));
        QCOMPARE(fitName(w.fit), std::string_view("wont_fit"));
    }

    void boundaries() {
        const ModelCard c = handCard();
        // need = exactly 80 % of have: have = need * 5 / 4 = 1,773,044,320 -> still fits; one byte less -> tight.
        QVERIFY(assessFit(c, 1000, device("cpu", "cpu", 1'773'044'320)).fit == Fit::Fits);
        QVERIFY(assessFit(c, 1000, device("cpu", "cpu", 1'773'044'319)).fit == Fit::Tight);
        // need == have -> tight; one byte less free -> won't fit.
        QVERIFY(assessFit(c, 1000, device("cpu", "cpu", kNeedCpu)).fit == Fit::Tight);
        QVERIFY(assessFit(c, 1000, device("cpu", "cpu", kNeedCpu - 1)).fit == Fit::WontFit);
    }

    void cudaOverheadAndName() {
        const ModelCard c = handCard();
        // 1,150,000,000 + 512 MiB (536,870,912) = 1,686,870,912 of 3.9 GB.
        FitVerdict f = assessFit(c, 1000, device("cuda", "cuda:0", 3'900'000'000));
        QCOMPARE(f.needBytes, uint64_t(1'686'870'912));
        QVERIFY(f.fit == Fit::Fits);
        QVERIFY2(f.reason.rfind("needs 1.7 GB of 3.9 GB free on cuda:0", 0) == 0, f.reason.c_str());
        FitVerdict w = assessFit(c, 1000, device("cuda", "cuda:1", 1'600'000'000));
        QVERIFY(w.fit == Fit::WontFit);
        QVERIFY(w.reason.find("cuda:1") != std::string::npos);
    }

    // Another context than the card was described at: KV from the per-token figure, compute
    // recomputed from the shape. ctx 4096, ubatch 512:
    //   logits 32000*512*4 = 65,536,000; acts (4096*4 + 11008*3)*512*4 = 101,187,584;
    //   scores 32*512*4096*4 = 268,435,456 -> compute 435,159,040; KV 100,000*4096 = 409,600,000.
    void otherContextIsRecomputed() {
        const ModelCard c = handCard();
        const MemoryEstimate m = estimateAtCtx(c, 4096);
        QCOMPARE(m.ctx, uint64_t(4096));
        QCOMPARE(m.kvBytesAtCtx, uint64_t(409'600'000));
        QCOMPARE(m.computeBytes, uint64_t(435'159'040));
        QCOMPARE(m.totalBytes(), uint64_t(1'000'000'000ull + 409'600'000 + 435'159'040));
        const FitVerdict f = assessFit(c, 4096, device("cpu", "cpu", 100'000'000'000ull));
        QCOMPARE(f.needBytes, uint64_t(1'844'759'040ull + 268'435'456));
        // ctx 0 = the training context: the card's own memoryTrained figures.
        QCOMPARE(estimateAtCtx(c, 0).computeBytes, uint64_t(77'000'000));
        QCOMPARE(estimateAtCtx(c, 1000).computeBytes, uint64_t(50'000'000));
    }

    void unknownFreeMemoryIsTight() {
        const FitVerdict f = assessFit(handCard(), 1000, device("cpu", "cpu", 0));
        QVERIFY(f.fit == Fit::Tight);
        QCOMPARE(f.haveBytes, uint64_t(0));
        QVERIFY2(f.reason.find("unknown") != std::string::npos, f.reason.c_str());
    }

    void unsupportedComesFirst() {
        // Whatever the memory: an architecture, a weight type or a tokenizer this build lacks, named.
        ModelCard c = handCard();
        c.arch = "mamba";
        c.tensorTypeBytes["i32"] = 3 * 1024 * 1024;
        c.tokenizerModel = "gpt2";
        c.tokenizerPre = "no-such-pre";
        for (uint64_t freeBytes : {uint64_t{0}, uint64_t{1} << 40}) {
            const FitVerdict v = assessFit(c, 1000, device("cpu", "cpu", freeBytes));
            QCOMPARE(v.fit, Fit::Unsupported);
            QCOMPARE(fitName(v.fit), std::string_view("unsupported"));
            QVERIFY2(v.reason.find("architecture 'mamba' (supported: llama") != std::string::npos, v.reason.c_str());
            QVERIFY2(v.reason.find("tensor type i32 (3.0 MiB of weights)") != std::string::npos, v.reason.c_str());
            QVERIFY2(v.reason.find("tokenizer.ggml.pre = 'no-such-pre': unknown pre-tokenizer") != std::string::npos,
                     v.reason.c_str());
            QCOMPARE(v.needBytes, kNeedCpu);  // the memory figures are still there
        }
        QVERIFY(checkCpuSupport(handCard()).ok());
        ModelCard noTokenizer = handCard();
        noTokenizer.tokenizerModel.clear();
        QCOMPARE(checkCpuSupport(noTokenizer).missing, std::vector<std::string>{"a tokenizer (no tokenizer.ggml.model)"});
    }

    void formatsBytes() {
        QCOMPARE(formatDecimalBytes(5'100'000'000ull), std::string("5.1 GB"));
        QCOMPARE(formatDecimalBytes(850'000'000), std::string("850 MB"));
        QCOMPARE(formatDecimalBytes(12'000), std::string("12 KB"));
        QCOMPARE(formatDecimalBytes(12), std::string("12 bytes"));
    }
};

QTEST_GUILESS_MAIN(TestModelFit)
#include "test_model_fit.moc"
