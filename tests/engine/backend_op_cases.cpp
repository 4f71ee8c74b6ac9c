#include "backend_op_cases.h"

#include "random_blocks.h"
#include "tensor/half.h"
#include "tensor/quantize.h"
#include "tensor/tensor_type.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace verdict::test {

namespace {

using backend::Backend;
using tensor::TensorType;


// Limits on NMSE, as test-backend-ops sets them: products with activations the backend quantizes
// (Q8_0 / Q8_1 / Q8_K, f16, bf16) 5e-4; attention over an f16 cache 5e-4; f32 attention 1e-7;
// everything computed in f32 from exact inputs 1e-10 (f32 rounding alone is ~1e-14).
constexpr double kMatmulLimit = 5e-4;
constexpr double kAttnF16Limit = 5e-4;
constexpr double kAttnF32Limit = 1e-7;
constexpr double kExactLimit = 1e-10;
constexpr double kGegluLimit = 1e-6;  // GELU read from an f16 table: one f16 step where rounding ties differ

double nmse(const std::vector<float>& out, const std::vector<double>& ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double d = static_cast<double>(out[i]) - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    if (!std::isfinite(num)) return std::numeric_limits<double>::infinity();
    return den > 0 ? num / den : num;
}

// A block of the backend's memory, released on scope exit.
class Mem {
public:
    Mem(Backend& be, uint64_t bytes, std::string& failure) : m_be(be), m_bytes(bytes) {
        auto r = be.allocate(bytes, "a test buffer");
        if (r) m_p = r.value();
        else if (failure.empty()) failure = r.error().message;
    }
    ~Mem() {
        if (m_p) m_be.release(m_p);
    }
    Mem(const Mem&) = delete;
    Mem& operator=(const Mem&) = delete;
    template <class T> T* as() const { return static_cast<T*>(m_p); }
    bool ok() const { return m_p != nullptr; }
    template <class T> void put(const std::vector<T>& host) {
        if (m_p) m_be.upload(m_p, host.data(), std::min<uint64_t>(m_bytes, host.size() * sizeof(T)));
    }
    template <class T> std::vector<T> get(size_t n) const {
        std::vector<T> host(n);
        if (m_p) m_be.download(host.data(), m_p, n * sizeof(T));
        return host;
    }

private:
    Backend& m_be;
    void* m_p = nullptr;
    uint64_t m_bytes;
};

class Runner {
public:
    Runner(Backend& be, uint32_t seed) : m_be(be), m_rng(seed) {}
    std::vector<OpCheck> checks;

    std::vector<float> normal(size_t n, float sigma = 1.0f) {
        std::normal_distribution<float> nd(0.0f, sigma);
        std::vector<float> v(n);
        for (auto& x : v) x = nd(m_rng);
        return v;
    }
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
    // Activations of the products: uniform in [-1, 1], as test-backend-ops initialises them.
    std::vector<float> activations(size_t n) {
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        std::vector<float> v(n);
        for (auto& x : v) x = u(m_rng);
        return v;
    }

    // Weights of `type`: rows x cols quantized from N(0,1), or random blocks for the types Verdict
    // reads but does not write; and their dequantized values. False (the case skipped or failed)
    // when the backend does not compute the type or the quantizer refuses.
    struct HostWeights {
        std::vector<uint8_t> bytes;
        std::vector<float> deq;
        uint64_t rowBytes = 0;
    };
    bool weights(OpCheck& c, TensorType type, int64_t rows, int64_t cols, HostWeights& hw) {
        if (!m_be.supports(type)) {
            c.skipped = "type not supported";
            return false;
        }
        return weights(type, rows, cols, hw.bytes, hw.deq, hw.rowBytes, c.failure);
    }
    bool weights(TensorType type, int64_t rows, int64_t cols, std::vector<uint8_t>& bytes, std::vector<float>& deq,
                 uint64_t& rowBytes, std::string& failure) {
        rowBytes = *tensor::rowBytes(type, static_cast<uint64_t>(cols));
        bytes.assign(rowBytes * static_cast<uint64_t>(rows), 0);
        if (tensor::canQuantize(type)) {
            const std::vector<float> src = normal(static_cast<size_t>(rows * cols));
            if (auto r = tensor::quantizeRows(type, src.data(), bytes.data(), rows, cols); !r) {
                failure = r.error().message;
                return false;
            }
        } else {
            randomBlocks(type, m_rng, bytes.data(), bytes.size());
        }
        deq.assign(static_cast<size_t>(rows * cols), 0.0f);
        for (int64_t r = 0; r < rows; ++r)
            tensor::dequantizeRow(type, bytes.data() + r * rowBytes, deq.data() + r * cols, cols);
        return true;
    }

    // Runs `body` (which fills err or failure) and records the check; synchronize errors count.
    void check(std::string op, std::string params, double limit, const std::function<void(OpCheck&)>& body) {
        OpCheck c{std::move(op), std::move(params), 0, limit, {}, {}};
        body(c);
        if (c.skipped.empty())
            if (auto s = m_be.synchronize(); !s && c.failure.empty()) c.failure = s.error().message;
        checks.push_back(std::move(c));
    }

