// CheckedBackend (checked_backend.h): ops given only its own allocations compute what the CPU
// backend computes and raise nothing; a host buffer, a span past its allocation and the release of
// a pointer it never handed out are each reported, naming the op and the argument.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "backend_op_cases.h"
#include "checked_backend.h"

#include <QtTest/QtTest>

#include <random>


using namespace verdict;

namespace {

std::vector<float> normal(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

// A buffer of the checked backend holding `host`.
float* put(backend::Backend& be, const std::vector<float>& host) {
    auto r = be.allocate(host.size() * sizeof(float), "a test buffer");
    if (!r) qFatal("%s", r.error().message.c_str());
    be.upload(r.value(), host.data(), host.size() * sizeof(float));
    return static_cast<float*>(r.value());
}

float* zeros(backend::Backend& be, size_t n) { return put(be, std::vector<float>(n, 0.0f)); }

std::vector<float> get(backend::Backend& be, const float* p, size_t n) {
    std::vector<float> host(n);
    be.download(host.data(), p, n * sizeof(float));
    return host;
}

QString listed(const test::CheckedBackend& be) {
    QStringList l;
    for (const auto& v : be.violations()) l << QString::fromStdString(v);
    return l.join("\n");
}

backend::Matrix f32Matrix(const void* data, int64_t rows, int64_t cols) {
    backend::Matrix w;
    w.type = tensor::TensorType::F32;
    w.data = data;
    w.rows = rows;
    w.cols = cols;
    w.rowBytes = static_cast<uint64_t>(cols) * sizeof(float);
    return w;
}

constexpr int64_t kRows = 5, kCols = 40, kTok = 3;

}  // namespace

class TestCheckedBackend : public QObject {
    Q_OBJECT
private slots:
    void backendMemoryOnlyComputesLikeTheCpu();
    void everyOpCaseRaisesNothing();
    void hostInputIsReported();
    void spanPastItsAllocationIsReported();
    void releaseOfAForeignPointerIsReported();
};


void TestCheckedBackend::backendMemoryOnlyComputesLikeTheCpu() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    test::CheckedBackend be(cpuBe);
    QVERIFY(!be.hostMemory());
    QVERIFY(be.name().rfind("checked cpu", 0) == 0);

    // matmul with an F32 weight, y rows padded (ldy > rows), then rmsNorm of x with a gain.
    const std::vector<float> wHost = normal(kRows * kCols, 1), xHost = normal(kTok * kCols, 2),
                             gHost = normal(kCols, 3);
    const int64_t ldy = kRows + 3;
    std::vector<float> yRef(static_cast<size_t>(kTok * ldy), 0.0f), nRef(xHost.size());
    cpuBe.matmul(f32Matrix(wHost.data(), kRows, kCols), xHost.data(), kTok, yRef.data(), ldy);
    cpuBe.rmsNorm(xHost.data(), gHost.data(), nRef.data(), kTok, kCols, 1e-5f);

    float *w = put(be, wHost), *x = put(be, xHost), *g = put(be, gHost);
    float *y = zeros(be, yRef.size()), *n = zeros(be, nRef.size());
    be.matmul(f32Matrix(w, kRows, kCols), x, kTok, y, ldy);
    be.rmsNorm(x, g, n, kTok, kCols, 1e-5f);
    QVERIFY(be.synchronize());
    QCOMPARE(get(be, y, yRef.size()), yRef);
    QCOMPARE(get(be, n, nRef.size()), nRef);

    // Attention over a RowCache: keys and values of positions 0 .. 2 stored, then each row attends.
    backend::Attention a;
    a.nHead = 4;
    a.nHeadKv = 2;
    a.dimK = 8;
    a.dimV = 6;
    a.scale = 0.35f;
    const int32_t capacity = 16;
    const uint64_t cacheBytes = uint64_t(a.nHeadKv) * capacity * (a.dimK + a.dimV) * sizeof(float);
    const std::vector<float> kHost = normal(kTok * a.nHeadKv * a.dimK, 4), vHost = normal(kTok * a.nHeadKv * a.dimV, 5),
                             qHost = normal(kTok * a.nHead * a.dimK, 6);
    const size_t outN = static_cast<size_t>(kTok * a.nHead * a.dimV);
    std::vector<uint8_t> cacheRef(cacheBytes, 0);
    std::vector<float> outRef(outN);
    auto rowsOf = [&](uint8_t* base) {
        std::vector<backend::RowCache> rows;
        for (int32_t p = 0; p < kTok; ++p) rows.push_back(backend::RowCache{base, capacity, p});
        return rows;
    };
    std::vector<backend::RowCache> hostRowsRef = rowsOf(cacheRef.data());
    cpuBe.storeKv(a, hostRowsRef.data(), kTok, kHost.data(), vHost.data());
    cpuBe.attention(a, hostRowsRef.data(), kTok, qHost.data(), outRef.data());

