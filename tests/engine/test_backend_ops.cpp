// The CPU backend's ops against the plain reference of backend_op_cases.h: every op x type x
// shape. ctest runs this binary once per SIMD level (VERDICT_CPU_SIMD=scalar / avx2 / the best the
// CPU has: tests/engine/CMakeLists.txt), so the reference, AVX2 and AVX-512 paths are all held to
// the same limits.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/thread_pool.h"
#include "backend_op_cases.h"

#include <QtTest/QtTest>


using namespace verdict;

class TestBackendOps : public QObject {
    Q_OBJECT
private slots:
    void everyOpMatchesTheReference();
    void casesCanFail();
};


void TestBackendOps::everyOpMatchesTheReference() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend be(pool);
    const std::vector<test::OpCheck> checks = test::runBackendOpCases(be);
    qInfo().noquote() << QString::fromStdString(be.name()) << "\n" << QString::fromStdString(test::summarize(checks));
    int failed = 0;
    for (const auto& c : checks) {
        QVERIFY2(c.skipped.empty(), qPrintable(QString::fromStdString(c.op + " " + c.params + ": skipped on the CPU: " + c.skipped)));
        if (c.ok()) continue;
        ++failed;
        qWarning().noquote() << QString::fromStdString(c.op + " " + c.params) << "error" << c.err << "limit" << c.limit
                             << QString::fromStdString(c.failure);
    }
    QVERIFY(checks.size() > 900);
    QCOMPARE(failed, 0);
}

// The harness is not blind: a backend whose matmul is off by one part in a thousand, or whose
// attention ignores the window, fails the cases that exercise it.
class SkewedBackend final : public backend::Backend {
public:
    explicit SkewedBackend(backend::Backend& inner) : m_in(inner) {}
    bool skewMatmul = false, ignoreWindow = false;
    std::string name() const override { return "skewed " + m_in.name(); }
    bool supports(tensor::TensorType t) const override { return m_in.supports(t); }
    Result<void*> allocate(uint64_t b, std::string_view w, backend::Purpose p = backend::Purpose::Activations) override {
        return m_in.allocate(b, w, p);
    }
    void release(void* p) override { m_in.release(p); }
    void upload(void* d, const void* h, uint64_t b) override { m_in.upload(d, h, b); }
    void download(void* h, const void* s, uint64_t b) override { m_in.download(h, s, b); }
    void copy(void* d, const void* s, uint64_t b) override { m_in.copy(d, s, b); }
    Result<void> synchronize() override { return m_in.synchronize(); }
    void embedRows(const backend::Matrix& w, const int32_t* t, int64_t n, float* o) override { m_in.embedRows(w, t, n, o); }
    void matmul(const backend::Matrix& w, const float* x, int64_t n, float* y, int64_t ldy) override {
        m_in.matmul(w, x, n, y, ldy);
        if (skewMatmul)
            for (int64_t t = 0; t < n; ++t)
                for (int64_t r = 0; r < w.rows; ++r) y[t * ldy + r] *= 1.03f;
    }
    void expertMatmuls(const backend::ExpertProduct* p, int n) override { m_in.expertMatmuls(p, n); }
    void swigluOai(float* g, const float* u, int64_t n, float a, float l) override { m_in.swigluOai(g, u, n, a, l); }
    void routeTopKSoftmax(const float* l, int64_t n, int x, int u, int32_t* e, float* w) override {
        m_in.routeTopKSoftmax(l, n, x, u, e, w);
    }
    void routeGrouped(const backend::GroupedRouting& r, float* s, int64_t n, int x, int u, float* sel, int32_t* e,
                      float* w) override {
        m_in.routeGrouped(r, s, n, x, u, sel, e, w);
    }
    void latentAttention(const backend::LatentAttention& a, const backend::RowCache* r, int64_t n, const float* q,
                         float* o) override {
        m_in.latentAttention(a, r, n, q, o);
    }
    void roundAsMatmulInput(tensor::TensorType t, float* x, int64_t r, int64_t k) override {
        m_in.roundAsMatmulInput(t, x, r, k);
    }
    void copyRows(float* d, int64_t ldd, const float* s, int64_t lds, int64_t r, int64_t c) override {
        m_in.copyRows(d, ldd, s, lds, r, c);
    }
    void addExpertBias(float* y, const float* b, const int32_t* e, int64_t p, int64_t n) override {
        m_in.addExpertBias(y, b, e, p, n);
    }
    void rmsNorm(const float* x, const float* w, float* y, int64_t r, int64_t n, float e) override { m_in.rmsNorm(x, w, y, r, n, e); }
    void add(const float* a, const float* b, float* y, int64_t n) override { m_in.add(a, b, y, n); }
    void addBias(float* y, const float* b, int64_t r, int64_t n) override { m_in.addBias(y, b, r, n); }
    void scale(float* x, float f, int64_t n) override { m_in.scale(x, f, n); }
    void softCap(float* x, int64_t n, float c) override { m_in.softCap(x, n, c); }
    void swiglu(float* g, const float* u, int64_t n) override { m_in.swiglu(g, u, n); }
    void geglu(float* g, const float* u, int64_t n) override { m_in.geglu(g, u, n); }
    void rope(float* x, int64_t t, int64_t h, int64_t d, int r, bool n, const float* tb) override { m_in.rope(x, t, h, d, r, n, tb); }
    void storeKv(const backend::Attention& a, const backend::RowCache* r, int64_t n, const float* k, const float* v) override {
        m_in.storeKv(a, r, n, k, v);
    }
    void attention(const backend::Attention& a, const backend::RowCache* r, int64_t n, const float* q, float* o) override {
        backend::Attention b = a;
        if (ignoreWindow) b.window = 0;
        m_in.attention(b, r, n, q, o);
    }
    void routeSoftmaxTopK(const float* l, int64_t n, int x, int u, int32_t* e, float* w) override { m_in.routeSoftmaxTopK(l, n, x, u, e, w); }
    void combineExperts(const float* y, const float* w, int64_t n, int u, int64_t c, float* o) override {
        m_in.combineExperts(y, w, n, u, c, o);
    }

private:
    backend::Backend& m_in;
};

void TestBackendOps::casesCanFail() {
    cpu::ThreadPool pool(2);
    cpu::CpuBackend cpuBe(pool);
    SkewedBackend be(cpuBe);
    be.skewMatmul = true;
    be.ignoreWindow = true;
    int matmulFailed = 0, windowFailed = 0, otherFailed = 0;
    for (const auto& c : test::runBackendOpCases(be)) {
        if (c.ok()) continue;
        if (c.op == "matmul") ++matmulFailed;
        else if (c.op == "attention" && c.params.find("window") != std::string::npos) ++windowFailed;
        else ++otherFailed;
    }
    QVERIFY(matmulFailed > 100);
    QVERIFY(windowFailed > 0);
    QCOMPARE(otherFailed, 0);
}

QTEST_GUILESS_MAIN(TestBackendOps)
#include "test_backend_ops.moc"