    void matmuls();
    void expertMatmuls();
    void expertGroups();
    void embeddings();
    void elementwise();
    void ropes();
    void attentions();
    void latentAttentions();
    void roundings();
    void routing();

private:
    Backend& m_be;
    std::mt19937 m_rng;
};

std::string typeStr(TensorType t) { return std::string(tensor::typeName(t)); }

void Runner::matmuls() {
    for (TensorType type : kComputableTypes) {
        const int64_t block = tensor::traits(type).blockElems;
        std::vector<int64_t> colsList = {256, 1024};
        if (block <= 32) colsList.insert(colsList.begin(), 96);
        for (int64_t cols : colsList)
            for (int64_t rows : {7, 67})
                for (int64_t nTok : {1, 5, 40}) {
                    const std::string params = "type=" + typeStr(type) + " rows=" + std::to_string(rows) + " cols="
                        + std::to_string(cols) + " tok=" + std::to_string(nTok);
                    check("matmul", params, kMatmulLimit, [&](OpCheck& c) {
                        HostWeights hw;
                        if (!weights(c, type, rows, cols, hw)) return;
                        const std::vector<uint8_t>& wb = hw.bytes;
                        const std::vector<float>& w = hw.deq;
                        const uint64_t rowBytes = hw.rowBytes;
                        const std::vector<float> x = activations(static_cast<size_t>(nTok * cols));
                        const int64_t ldy = rows + 3;
                        Mem dw(m_be, wb.size(), c.failure), dx(m_be, x.size() * 4, c.failure),
                            dy(m_be, static_cast<uint64_t>(nTok * ldy) * 4, c.failure);
                        if (!c.failure.empty()) return;
                        dw.put(wb);
                        dx.put(x);
                        m_be.matmul({type, dw.as<void>(), cols, rows, 1, rowBytes}, dx.as<float>(), nTok, dy.as<float>(), ldy);
                        const std::vector<float> y = dy.get<float>(static_cast<size_t>(nTok * ldy));
                        std::vector<float> got;
                        std::vector<double> ref;
                        for (int64_t t = 0; t < nTok; ++t)
                            for (int64_t r = 0; r < rows; ++r) {
                                double s = 0;
                                for (int64_t k = 0; k < cols; ++k) s += double(w[r * cols + k]) * x[t * cols + k];
                                ref.push_back(s);
                                got.push_back(y[t * ldy + r]);
                            }
                        c.err = nmse(got, ref);
                    });
                }
    }
}

void Runner::expertMatmuls() {
    const int64_t nMat = 4, cols = 256;
    for (TensorType type : kComputableTypes)
        for (int64_t rows : {7, 33})
            for (int64_t nTok : {1, 5, 40})
                for (int64_t xDiv : {1, 2}) {
                    const int64_t nPairs = nTok * 2;
                    const std::string params = "type=" + typeStr(type) + " rows=" + std::to_string(rows)
                        + " experts=4 pairs=" + std::to_string(nPairs) + " xdiv=" + std::to_string(xDiv);
                    check("expert_matmul", params, kMatmulLimit, [&](OpCheck& c) {
                        HostWeights hw;
                        if (!weights(c, type, rows * nMat, cols, hw)) return;
                        const std::vector<uint8_t>& wb = hw.bytes;
                        const std::vector<float>& w = hw.deq;
                        const uint64_t rowBytes = hw.rowBytes;
                        const int64_t xRows = (nPairs + xDiv - 1) / xDiv;
                        const std::vector<float> x = activations(static_cast<size_t>(xRows * cols));
                        std::vector<int32_t> experts(static_cast<size_t>(nPairs));
                        for (auto& e : experts) e = uniform(0, static_cast<int>(nMat) - 1);
                        Mem dw(m_be, wb.size(), c.failure), dx(m_be, x.size() * 4, c.failure),
                            de(m_be, experts.size() * 4, c.failure), dy(m_be, static_cast<uint64_t>(nPairs * rows) * 4, c.failure);
                        if (!c.failure.empty()) return;
                        dw.put(wb);
                        dx.put(x);
                        de.put(experts);
                        m_be.expertMatmul({type, dw.as<void>(), cols, rows, nMat, rowBytes}, de.as<int32_t>(), nPairs,
                                          dx.as<float>(), xDiv, dy.as<float>());
                        const std::vector<float> y = dy.get<float>(static_cast<size_t>(nPairs * rows));
                        std::vector<double> ref;
                        for (int64_t p = 0; p < nPairs; ++p)
                            for (int64_t r = 0; r < rows; ++r) {
                                const float* wr = w.data() + (experts[p] * rows + r) * cols;
                                const float* xr = x.data() + (p / xDiv) * cols;
                                double s = 0;
                                for (int64_t k = 0; k < cols; ++k) s += double(wr[k]) * xr[k];
                                ref.push_back(s);
                            }
                        c.err = nmse(y, ref);
                    });
                }
}

// A MoE layer's products as one group: gate and up of the routed experts (one input row per token,
// U pairs each) and of a shared expert (dense), then the routed down products; per-expert biases.
void Runner::expertGroups() {
    const int64_t nMat = 5, E = 256, F = 256, S = 96;  // K of every product a multiple of 256: every type
    for (TensorType type : kComputableTypes)
        for (int64_t nTok : {1, 5, 40}) {
            const int U = 3;
            const int64_t nPairs = nTok * U;
            check("expert_matmuls", "type=" + typeStr(type) + " tok=" + std::to_string(nTok) + " used=3 of 5 + shared",
                  kMatmulLimit, [&](OpCheck& c) {
                      HostWeights up, gate, shared, down;
                      if (!weights(c, type, F * nMat, E, up) || !weights(c, type, F * nMat, E, gate)
                          || !weights(c, type, S, E, shared) || !weights(c, type, E * nMat, F, down))
                          return;
                      const std::vector<float> x = activations(static_cast<size_t>(nTok * E));
                      const std::vector<float> h = activations(static_cast<size_t>(nPairs * F));
                      std::vector<int32_t> experts(static_cast<size_t>(nPairs));
                      for (int64_t t = 0; t < nTok; ++t)  // U distinct experts per token, as a router picks
                          for (int k = 0; k < U; ++k)
                              experts[static_cast<size_t>(t * U + k)] = static_cast<int32_t>((t * 2 + k * 2) % nMat);
                      Mem dUp(m_be, up.bytes.size(), c.failure), dGate(m_be, gate.bytes.size(), c.failure),
                          dSh(m_be, shared.bytes.size(), c.failure), dDown(m_be, down.bytes.size(), c.failure),
                          dx(m_be, x.size() * 4, c.failure), dh(m_be, h.size() * 4, c.failure),
                          de(m_be, experts.size() * 4, c.failure), yUp(m_be, static_cast<uint64_t>(nPairs * F) * 4, c.failure),
                          yGate(m_be, static_cast<uint64_t>(nPairs * F) * 4, c.failure),
                          ySh(m_be, static_cast<uint64_t>(nTok * S) * 4, c.failure),
                          yDown(m_be, static_cast<uint64_t>(nPairs * E) * 4, c.failure);
                      if (!c.failure.empty()) return;
                      dUp.put(up.bytes);
                      dGate.put(gate.bytes);
                      dSh.put(shared.bytes);
                      dDown.put(down.bytes);
                      dx.put(x);
                      dh.put(h);
                      de.put(experts);
                      const backend::ExpertProduct stage1[3] = {
                          {{type, dUp.as<void>(), E, F, nMat, up.rowBytes}, de.as<int32_t>(), nPairs, dx.as<float>(), U, yUp.as<float>()},
                          {{type, dGate.as<void>(), E, F, nMat, gate.rowBytes}, de.as<int32_t>(), nPairs, dx.as<float>(), U, yGate.as<float>()},
                          {{type, dSh.as<void>(), E, S, 1, shared.rowBytes}, nullptr, nTok, dx.as<float>(), 1, ySh.as<float>()}};
                      m_be.expertMatmuls(stage1, 3);
                      const backend::ExpertProduct stage2{{type, dDown.as<void>(), F, E, nMat, down.rowBytes}, de.as<int32_t>(),
                                                          nPairs, dh.as<float>(), 1, yDown.as<float>()};
                      m_be.expertMatmuls(&stage2, 1);
                      std::vector<float> got;
                      std::vector<double> ref;
                      auto product = [&](const HostWeights& w, int64_t rows, int64_t cols, int64_t m, const float* xr,
                                         std::vector<float> y, int64_t p) {
                          for (int64_t r = 0; r < rows; ++r) {
                              double sum = 0;
                              for (int64_t k = 0; k < cols; ++k) sum += double(w.deq[(m * rows + r) * cols + k]) * xr[k];
                              ref.push_back(sum);
                              got.push_back(y[static_cast<size_t>(p * rows + r)]);
                          }
                      };
                      const std::vector<float> gu = yUp.get<float>(static_cast<size_t>(nPairs * F)),
                                               gg = yGate.get<float>(static_cast<size_t>(nPairs * F)),
                                               gs = ySh.get<float>(static_cast<size_t>(nTok * S)),
                                               gd = yDown.get<float>(static_cast<size_t>(nPairs * E));
                      for (int64_t p = 0; p < nPairs; ++p) {
                          product(up, F, E, experts[p], x.data() + (p / U) * E, gu, p);
                          product(gate, F, E, experts[p], x.data() + (p / U) * E, gg, p);
                          product(down, E, F, experts[p], h.data() + p * F, gd, p);
                      }
                      for (int64_t t = 0; t < nTok; ++t) product(shared, S, E, 0, x.data() + t * E, gs, t);
                      c.err = nmse(got, ref);
                  });
        }
    for (int64_t nPairs : {1, 15, 120}) {
        const int64_t n = 67, nMat = 5;
        check("add_expert_bias", "pairs=" + std::to_string(nPairs) + " n=67", kExactLimit, [&](OpCheck& c) {
            const std::vector<float> y = normal(static_cast<size_t>(nPairs * n)), bias = normal(static_cast<size_t>(nMat * n));
            std::vector<int32_t> experts(static_cast<size_t>(nPairs));
            for (auto& e : experts) e = uniform(0, static_cast<int>(nMat) - 1);
            Mem dy(m_be, y.size() * 4, c.failure), db(m_be, bias.size() * 4, c.failure), de(m_be, experts.size() * 4, c.failure);
            if (!c.failure.empty()) return;
            dy.put(y);
            db.put(bias);
            de.put(experts);
            m_be.addExpertBias(dy.as<float>(), db.as<float>(), de.as<int32_t>(), nPairs, n);
            std::vector<double> ref(y.size());
            for (int64_t p = 0; p < nPairs; ++p)
                for (int64_t i = 0; i < n; ++i) ref[p * n + i] = double(y[p * n + i]) + bias[experts[p] * n + i];
            c.err = nmse(dy.get<float>(y.size()), ref);
        });
    }
}

void Runner::embeddings() {
    const int64_t vocab = 50, cols = 256;
    for (TensorType type : kComputableTypes)
        for (int64_t nTok : {1, 5, 40}) {
            check("embed_rows", "type=" + typeStr(type) + " tok=" + std::to_string(nTok), kExactLimit, [&](OpCheck& c) {
                HostWeights hw;
                if (!weights(c, type, vocab, cols, hw)) return;
                const std::vector<uint8_t>& wb = hw.bytes;
                const std::vector<float>& w = hw.deq;
                const uint64_t rowBytes = hw.rowBytes;
                std::vector<int32_t> tokens(static_cast<size_t>(nTok));
                for (auto& t : tokens) t = uniform(0, static_cast<int>(vocab) - 1);
                Mem dw(m_be, wb.size(), c.failure), dt(m_be, tokens.size() * 4, c.failure),
                    dy(m_be, static_cast<uint64_t>(nTok * cols) * 4, c.failure);
                if (!c.failure.empty()) return;
                dw.put(wb);
                dt.put(tokens);
                m_be.embedRows({type, dw.as<void>(), cols, vocab, 1, rowBytes}, dt.as<int32_t>(), nTok, dy.as<float>());
                const std::vector<float> y = dy.get<float>(static_cast<size_t>(nTok * cols));
                std::vector<double> ref;
                for (int64_t t = 0; t < nTok; ++t)
                    for (int64_t k = 0; k < cols; ++k) ref.push_back(w[tokens[t] * cols + k]);
                c.err = nmse(y, ref);
            });
        }
}

float geluF16Ref(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    const double h = tensor::fp16ToFp32(tensor::fp32ToFp16(x));
    const double g = 0.5 * h * (1.0 + std::tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)));
    return tensor::fp16ToFp32(tensor::fp32ToFp16(static_cast<float>(g)));
}