    auto cache = be.allocate(cacheBytes, "a KV cache");
    QVERIFY(cache);
    be.upload(cache.value(), cacheRef.data(), 0);  // nothing: a zero-byte transfer is no violation
    std::vector<backend::RowCache> hostRows = rowsOf(static_cast<uint8_t*>(cache.value()));
    float *k = put(be, kHost), *v = put(be, vHost), *q = put(be, qHost), *out = zeros(be, outN);
    be.storeKv(a, hostRows.data(), kTok, k, v);
    be.attention(a, hostRows.data(), kTok, q, out);
    QVERIFY(be.synchronize());
    QCOMPARE(get(be, out, outN), outRef);
    std::vector<uint8_t> cacheBack(cacheBytes);
    be.download(cacheBack.data(), cache.value(), cacheBytes);
    QVERIFY(cacheBack == cacheRef);

    QVERIFY2(be.violationCount() == 0, qPrintable(listed(be)));
    QCOMPARE(be.liveAllocations(), size_t(10));
    for (void* p : {static_cast<void*>(w), static_cast<void*>(x), static_cast<void*>(g), static_cast<void*>(y),
                    static_cast<void*>(n), cache.value(), static_cast<void*>(k), static_cast<void*>(v),
                    static_cast<void*>(q), static_cast<void*>(out)})
        be.release(p);
    QCOMPARE(be.liveAllocations(), size_t(0));
    QCOMPARE(be.liveBytes(), uint64_t(0));
    QVERIFY2(be.violationCount() == 0, qPrintable(listed(be)));
}

// The parity cases give every op only backend memory: through the wrapper they pass as on the CPU
// backend and raise nothing, so the extents checked here are no wider than the ops' own.
void TestCheckedBackend::everyOpCaseRaisesNothing() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    test::CheckedBackend be(cpuBe);
    const std::vector<test::OpCheck> checks = test::runBackendOpCases(be);
    int failed = 0;
    for (const auto& c : checks)
        if (!c.ok() || !c.skipped.empty()) {
            ++failed;
            qWarning().noquote() << QString::fromStdString(c.op + " " + c.params + ": " + c.skipped + c.failure)
                                 << "error" << c.err << "limit" << c.limit;
        }
    QVERIFY(checks.size() > 900);
    QCOMPARE(failed, 0);
    QVERIFY2(be.violationCount() == 0, qPrintable(listed(be)));
    QCOMPARE(be.liveAllocations(), size_t(0));
}

void TestCheckedBackend::hostInputIsReported() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    test::CheckedBackend be(cpuBe);
    const std::vector<float> xHost = normal(kTok * kCols, 2);
    float *w = put(be, normal(kRows * kCols, 1)), *y = zeros(be, kTok * kRows);
    be.matmul(f32Matrix(w, kRows, kCols), xHost.data(), kTok, y, kRows);
    QCOMPARE(be.violationCount(), uint64_t(1));
    QCOMPARE(be.violations().size(), size_t(1));
    const std::string& m = be.violations()[0];
    QVERIFY2(m.rfind("matmul: x (" + std::to_string(kTok * kCols * 4) + " bytes at ", 0) == 0, m.c_str());
    QVERIFY2(m.find("not inside one backend allocation") != std::string::npos, m.c_str());

    be.clearViolations();
    QCOMPARE(be.violationCount(), uint64_t(0));
    QVERIFY(be.violations().empty());
    be.release(w);
    be.release(y);
}

void TestCheckedBackend::spanPastItsAllocationIsReported() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    test::CheckedBackend be(cpuBe);
    float *w = put(be, normal(kRows * kCols, 1)), *x = put(be, normal(kTok * kCols, 2));
    // One float short of the kTok rows of kRows the matmul writes (the CPU backend's rounding to 64
    // bytes keeps the write itself harmless).
    auto y = be.allocate(uint64_t(kTok * kRows) * 4 - 4, "y");
    QVERIFY(y);
    be.matmul(f32Matrix(w, kRows, kCols), x, kTok, static_cast<float*>(y.value()), kRows);
    QCOMPARE(be.violationCount(), uint64_t(1));
    const std::string& m = be.violations()[0];
    QVERIFY2(m.rfind("matmul: y (", 0) == 0, m.c_str());
    QVERIFY2(m.find("runs 4 bytes past the end of y") != std::string::npos, m.c_str());
    be.release(w);
    be.release(x);
    be.release(y.value());
    QCOMPARE(be.violationCount(), uint64_t(1));
}

void TestCheckedBackend::releaseOfAForeignPointerIsReported() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    test::CheckedBackend be(cpuBe);
    std::vector<float> host(16);
    be.release(host.data());  // not freed by the inner backend: the test goes on
    QCOMPARE(be.violationCount(), uint64_t(1));
    QVERIFY2(be.violations()[0].rfind("release: ", 0) == 0, be.violations()[0].c_str());
    float* p = zeros(be, 16);
    be.release(p + 4);  // inside an allocation, not its start
    QCOMPARE(be.violationCount(), uint64_t(2));
    QCOMPARE(be.liveAllocations(), size_t(1));
    be.release(p);
    QCOMPARE(be.liveAllocations(), size_t(0));
    QCOMPARE(be.violationCount(), uint64_t(2));
}

QTEST_GUILESS_MAIN(TestCheckedBackend)
#include "test_checked_backend.moc"