void Runner::elementwise() {
    for (int64_t rows : {1, 5, 40})
        for (int64_t n : {7, 64, 4096}) {
            const std::string shape = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
            const size_t total = static_cast<size_t>(rows * n);
            for (bool gain : {false, true})
                check("rms_norm", shape + (gain ? " gain" : ""), kExactLimit, [&](OpCheck& c) {
                    const std::vector<float> x = normal(total, 3.0f), w = normal(static_cast<size_t>(n));
                    Mem dx(m_be, total * 4, c.failure), dw(m_be, w.size() * 4, c.failure), dy(m_be, total * 4, c.failure);
                    if (!c.failure.empty()) return;
                    dx.put(x);
                    dw.put(w);
                    const float eps = 1e-5f;
                    m_be.rmsNorm(dx.as<float>(), gain ? dw.as<float>() : nullptr, dy.as<float>(), rows, n, eps);
                    std::vector<double> ref(total);
                    for (int64_t r = 0; r < rows; ++r) {
                        double ss = 0;
                        for (int64_t i = 0; i < n; ++i) ss += double(x[r * n + i]) * x[r * n + i];
                        const double inv = 1.0 / std::sqrt(ss / n + eps);
                        for (int64_t i = 0; i < n; ++i) ref[r * n + i] = x[r * n + i] * inv * (gain ? w[i] : 1.0);
                    }
                    c.err = nmse(dy.get<float>(total), ref);
                });
            // Two-input ops: y = f(a, b) with the reference in double.
            auto binary = [&](const std::string& op, double limit, float sigmaA,
                              const std::function<void(float*, const float*)>& run,
                              const std::function<double(float, float)>& ref1, bool bInPlace) {
                check(op, shape, limit, [&](OpCheck& c) {
                    const std::vector<float> a = normal(total, sigmaA), b = normal(total);
                    Mem da(m_be, total * 4, c.failure), db(m_be, total * 4, c.failure);
                    if (!c.failure.empty()) return;
                    da.put(a);
                    db.put(b);
                    run(da.as<float>(), db.as<float>());
                    std::vector<double> ref(total);
                    for (size_t i = 0; i < total; ++i) ref[i] = ref1(a[i], b[i]);
                    c.err = nmse(bInPlace ? db.get<float>(total) : da.get<float>(total), ref);
                });
            };
            binary("add", kExactLimit, 1.0f, [&](float* a, const float* b) { m_be.add(a, b, a, total); },
                   [](float a, float b) { return double(a) + b; }, false);
            binary("swiglu", kExactLimit, 2.0f, [&](float* g, const float* u) { m_be.swiglu(g, u, total); },
                   [](float g, float u) { return double(g) / (1.0 + std::exp(-double(g))) * u; }, false);
            binary("swiglu_oai", kExactLimit, 4.0f, [&](float* g, const float* u) { m_be.swigluOai(g, u, total, 1.702f, 7.0f); },
                   [](float g, float u) {
                       const double x = std::min(double(g), 7.0), y = std::clamp(double(u), -7.0, 7.0);
                       return x / (1.0 + std::exp(-1.702 * x)) * (y + 1.0);
                   },
                   false);
            binary("geglu", kGegluLimit, 4.0f, [&](float* g, const float* u) { m_be.geglu(g, u, total); },
                   [](float g, float u) { return double(geluF16Ref(g)) * u; }, false);
            binary("scale", kExactLimit, 1.0f, [&](float* a, const float*) { m_be.scale(a, 0.37f, total); },
                   [](float a, float) { return double(a) * 0.37f; }, false);
            binary("soft_cap", kExactLimit, 20.0f, [&](float* a, const float*) { m_be.softCap(a, total, 7.5f); },
                   [](float a, float) { return std::tanh(double(a) / 7.5) * 7.5; }, false);
            check("add_bias", shape, kExactLimit, [&](OpCheck& c) {
                const std::vector<float> y = normal(total), bias = normal(static_cast<size_t>(n));
                Mem dy(m_be, total * 4, c.failure), db(m_be, bias.size() * 4, c.failure);
                if (!c.failure.empty()) return;
                dy.put(y);
                db.put(bias);
                m_be.addBias(dy.as<float>(), db.as<float>(), rows, n);
                std::vector<double> ref(total);
                for (size_t i = 0; i < total; ++i) ref[i] = double(y[i]) + bias[i % static_cast<size_t>(n)];
                c.err = nmse(dy.get<float>(total), ref);
            });
        }
}

void Runner::ropes() {
    for (bool neox : {false, true})
        for (int nRot : {64, 32})
            for (int64_t nTok : {1, 5, 40}) {
                const int64_t nHead = 3, headDim = 64;
                const std::string params = std::string(neox ? "neox" : "norm") + " n_rot=" + std::to_string(nRot)
                    + " head_dim=64 heads=3 tok=" + std::to_string(nTok);
                check("rope", params, kExactLimit, [&](OpCheck& c) {
                    const size_t total = static_cast<size_t>(nTok * nHead * headDim);
                    const std::vector<float> x = normal(total);
                    std::vector<float> table(static_cast<size_t>(nTok * nRot));
                    std::uniform_real_distribution<float> angle(-3.14159f, 3.14159f);
                    for (size_t i = 0; i < table.size(); i += 2) {
                        const float a = angle(m_rng);
                        table[i] = std::cos(a);
                        table[i + 1] = std::sin(a);
                    }
                    Mem dx(m_be, total * 4, c.failure), dt(m_be, table.size() * 4, c.failure);
                    if (!c.failure.empty()) return;
                    dx.put(x);
                    dt.put(table);
                    m_be.rope(dx.as<float>(), nTok, nHead, headDim, nRot, neox, dt.as<float>());
                    std::vector<double> ref(x.begin(), x.end());
                    for (int64_t t = 0; t < nTok; ++t)
                        for (int64_t h = 0; h < nHead; ++h) {
                            const int64_t base = (t * nHead + h) * headDim;
                            for (int i = 0; i < nRot / 2; ++i) {
                                const int64_t i0 = base + (neox ? i : 2 * i), i1 = base + (neox ? i + nRot / 2 : 2 * i + 1);
                                const double cs = table[t * nRot + 2 * i], sn = table[t * nRot + 2 * i + 1];
                                ref[i0] = x[i0] * cs - x[i1] * sn;
                                ref[i1] = x[i0] * sn + x[i1] * cs;
                            }
                        }
                    c.err = nmse(dx.get<float>(total), ref);
                });
            }
}

struct AttnCase {
    int nHead, nHeadKv, dimK, dimV;
    bool f16;
    float scale, softCap;
    int window;
    bool sinks;
};

void Runner::attentions() {
    const AttnCase shapes[] = {
        {4, 4, 64, 64, false, 0.125f, 0, 0, false},   {8, 2, 128, 128, false, 0.088f, 0, 0, false},
        {6, 3, 96, 64, false, 0.1f, 0, 0, false},     {8, 2, 128, 128, true, 0.088f, 0, 0, false},
        {4, 2, 64, 64, false, 1.0f, 5.0f, 0, false},  {4, 2, 64, 64, false, 0.125f, 0, 16, false},
        {4, 2, 64, 64, false, 0.125f, 0, 0, true},    {4, 1, 64, 64, true, 0.125f, 0, 16, true},
    };
    // Batches: one sequence's rows at consecutive positions (prefill after `start` cached
    // positions), or one row of each of several sequences at their own positions (batched decode).
    struct Batch {
        std::string name;
        std::vector<std::pair<int, int>> rows;  // (sequence, position)
    };
    std::vector<Batch> batches;
    for (int start : {0, 1000})
        for (int nTok : {1, 5, 40}) {
            Batch b{"seq start=" + std::to_string(start) + " tok=" + std::to_string(nTok), {}};
            for (int t = 0; t < nTok; ++t) b.rows.push_back({0, start + t});
            batches.push_back(b);
        }
    batches.push_back({"5 sequences", {{0, 3}, {1, 200}, {2, 1040}, {3, 17}, {4, 0}}});
    batches.push_back({"2 sequences x 3 rows", {{0, 30}, {0, 31}, {0, 32}, {1, 7}, {1, 8}, {1, 9}}});

    const int capacity = 1100;
    const uint64_t nLayer = 2, layer = 1;
    for (const AttnCase& s : shapes)
        for (const Batch& b : batches) {
            std::string params = "heads=" + std::to_string(s.nHead) + "/" + std::to_string(s.nHeadKv) + " dim="
                + std::to_string(s.dimK) + "/" + std::to_string(s.dimV) + (s.f16 ? " f16" : " f32");
            if (s.softCap > 0) params += " softcap";
            if (s.window > 0) params += " window=" + std::to_string(s.window);
            if (s.sinks) params += " sinks";
            params += " " + b.name;
            backend::Attention a;
            a.nHead = s.nHead;
            a.nHeadKv = s.nHeadKv;
            a.dimK = s.dimK;
            a.dimV = s.dimV;
            a.f16 = s.f16;
            a.scale = s.scale;
            a.softCap = s.softCap;
            a.window = s.window;
            const uint64_t elem = s.f16 ? 2 : 4;
            // Sequences of different capacities, two padded layers each: the rows point at layer 1.
            auto capacityOf = [&](int seq) { return capacity + 37 * seq; };
            auto layerBytesOf = [&](int seq) {
                return (static_cast<uint64_t>(s.nHeadKv) * capacityOf(seq) * (s.dimK + s.dimV) * elem + 63) / 64 * 64 + 192;
            };
            check("attention", params, s.f16 ? kAttnF16Limit : kAttnF32Limit, [&](OpCheck& c) {
                if (!m_be.supports(a)) {
                    c.skipped = "attention option not supported";
                    return;
                }
                int nSeq = 0;
                for (auto [q, p] : b.rows) nSeq = std::max(nSeq, q + 1);
                const int64_t kRow = int64_t(s.nHeadKv) * s.dimK, vRow = int64_t(s.nHeadKv) * s.dimV;
                // Host copies of every sequence's keys and values at every position (as stored).
                std::vector<std::vector<float>> K(nSeq), V(nSeq);
                std::vector<uint64_t> seqOffset(static_cast<size_t>(nSeq) + 1, 0);
                for (int q = 0; q < nSeq; ++q) seqOffset[static_cast<size_t>(q) + 1] = seqOffset[static_cast<size_t>(q)] + nLayer * layerBytesOf(q);
                Mem caches(m_be, seqOffset.back(), c.failure);
                const std::vector<float> sinkV = normal(static_cast<size_t>(s.nHead), 2.0f);
                Mem dSinks(m_be, sinkV.size() * 4, c.failure);
                if (!c.failure.empty()) return;
                dSinks.put(sinkV);
                if (s.sinks) a.sinks = dSinks.as<float>();
                auto rowCache = [&](int seq, int pos) {
                    return backend::RowCache{caches.as<uint8_t>() + seqOffset[static_cast<size_t>(seq)] + layer * layerBytesOf(seq),
                                             capacityOf(seq), pos};
                };
                // Fill positions 0 .. max position of each sequence: history first, then the batch
                // rows (the forward stores the batch's keys before its attention reads them).
                std::vector<int> last(nSeq, -1);
                for (auto [q, p] : b.rows) last[q] = std::max(last[q], p);
                for (int q = 0; q < nSeq; ++q) {
                    K[q] = normal(static_cast<size_t>((last[q] + 1) * kRow));
                    V[q] = normal(static_cast<size_t>((last[q] + 1) * vRow));
                    std::vector<backend::RowCache> rc;
                    for (int p = 0; p <= last[q]; ++p) rc.push_back(rowCache(q, p));
                    Mem dk(m_be, K[q].size() * 4, c.failure), dv(m_be, V[q].size() * 4, c.failure);
                    if (!c.failure.empty()) return;
                    dk.put(K[q]);
                    dv.put(V[q]);
                    m_be.storeKv(a, rc.data(), static_cast<int64_t>(rc.size()), dk.as<float>(), dv.as<float>());
                    if (auto r = m_be.synchronize(); !r) {
                        c.failure = r.error().message;
                        return;
                    }
                    if (s.f16)
                        for (auto* v : {&K[q], &V[q]})
                            for (float& x : *v) x = tensor::fp16ToFp32(tensor::fp32ToFp16(x));
                }
                const int64_t nTok = static_cast<int64_t>(b.rows.size());
                const std::vector<float> qv = normal(static_cast<size_t>(nTok * s.nHead * s.dimK));
                std::vector<backend::RowCache> rc;
                for (auto [q, p] : b.rows) rc.push_back(rowCache(q, p));
                Mem dq(m_be, qv.size() * 4, c.failure), dout(m_be, static_cast<uint64_t>(nTok * s.nHead * s.dimV) * 4, c.failure);
                if (!c.failure.empty()) return;
                dq.put(qv);
                m_be.attention(a, rc.data(), nTok, dq.as<float>(), dout.as<float>());
                const std::vector<float> out = dout.get<float>(static_cast<size_t>(nTok * s.nHead * s.dimV));
                std::vector<double> ref(out.size());
                const int group = s.nHead / s.nHeadKv;
                for (int64_t t = 0; t < nTok; ++t) {
                    const auto [seq, pos] = b.rows[static_cast<size_t>(t)];
                    const int first = s.window > 0 ? std::max(0, pos - s.window + 1) : 0;
                    for (int h = 0; h < s.nHead; ++h) {
                        const int g = h / group;
                        const float* qh = qv.data() + (t * s.nHead + h) * s.dimK;
                        std::vector<double> sc;
                        double mx = s.sinks ? double(sinkV[h]) : -std::numeric_limits<double>::infinity();
                        for (int j = first; j <= pos; ++j) {
                            const float* kj = K[seq].data() + j * kRow + g * s.dimK;
                            double d = 0;
                            for (int i = 0; i < s.dimK; ++i) d += double(qh[i]) * kj[i];
                            d *= s.scale;
                            if (s.softCap > 0) d = s.softCap * std::tanh(d / s.softCap);
                            sc.push_back(d);
                            mx = std::max(mx, d);
                        }
                        double sum = s.sinks ? std::exp(double(sinkV[h]) - mx) : 0.0;
                        for (double& d : sc) sum += (d = std::exp(d - mx));
                        for (int i = 0; i < s.dimV; ++i) {
                            double acc = 0;
                            for (int j = first; j <= pos; ++j)
                                acc += sc[static_cast<size_t>(j - first)] * V[seq][j * vRow + g * s.dimV + i];
                            ref[(t * s.nHead + h) * s.dimV + i] = acc / sum;
                        }
                    }
                }
                c.err = nmse(out, ref);
            });
        }
}

// MLA: the absorbed attention against its expanded form (every head's keys and values computed from
// the latents in double), over prefills, long contexts and rows of several sequences; rows of 64
// or 256 latents for the weight types whose blocks need it.
void Runner::latentAttentions() {
    struct Batch {
        std::string name;
        std::vector<std::pair<int, int>> rows;  // (sequence, position)
    };
    std::vector<Batch> batches;
    for (auto [start, nTok] : {std::pair{0, 5}, std::pair{300, 40}, std::pair{500, 1}}) {
        Batch b{"seq start=" + std::to_string(start) + " tok=" + std::to_string(nTok), {}};
        for (int t = 0; t < nTok; ++t) b.rows.push_back({0, start + t});
        batches.push_back(b);
    }
    batches.push_back({"3 sequences", {{0, 9}, {1, 420}, {2, 0}}});
    const int H = 4, dn = 32, dr = 16, dv = 32, dk = dn + dr;
    for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_K})
        for (bool f16 : {false, true})
            for (const Batch& b : batches) {
                const int Lr = tensor::traits(type).blockElems >= 256 ? 256 : 64;
                const std::string params = "kv_b=" + typeStr(type) + " rank=" + std::to_string(Lr) + (f16 ? " f16" : " f32")
                    + " " + b.name;
                backend::LatentAttention la;
                la.nHead = H;
                la.dNope = dn;
                la.dRope = dr;
                la.dV = dv;
                la.rank = Lr;
                la.f16 = f16;
                la.scale = 1.0f / std::sqrt(float(dk));
                check("latent_attention", params, f16 ? kAttnF16Limit : kAttnF32Limit, [&](OpCheck& c) {
                    if (!m_be.supports(la)) {
                        c.skipped = "latent attention not supported";
                        return;
                    }
                    HostWeights w;
                    if (!weights(c, type, int64_t(H) * (dn + dv), Lr, w)) return;
                    int nSeq = 0;
                    for (auto [q, p] : b.rows) nSeq = std::max(nSeq, q + 1);
                    const int capacity = 600;
                    const uint64_t elem = f16 ? 2 : 4, seqBytes = uint64_t(capacity) * (Lr + dr) * elem;
                    Mem dw(m_be, w.bytes.size(), c.failure), caches(m_be, seqBytes * nSeq, c.failure);
                    if (!c.failure.empty()) return;
                    dw.put(w.bytes);
                    la.kvB = {type, dw.as<void>(), Lr, int64_t(H) * (dn + dv), 1, w.rowBytes};
                    std::vector<std::vector<float>> lat(nSeq), kr(nSeq);
                    std::vector<int> last(nSeq, -1);
                    for (auto [q, p] : b.rows) last[q] = std::max(last[q], p);
                    backend::Attention shape;
                    shape.nHead = shape.nHeadKv = 1;
                    shape.dimK = Lr;
                    shape.dimV = dr;
                    shape.f16 = f16;
                    auto rowCache = [&](int seq, int pos) {
                        return backend::RowCache{caches.as<uint8_t>() + seqBytes * seq, capacity, pos};
                    };
                    for (int q = 0; q < nSeq; ++q) {
                        lat[q] = normal(static_cast<size_t>((last[q] + 1) * Lr));
                        kr[q] = normal(static_cast<size_t>((last[q] + 1) * dr));
                        std::vector<backend::RowCache> rc;
                        for (int p = 0; p <= last[q]; ++p) rc.push_back(rowCache(q, p));
                        Mem dl(m_be, lat[q].size() * 4, c.failure), dk2(m_be, kr[q].size() * 4, c.failure);
                        if (!c.failure.empty()) return;
                        dl.put(lat[q]);
                        dk2.put(kr[q]);
                        m_be.storeKv(shape, rc.data(), static_cast<int64_t>(rc.size()), dl.as<float>(), dk2.as<float>());
                        if (auto r = m_be.synchronize(); !r) {
                            c.failure = r.error().message;
                            return;
                        }
                        if (f16)
                            for (auto* v : {&lat[q], &kr[q]})
                                for (float& x : *v) x = tensor::fp16ToFp32(tensor::fp32ToFp16(x));
                    }
                    const int64_t nTok = static_cast<int64_t>(b.rows.size());
                    const std::vector<float> qv = normal(static_cast<size_t>(nTok * H * dk));
                    std::vector<backend::RowCache> rc;
                    for (auto [q, p] : b.rows) rc.push_back(rowCache(q, p));
                    Mem dq(m_be, qv.size() * 4, c.failure), dout(m_be, static_cast<uint64_t>(nTok * H * dv) * 4, c.failure);
                    if (!c.failure.empty()) return;
                    dq.put(qv);
                    m_be.latentAttention(la, rc.data(), nTok, dq.as<float>(), dout.as<float>());
                    const std::vector<float> out = dout.get<float>(static_cast<size_t>(nTok * H * dv));
                    std::vector<double> ref(out.size());
                    for (int64_t t = 0; t < nTok; ++t) {
                        const auto [seq, pos] = b.rows[static_cast<size_t>(t)];
                        for (int h = 0; h < H; ++h) {
                            const float* qh = qv.data() + (t * H + h) * dk;
                            const float* Wk = w.deq.data() + int64_t(h) * (dn + dv) * Lr;  // dn rows of Lr
                            const float* Wv = Wk + int64_t(dn) * Lr;                          // dv rows of Lr
                            std::vector<double> sc(static_cast<size_t>(pos + 1));
                            double mx = -std::numeric_limits<double>::infinity();
                            for (int j = 0; j <= pos; ++j) {
                                const float* l = lat[seq].data() + int64_t(j) * Lr;
                                double d = 0;
                                for (int i = 0; i < dn; ++i) {
                                    double kn = 0;
                                    for (int k = 0; k < Lr; ++k) kn += double(Wk[int64_t(i) * Lr + k]) * l[k];
                                    d += qh[i] * kn;
                                }
                                for (int i = 0; i < dr; ++i) d += double(qh[dn + i]) * kr[seq][int64_t(j) * dr + i];
                                sc[static_cast<size_t>(j)] = d * la.scale;
                                mx = std::max(mx, sc[static_cast<size_t>(j)]);
                            }
                            double sum = 0;
                            for (double& d : sc) sum += (d = std::exp(d - mx));
                            std::vector<double> mixed(static_cast<size_t>(Lr), 0.0);  // sum_j p_j latent_j
                            for (int j = 0; j <= pos; ++j)
                                for (int k = 0; k < Lr; ++k) mixed[k] += sc[static_cast<size_t>(j)] / sum * lat[seq][int64_t(j) * Lr + k];
                            for (int i = 0; i < dv; ++i) {
                                double v = 0;
                                for (int k = 0; k < Lr; ++k) v += double(Wv[int64_t(i) * Lr + k]) * mixed[k];
                                ref[(t * H + h) * dv + i] = v;
                            }
                        }
                    }
                    c.err = nmse(out, ref);
                });
            }
}

// Rows rounded as matmul inputs: f16 / bf16 rounding exactly; for the quantized pairings, values on
// a per-block grid (32 elements for Q8_0 / Q8_1, 256 for Q8_K) of 127 steps to the block's largest
// magnitude, within 0.6 of a step of the input (half a step, plus the f16 rounding of the scale).
void Runner::roundings() {
    const int64_t K = 512, rows = 3;
    for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q8_0,
                            TensorType::Q4_1, TensorType::Q4_K, TensorType::Q6_K, TensorType::IQ4_XS, TensorType::MXFP4})
        check("round_as_matmul_input", "type=" + typeStr(type), 0.6, [&](OpCheck& c) {
            if (!m_be.supports(type)) {
                c.skipped = "type not supported";
                return;
            }
            const std::vector<float> x = normal(static_cast<size_t>(rows * K));
            Mem dx(m_be, x.size() * 4, c.failure);
            if (!c.failure.empty()) return;
            dx.put(x);
            m_be.roundAsMatmulInput(type, dx.as<float>(), rows, K);
            const std::vector<float> r = dx.get<float>(x.size());
            if (type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16) {
                for (size_t i = 0; i < x.size(); ++i) {
                    const float want = type == TensorType::F32 ? x[i]
                        : type == TensorType::F16             ? tensor::fp16ToFp32(tensor::fp32ToFp16(x[i]))
                                                              : tensor::bf16ToFp32(tensor::fp32ToBf16(x[i]));
                    if (r[i] != want) c.err = 1e9;
                }
                return;
            }
            const bool q8k = type == TensorType::Q4_K || type == TensorType::Q6_K || type == TensorType::IQ4_XS;
            const int64_t block = q8k ? 256 : 32;
            const double levels = 127.0;
            for (int64_t b0 = 0; b0 < rows * K; b0 += block) {
                double amaxX = 0, amaxR = 0;
                for (int64_t i = b0; i < b0 + block; ++i) {
                    amaxX = std::max(amaxX, std::fabs(double(x[i])));
                    amaxR = std::max(amaxR, std::fabs(double(r[i])));
                }
                const double step = amaxR / levels;
                for (int64_t i = b0; i < b0 + block; ++i) {
                    const double k = r[i] / step;
                    if (std::fabs(k - std::round(k)) > 1e-3) c.err = 1e9;  // off the grid
                    c.err = std::max(c.err, std::fabs(double(x[i]) - r[i]) / (amaxX / 127.0));
                }
            }
        });
    for (int64_t rows2 : {1, 5, 40})
        check("copy_rows", "rows=" + std::to_string(rows2) + " cols=7 from ld 13 to ld 11", 0, [&](OpCheck& c) {
            const std::vector<float> src = normal(static_cast<size_t>(rows2 * 13));
            std::vector<float> dst = normal(static_cast<size_t>(rows2 * 11));
            Mem ds(m_be, src.size() * 4, c.failure), dd(m_be, dst.size() * 4, c.failure);
            if (!c.failure.empty()) return;
            ds.put(src);
            dd.put(dst);
            m_be.copyRows(dd.as<float>(), 11, ds.as<float>() + 2, 13, rows2, 7);
            const std::vector<float> got = dd.get<float>(dst.size());
            for (int64_t r = 0; r < rows2; ++r)
                for (int64_t i = 0; i < 11; ++i) {
                    const float want = i < 7 ? src[r * 13 + 2 + i] : dst[r * 11 + i];  // the rest untouched
                    if (got[r * 11 + i] != want) ++c.err;
                }
        });
}

void Runner::routing() {
    for (int64_t nTok : {1, 5, 40})
        for (int nExpert : {8, 61})
            for (int U : {1, 2, 6}) {
                const std::string params = "tok=" + std::to_string(nTok) + " experts=" + std::to_string(nExpert)
                    + " used=" + std::to_string(U);
                const std::vector<float> logits = normal(static_cast<size_t>(nTok * nExpert), 2.0f);
                std::vector<int32_t> refIds(static_cast<size_t>(nTok * U));
                std::vector<double> refW(static_cast<size_t>(nTok * U));
                for (int64_t t = 0; t < nTok; ++t) {
                    const float* l = logits.data() + t * nExpert;
                    std::vector<int32_t> order(static_cast<size_t>(nExpert));
                    for (int e = 0; e < nExpert; ++e) order[static_cast<size_t>(e)] = e;
                    std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return l[x] > l[y]; });
                    const double mx = l[order[0]];
                    double chosen = 0;
                    for (int k = 0; k < U; ++k) chosen += std::exp(double(l[order[static_cast<size_t>(k)]]) - mx);
                    for (int k = 0; k < U; ++k) {
                        refIds[static_cast<size_t>(t * U + k)] = order[static_cast<size_t>(k)];
                        refW[static_cast<size_t>(t * U + k)] = std::exp(double(l[order[static_cast<size_t>(k)]]) - mx) / chosen;
                    }
                }
                // Softmax then top-k with the weights renormalised (mixtral) and top-k then a softmax
                // over the k (gpt-oss) choose the same experts with the same weights.
                using Route = void (Backend::*)(const float*, int64_t, int, int, int32_t*, float*);
                for (auto [op, route] : {std::pair<const char*, Route>{"route_softmax_topk", &Backend::routeSoftmaxTopK},
                                         std::pair<const char*, Route>{"route_topk_softmax", &Backend::routeTopKSoftmax}}) {
                    std::vector<int32_t> ids;
                    std::vector<float> w;
                    check(op, params + " (weights)", kExactLimit, [&](OpCheck& c) {
                        Mem dl(m_be, logits.size() * 4, c.failure), de(m_be, refIds.size() * 4, c.failure),
                            dw(m_be, refW.size() * 4, c.failure);
                        if (!c.failure.empty()) return;
                        dl.put(logits);
                        (m_be.*route)(dl.as<float>(), nTok, nExpert, U, de.as<int32_t>(), dw.as<float>());
                        ids = de.get<int32_t>(refIds.size());
                        w = dw.get<float>(refW.size());
                        c.err = nmse(w, refW);
                    });
                    check(op, params + " (expert ids)", 0, [&](OpCheck& c) {
                        if (ids.size() != refIds.size()) {
                            c.failure = "no result";
                            return;
                        }
                        for (size_t i = 0; i < ids.size(); ++i) c.err += ids[i] != refIds[i] ? 1 : 0;
                    });
                }
            }
    // DeepSeek-V3 (sigmoid, selection bias, 8 groups of which 4 compete), V2-Lite (softmax, no
    // groups, weights not normalised) and GLM-4.5 (sigmoid, bias, 128 experts) shapes.
    struct Grouped {
        const char* name;
        bool sigmoid, bias;
        int nExpert, nGroups, nGroupsUsed, U;
        bool normalize;
        float scale;
    };
    const Grouped grouped[] = {{"v3", true, true, 64, 8, 4, 8, true, 2.5f},
                               {"v2-lite", false, false, 64, 1, 1, 6, false, 1.0f},
                               {"glm4.5", true, true, 128, 1, 1, 8, true, 1.8f}};
    for (const Grouped& g : grouped)
        for (int64_t nTok : {1, 5, 40}) {
            const int X = g.nExpert, U = g.U;
            const std::string params = std::string(g.name) + " tok=" + std::to_string(nTok);
            check("route_grouped", params, kExactLimit, [&](OpCheck& c) {
                const std::vector<float> logits = normal(static_cast<size_t>(nTok * X), 2.0f);
                const std::vector<float> bias = normal(static_cast<size_t>(X), 0.3f);
                Mem dl(m_be, logits.size() * 4, c.failure), db(m_be, bias.size() * 4, c.failure),
                    dsel(m_be, logits.size() * 4, c.failure), de(m_be, static_cast<uint64_t>(nTok * U) * 4, c.failure),
                    dw(m_be, static_cast<uint64_t>(nTok * U) * 4, c.failure);
                if (!c.failure.empty()) return;
                dl.put(logits);
                db.put(bias);
                backend::GroupedRouting r;
                r.sigmoid = g.sigmoid;
                r.selectionBias = g.bias ? db.as<float>() : nullptr;
                r.nGroups = g.nGroups;
                r.nGroupsUsed = g.nGroupsUsed;
                r.normalize = g.normalize;
                r.scale = g.scale;
                m_be.routeGrouped(r, dl.as<float>(), nTok, X, U, dsel.as<float>(), de.as<int32_t>(), dw.as<float>());
                const std::vector<float> scores = dl.get<float>(logits.size()), sel = dsel.get<float>(logits.size()),
                                         w = dw.get<float>(static_cast<size_t>(nTok * U));
                const std::vector<int32_t> ids = de.get<int32_t>(static_cast<size_t>(nTok * U));
                std::vector<double> refScores(logits.size()), refW;
                std::vector<float> gotW;
                double mismatches = 0;
                auto rank = [](const std::vector<double>& v, int k) {  // best first, lowest index on ties
                    std::vector<int32_t> order(v.size());
                    for (size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int32_t>(i);
                    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
                    order.resize(static_cast<size_t>(k));
                    return order;
                };
                for (int64_t t = 0; t < nTok; ++t) {
                    const float* l = logits.data() + t * X;
                    double* ref = refScores.data() + t * X;
                    if (g.sigmoid) {
                        for (int e = 0; e < X; ++e) ref[e] = 1.0 / (1.0 + std::exp(-double(l[e])));
                    } else {
                        double mx = l[0], sum = 0;
                        for (int e = 0; e < X; ++e) mx = std::max(mx, double(l[e]));
                        for (int e = 0; e < X; ++e) sum += std::exp(l[e] - mx);
                        for (int e = 0; e < X; ++e) ref[e] = std::exp(l[e] - mx) / sum;
                    }
                    // The choice is ranked on the backend's own f32 scores (checked above against
                    // the reference), so a last-bit difference cannot flip a near tie.
                    std::vector<double> v(static_cast<size_t>(X));
                    for (int e = 0; e < X; ++e) v[e] = double(scores[t * X + e] + (g.bias ? bias[e] : 0.0f));
                    if (g.nGroups > 1) {
                        const int per = X / g.nGroups;
                        std::vector<double> worth(static_cast<size_t>(g.nGroups));
                        for (int gi = 0; gi < g.nGroups; ++gi) {
                            std::vector<double> grp(v.begin() + gi * per, v.begin() + (gi + 1) * per);
                            const auto best = rank(grp, std::min(2, per));
                            for (int32_t b : best) worth[gi] += grp[b];
                        }
                        const auto keep = rank(worth, g.nGroupsUsed);
                        for (int gi = 0; gi < g.nGroups; ++gi)
                            if (std::find(keep.begin(), keep.end(), gi) == keep.end())
                                for (int e = 0; e < per; ++e) v[gi * per + e] = -std::numeric_limits<double>::infinity();
                    }
                    for (int e = 0; e < X; ++e)  // what was ranked: the same values, -inf where left out
                        if (!(double(sel[t * X + e]) == v[e])) ++mismatches;
                    const auto chosen = rank(v, U);
                    double sum = 0;
                    for (int k = 0; k < U; ++k) {
                        if (ids[t * U + k] != chosen[k]) ++mismatches;
                        sum += ref[chosen[k]];
                    }
                    for (int k = 0; k < U; ++k) {
                        refW.push_back(ref[chosen[k]] / (g.normalize ? sum : 1.0) * g.scale);
                        gotW.push_back(w[t * U + k]);
                    }
                }
                c.err = std::max(nmse(scores, refScores), nmse(gotW, refW)) + mismatches;
            });
        }
    for (int64_t nTok : {1, 5, 40})
        for (int U : {1, 2, 6})
            for (int64_t n : {7, 2048}) {
                const std::string params = "tok=" + std::to_string(nTok) + " used=" + std::to_string(U) + " n=" + std::to_string(n);
                check("combine_experts", params, kExactLimit, [&](OpCheck& c) {
                    const std::vector<float> y = normal(static_cast<size_t>(nTok * U * n)), w = normal(static_cast<size_t>(nTok * U));
                    Mem dy(m_be, y.size() * 4, c.failure), dw(m_be, w.size() * 4, c.failure),
                        dout(m_be, static_cast<uint64_t>(nTok * n) * 4, c.failure);
                    if (!c.failure.empty()) return;
                    dy.put(y);
                    dw.put(w);
                    m_be.combineExperts(dy.as<float>(), dw.as<float>(), nTok, U, n, dout.as<float>());
                    std::vector<double> ref(static_cast<size_t>(nTok * n), 0.0);
                    for (int64_t t = 0; t < nTok; ++t)
                        for (int sl = 0; sl < U; ++sl)
                            for (int64_t i = 0; i < n; ++i) ref[t * n + i] += double(w[t * U + sl]) * y[(t * U + sl) * n + i];
                    c.err = nmse(dout.get<float>(ref.size()), ref);
                });
            }
}

}  // namespace

std::string summarize(const std::vector<OpCheck>& checks) {
    struct Row {
        int run = 0, skipped = 0;
        double worst = 0;
    };
    std::map<std::string, Row> rows;
    for (const auto& c : checks) {
        Row& r = rows[c.op];
        if (!c.skipped.empty()) {
            ++r.skipped;
            continue;
        }
        ++r.run;
        const double frac = !c.failure.empty() ? std::numeric_limits<double>::infinity()
            : c.limit > 0                       ? c.err / c.limit
            : c.err > 0                         ? std::numeric_limits<double>::infinity()
                                                : 0.0;
        r.worst = std::max(r.worst, frac);
    }
    std::string s;
    char line[160];
    for (const auto& [op, r] : rows) {
        std::snprintf(line, sizeof line, "  %-20s %4d cases, %3d skipped, worst error %.3g of its limit\n", op.c_str(),
                      r.run, r.skipped, r.worst);
        s += line;
    }
    return s;
}

std::vector<OpCheck> runBackendOpCases(Backend& be, uint32_t seed) {
    Runner r(be, seed);
    r.matmuls();
    r.expertMatmuls();
    r.expertGroups();
    r.embeddings();
    r.elementwise();
    r.ropes();
    r.attentions();
    r.latentAttentions();
    r.roundings();
    r.routing();
    return std::move(r.checks);
}

}  // namespace verdict::test
