// Golden test of the forward pass against llama.cpp (commit c392e509; v0.5.0 for the third batch)
// on every fixture model of a supported architecture: reference/<model>.json holds llama.cpp's
// logits for three prompts.
//
// Per fixture and prompt:
//   1. teacher forcing, one token at a time: evaluate prompt_ids (one batch), then each gen_id;
//      the logits after each call must match the reference step within the tolerance;
//   2. teacher forcing, one batch: prompt_ids + gen_ids in a single evaluate(allLogits) must give
//      the same logits at every step (checks the batched prompt path at every position);
//   3. free-running greedy generation must reproduce gen_ids up to the first step where the
//      reference's top-1/top-2 gap is below the tolerance (there the order may legitimately flip).
// MoE files: a step out of tolerance at or after a step where our own router saw a near-tie in its
// top-k (Case::tieGap) ends that prompt's comparison instead of failing (a routing flip: the fixtures
// README's "Routing flip"); at least two thirds of all steps must still be compared.
// Tolerance |ours - ref| <= abs + rel * |ref|, per weight type (see tolerances() below and
// docs in the report). Max |Δ| per fixture is printed. With VERDICT_TEST_DEVICE=cuda:0
// (tests/gpu, label gpu) the same checks run on the CUDA backend.
#include "backend/cpu/kernels.h"
#include "fixtures.h"
#include "session/session_impl.h"
#include "test_device.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace verdict;

namespace {

struct Tolerance {
    double abs;
    double rel;
};

// Tolerances, chosen from measurements against the references (table in the report of the
// engine issue; max |d| per fixture is printed by this test):
//  * F32 weights: 1e-4 + 1e-4 |ref| (the README's figure: 5-digit rounding + summation order).
//    Measured: synth-llama-f32 5.0e-5, stories260K 5.0e-4 (logits up to ~22).
//  * F16 weights: 1e-3 absolute. The engine rounds activations to f16 as llama.cpp does, so the
//    logits agree to ~4e-5 except where an activation's last-bit difference (summation order)
//    flips its f16 rounding; measured max 4.6e-4.
//  * BF16 weights: 5e-3 absolute. Same mechanism with 8x coarser rounding: one flip at an exact
//    bf16 tie moves the logits by ~1e-3; measured 2.9e-3 (llama.cpp itself moves by 5e-3 when
//    only its KV cache type changes).
//  * Quantized weights: 5e-2 absolute (README). Activations are quantized to Q8_0/Q8_1/Q8_K as
//    llama.cpp does; most steps agree to ~4e-5 and rare rounding flips of one activation reach
//    1-2e-2 (llama.cpp's own KV f32 -> f16 change moves these files by 1.5-2.5e-2).
struct Case {
    std::string stem;
    Tolerance tol;
    // MoE files: from the first step at which our own router sees a near-tie (the k-th minus the
    // (k+1)-th selection score below this, on any token and layer), a prompt is no longer compared:
    // there llama.cpp may pick the other expert and the logits move by O(1) from that token on
    // (fixtures README, "Routing flip"; the reference paths' smallest gaps are in its table). 0: off.
    double tieGap = 0;
};

// The selection scores each MoE forward pass dumps (what its top-k ranks): deepseek2 and glm4moe
// (bias, groups), gpt-oss (router logits + bias), the llama-family MoE (router logits; its softmax
// keeps their order).
bool isSelectionScore(std::string_view name) {
    return name == "ffn_moe_sel" || name == "ffn_moe_logits_biased" || name == "ffn_moe_logits";
}

struct StepRef {
    int pos = 0;
    std::vector<float> logits;                    // full vector, when present
    std::vector<std::pair<int, float>> top;       // (id, logit) top-64, when the vector is not stored
    double margin = 0;                            // top-1 minus top-2 logit
    double top1 = 0;                              // largest logit
};

struct PromptRef {
    std::vector<int32_t> promptIds;
    std::vector<int32_t> genIds;
    std::vector<StepRef> steps;
};

std::vector<PromptRef> loadReference(const std::filesystem::path& path) {
    std::ifstream in(path);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::vector<PromptRef> out;
    for (const auto& c : j.at("cases")) {
        PromptRef p;
        p.promptIds = c.at("prompt_ids").get<std::vector<int32_t>>();
        p.genIds = c.at("gen_ids").get<std::vector<int32_t>>();
        for (const auto& s : c.at("steps")) {
            StepRef r;
            r.pos = s.at("pos").get<int>();
            if (s.contains("logits")) r.logits = s.at("logits").get<std::vector<float>>();
            if (s.contains("top_logits"))
                for (const auto& e : s.at("top_logits")) r.top.emplace_back(e.at(0).get<int>(), e.at(1).get<float>());
            std::vector<float> v = r.logits;
            if (v.empty())
                for (const auto& [id, l] : r.top) v.push_back(l);
            std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
            r.margin = static_cast<double>(v[0]) - v[1];
            r.top1 = v[0];
            p.steps.push_back(std::move(r));
        }
        out.push_back(std::move(p));
    }
    return out;
}

// Max |Δ| of one step; sets `ok` false when any element is out of tolerance.
double compareStep(const StepRef& ref, std::span<const float> ours, const Tolerance& tol, bool& ok, int& badId) {
    double maxd = 0;
    auto check = [&](int id, float r) {
        const double d = std::fabs(static_cast<double>(ours[static_cast<size_t>(id)]) - r);
        maxd = std::max(maxd, d);
        if (d > tol.abs + tol.rel * std::fabs(r) && ok) {
            ok = false;
            badId = id;
        }
    };
    if (!ref.logits.empty()) {
        for (size_t i = 0; i < ref.logits.size(); ++i) check(static_cast<int>(i), ref.logits[i]);
    } else {
        for (const auto& [id, l] : ref.top) check(id, l);
    }
    return maxd;
}

}  // namespace

Q_DECLARE_METATYPE(Case)

class TestGoldenLogits : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { qInfo("fixture | max|d| step-by-step | max|d| batched | greedy tokens matched / compared"); }

    void matchesLlamaCpp_data() {
        QTest::addColumn<Case>("c");
        const Tolerance f32{1e-4, 1e-4};
        const Tolerance f16{1e-3, 0};
        const Tolerance bf16{5e-3, 0};
        const Tolerance quant{5e-2, 0};
        // deepseek2 F16: logits span +-4 (3x synth-llama) and the lite file has 27 layers, so the F16
        // path's usual offset (~3e-4 median on synth-llama) grows: measured 3.2e-3 (deepseek2-f16),
        // 6.1e-3 (deepseek2lite-f16); llama.cpp's own KV f32 -> f16 switch moves them 5e-3 / 6.5e-2.
        // deepseek2-q8_0 flips near-tied activation roundings / expert choices: test_deepseek2.cpp.
        const Tolerance f16Deep{1e-2, 0};
        // gemma2 / phi3 F16: the same +-4 logit span (3x synth-llama's), so 3x the F16 bound; measured
        // 2.4e-3 (gemma2), 2.2e-3 (phi3) with the polynomial exp of attention's softmax (2.3e-3 / 1.9e-3
        // with std::exp); llama.cpp's own KV f32 -> f16 switch moves them 4.0e-3 / 3.3e-3.
        const Tolerance f16Wide{3e-3, 0};
        // Quantized files of the third batch with logits of +-4 (qwen3, llama3, gpt-oss: 3x synth-llama's
        // span): 3x the quantized bound. Measured 6.4e-2 (llama3-q4_k_m), 6.2e-2 (qwen3-q8_0), 6.6e-2
        // (qwen3-q4_k_m), 6.3e-2 (gpt-oss-mxfp4); llama.cpp's own KV f32 -> f16 switch moves them
        // 9.2e-2, 8.7e-2, 0.11, 0.10 at step 0 (fixtures README, third batch).
        // synth-deepseek2-q4_k has the same +-4 span (second batch): measured 8.2e-2 where the CPU runs
        // the AVX2 kernels, and with AVX-512 since MLA's softmax takes the polynomial exp (5.1e-5
        // before: one activation rounding flips or not); llama.cpp v0.5.0 moved this file by 7.3e-2
        // against its own c392e50 references (fixtures README).
        const Tolerance quantWide{1.5e-1, 0};
        // Routing near-ties (Case::tieGap), in selection-score units: our router's scores carry the
        // hidden state's differences from llama.cpp's, ~1e-4 on F16 files and up to a few 1e-3 on
        // quantized ones (activation-rounding flips of 1e-2 in the logits). Seen: gpt-oss-mxfp4 prompt 2
        // parts from llama.cpp's path at step 2 (|d| 1.0 from that token on, the signature of a routing
        // flip) where our top-4 gap is 2.6e-3; llama.cpp's own smallest gap on that path is 1.2e-3.
        const double tieF16 = 1e-3;
        const double tieQuant = 3e-3;
        // gpt-oss F16 (logits +-4.7; YaRN, sinks, 3x-wide expert weights): the README's bound for the
        // third batch's F16 files, 1e-2 (llama.cpp's own KV f32 -> f16 switch moves it 8.0e-3).
        const Tolerance f16Batch3{1e-2, 0};
        const std::vector<Case> cases = {
            {"stories260K", f32},
            {"llama-2-tiny-random", f16},
            {"synth-llama-f32", f32},
            {"synth-llama-f16", f16},
            {"synth-llama-bf16", bf16},
            {"synth-llama-q8_0", quant},
            {"synth-llama-q4_0", quant},
            {"synth-llama-q4_1", quant},
            {"synth-llama-q5_0", quant},
            {"synth-llama-q5_1", quant},
            {"synth-llama-q2_k", quant},
            {"synth-llama-q3_k", quant},
            {"synth-llama-q4_k", quant},
            {"synth-llama-q5_k", quant},
            {"synth-llama-q6_k", quant},
            {"synth-llama-moe-f16", f16, tieF16},
            {"synth-llama-moe-q8_0", quant, tieQuant},
            {"synth-qwen2-f16", f16},
            {"synth-gemma2-f16", f16Wide},
            {"synth-phi3-f16", f16Wide},
            {"synth-deepseek2-f16", f16Deep, tieF16},
            {"synth-deepseek2-q4_k", quantWide, tieQuant},
            {"synth-deepseek2lite-f16", f16Deep, tieF16},
            // Third batch (llama.cpp v0.5.0, fixtures/v0.5.0): the same master in the mixes llama.cpp
            // makes by default and in the non-linear 4-bit types.
            {"v0.5.0/synth-llama-q4_k_m", quant},
            {"v0.5.0/synth-llama-q5_k_m", quant},
            {"v0.5.0/synth-llama-iq4_nl", quant},
            {"v0.5.0/synth-llama-iq4_xs", quant},
            {"v0.5.0/synth-llama-mxfp4", quant},
            // The lattice i-quants and the ternary formats, the quantized bound: the
            // steps agree to 5e-5 (the references' 5 digits) up to the first step where one activation's
            // Q8_K rounding flips (summation order), then move by 0.9-2e-2 from there on (the flip is in
            // the KV cache). Measured: tq2_0 / tq1_0 1.7e-2 (bit-identical files; 8.9e-3 before attention's
            // softmax took a polynomial exp), iq2_xxs 4.9e-5, iq3_xxs 1.7e-2, iq3_s 4.9e-5, iq2_xs 1.7e-2,
            // iq2_s 1.3e-2, iq1_s 5.0e-5 (no flip), iq1_m 2.0e-2; llama.cpp's own KV f32 -> f16 switch
            // moves them 1.8-2.8e-2 (fixtures README).
            {"v0.5.0/synth-llama-tq2_0", quant},
            {"v0.5.0/synth-llama-tq1_0", quant},
            {"v0.5.0/synth-llama-iq2_xxs", quant},
            {"v0.5.0/synth-llama-iq3_xxs", quant},
            {"v0.5.0/synth-llama-iq3_s", quant},
            {"v0.5.0/synth-llama-iq2_xs", quant},
            {"v0.5.0/synth-llama-iq2_s", quant},
            {"v0.5.0/synth-llama-iq1_s", quant},
            {"v0.5.0/synth-llama-iq1_m", quant},
            {"v0.5.0/synth-llama3-f16", f16Wide},
            {"v0.5.0/synth-llama3-q4_k_m", quantWide},
            {"v0.5.0/synth-qwen3-f16", f16Wide},
            {"v0.5.0/synth-qwen3-q8_0", quantWide},
            {"v0.5.0/synth-qwen3-q4_k_m", quantWide},
            {"v0.5.0/synth-qwen3moe-f16", f16Wide, tieF16},
            {"v0.5.0/synth-qwen3moe-q8_0", quant, tieQuant},
            {"v0.5.0/synth-gemma3-f16", f16Wide},
            {"v0.5.0/synth-gemma3-q8_0", quant},
            {"v0.5.0/synth-gpt-oss-f16", f16Batch3, tieF16},
            {"v0.5.0/synth-gpt-oss-mxfp4", quantWide, tieQuant},
            {"v0.5.0/synth-glm4moe-f16", f16Batch3, tieF16},
        };
        for (const auto& c : cases) QTest::addRow("%s", c.stem.c_str()) << c;
    }

    void matchesLlamaCpp() {
        QFETCH(Case, c);
        // "v0.5.0/NAME": a third-batch file, under fixtures/v0.5.0/models and v0.5.0/reference.
        const size_t slash = c.stem.rfind('/');
        const std::string batch = slash == std::string::npos ? "" : c.stem.substr(0, slash + 1);
        const std::string name = c.stem.substr(slash == std::string::npos ? 0 : slash + 1);
        const auto modelPath = verdict::test::fixture(batch + "models/" + name + ".gguf");
        const auto refPath = verdict::test::fixture(batch + "reference/" + name + ".json");
        VERDICT_NEED_FIXTURE(modelPath);
        VERDICT_NEED_FIXTURE(refPath);
        VERDICT_NEED_TEST_DEVICE();
        // On a GPU every file opens: qwen3, qwen3moe, gemma3, glm4moe, gpt-oss and deepseek2 run
        // their one forward on the op backend, every weight type (the i-quants, MXFP4 and TQ
        // included) has CUDA kernels; Model::open's refusal of what has none is skipped below.
        const auto refs = loadReference(refPath);
        QVERIFY(!refs.empty());

        ModelOptions mo;
        mo.device = verdict::test::testDevice();
        auto model = Model::open(modelPath.string(), mo);
        if (!model && mo.device != "cpu" && model.error().message.find("no CUDA kernel") != std::string::npos)
            QSKIP(model.error().message.c_str());
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().message.c_str());
        SessionOptions so;
        so.nCtx = 128;  // as the references
        auto session = Session::create(*model, so);
        QVERIFY2(session.ok(), session.ok() ? "" : session.error().message.c_str());
        Session& s = **session;
        // Our router's smallest top-k gap in the last forward pass (CPU only: the GPU dumps nothing,
        // so there every step is compared).
        const int64_t nExpertUsed = (*model)->shape().nExpertUsed;
        double minGap = 1e30;
        if (c.tieGap > 0 && nExpertUsed > 0)
            detail::setDebugHook(s, [&](std::string_view name, int, const float* data, int64_t rows, int64_t cols) {
                if (!isSelectionScore(name) || cols <= nExpertUsed) return;
                for (int64_t r = 0; r < rows; ++r) {
                    std::vector<float> v(data + r * cols, data + (r + 1) * cols);
                    std::nth_element(v.begin(), v.begin() + nExpertUsed, v.end(), std::greater<float>());
                    const float kPlus1 = v[static_cast<size_t>(nExpertUsed)];
                    const float kth = *std::min_element(v.begin(), v.begin() + nExpertUsed);
                    minGap = std::min(minGap, static_cast<double>(kth) - kPlus1);
                }
            });

        double maxStep = 0, maxBatch = 0;
        int matched = 0, compared = 0, stepsCompared = 0, stepsTotal = 0;
        for (size_t pi = 0; pi < refs.size(); ++pi) {
            const PromptRef& p = refs[pi];
            QCOMPARE(p.steps.size(), p.genIds.size() + 1);
            stepsTotal += static_cast<int>(p.steps.size());

            // 1. step by step. A step out of tolerance at or after a step where our router saw a
            // near-tie is where the paths parted (see Case::tieGap): the prompt is compared up to
            // there (`until`), not failed.
            s.clear();
            size_t until = p.steps.size();
            size_t firstTie = p.steps.size();  // first step with a routing near-tie
            double tieAt = 0;
            for (size_t k = 0; k < p.steps.size(); ++k) {
                minGap = 1e30;
                auto r = k == 0 ? s.evaluate(p.promptIds)
                                : s.evaluate(std::span<const int32_t>(&p.genIds[k - 1], 1));
                QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
                QCOMPARE(s.nPast() - 1, int64_t(p.steps[k].pos));
                if (minGap < c.tieGap && firstTie == p.steps.size()) {
                    firstTie = k;
                    tieAt = minGap;
                }
                bool ok = true;
                int badId = -1;
                const double d = compareStep(p.steps[k], r->last(), c.tol, ok, badId);
                if (!ok && firstTie <= k) {
                    qInfo("%s: prompt %zu: step %zu is off by %.3g after our router's near-tie at step %zu (gap %.3g < "
                          "%.3g): the paths part there, the rest of this prompt is not compared",
                          c.stem.c_str(), pi, k, d, firstTie, tieAt, c.tieGap);
                    until = k;
                    break;
                }
                maxStep = std::max(maxStep, d);
                ++stepsCompared;
                if (!ok) {
                    const auto msg = QString("prompt %1 step %2: logit of token %3 is off by more than the tolerance "
                                             "(max |d| so far %4)")
                                         .arg(pi).arg(k).arg(badId).arg(maxStep);
                    QFAIL(qPrintable(msg));
                }
            }

            // 2. one batch, logits at every position (the same steps, the same rule)
            s.clear();
            std::vector<int32_t> all = p.promptIds;
            all.insert(all.end(), p.genIds.begin(), p.genIds.end() - 1);
            auto view = s.evaluate(all, true);
            QVERIFY2(view.ok(), view.ok() ? "" : view.error().message.c_str());
            for (size_t k = 0; k < std::min(until, p.steps.size() - 1); ++k) {
                bool ok = true;
                int badId = -1;
                const double d = compareStep(p.steps[k], view->row(p.steps[k].pos), c.tol, ok, badId);
                if (!ok && firstTie <= k) break;
                maxBatch = std::max(maxBatch, d);
                if (!ok) QFAIL(qPrintable(QString("batched: prompt %1 step %2 token %3 out of tolerance").arg(pi).arg(k).arg(badId)));
            }

            // 3. free-running greedy
            s.clear();
            GenerateConfig g;
            g.maxTokens = static_cast<int32_t>(p.genIds.size());
            g.sampling = SamplingParams::greedy();
            g.stopAtEos = false;
            auto gen = s.generate(p.promptIds, g);
            QVERIFY2(gen.ok(), gen.ok() ? "" : gen.error().message.c_str());
            QCOMPARE(gen->tokens.size(), p.genIds.size());
            for (size_t k = 0; k < std::min(until, p.genIds.size()); ++k) {
                if (p.steps[k].margin < c.tol.abs + c.tol.rel * std::fabs(p.steps[k].top1))
                    break;  // near tie in the reference: order may flip, the paths may part here
                ++compared;
                if (gen->tokens[k] != p.genIds[k])
                    QFAIL(qPrintable(QString("greedy: prompt %1 step %2: got %3, llama.cpp %4 (gap %5)")
                                         .arg(pi).arg(k).arg(gen->tokens[k]).arg(p.genIds[k]).arg(p.steps[k].margin)));
                ++matched;
            }
        }
        qInfo("%s | %.3g | %.3g | %d/%d | steps %d/%d", c.stem.c_str(), maxStep, maxBatch, matched, compared,
              stepsCompared, stepsTotal);
        // The tie rule must not hollow the test out: most steps are still compared.
        QVERIFY2(stepsCompared * 3 >= stepsTotal * 2, "fewer than two thirds of the steps compared before routing near-ties");
        if (c.stem == "stories260K") QCOMPARE(matched, 72);  // all 24 tokens of all three prompts
    }

    // The CPU kernels' load-time repacking (Model::open, VERDICT_CPU_REPACK) of the 32-element
    // formats changes where the weights are read from, not one bit of the logits: dense, MoE
    // (expert stacks), MLA (whose row-wise attn_kv_b readers keep the original) and MXFP4 files,
    // batched and one token at a time, against the same file read in place. (The Q4_K, Q6_K, F16 and
    // BF16 panels have numerics of their own: those files are held to llama.cpp's logits above, packed.)
    void repackingKeepsTheLogits_data() {
        QTest::addColumn<QString>("stem");
        for (const char* s : {"models/synth-llama-q4_0", "models/synth-llama-moe-q8_0", "models/synth-deepseek2-q8_0",
                              "v0.5.0/models/synth-gpt-oss-mxfp4", "v0.5.0/models/synth-qwen3moe-q8_0"})
            QTest::newRow(s) << QString(s);
    }
    void repackingKeepsTheLogits() {
        QFETCH(QString, stem);
        const auto modelPath = verdict::test::fixture(stem.toStdString() + ".gguf");
        VERDICT_NEED_FIXTURE(modelPath);
        if (verdict::test::testDevice() != "cpu") QSKIP("a CPU matter");
        auto run = [&](bool repack, uint64_t& repacked) {
            if (repack)
                qunsetenv("VERDICT_CPU_REPACK");
            else
                qputenv("VERDICT_CPU_REPACK", "0");
            auto model = Model::open(modelPath.string(), ModelOptions{});
            qunsetenv("VERDICT_CPU_REPACK");
            std::vector<float> out;
            if (!model) {
                qWarning("%s", model.error().message.c_str());
                return out;
            }
            SessionOptions so;
            so.nCtx = 64;
            auto session = Session::create(*model, so);
            if (!session) return out;
            std::vector<int32_t> ids;
            for (int i = 0; i < 20; ++i) ids.push_back((i * 37 + 5) % static_cast<int32_t>((*model)->shape().nVocab));
            auto all = (*session)->evaluate(ids, true);
            if (!all) return out;
            out.assign(all->data, all->data + all->rows * all->nVocab);
            for (int i = 0; i < 4; ++i) {  // then decode steps
                auto one = (*session)->evaluate(std::span<const int32_t>(&ids[static_cast<size_t>(i)], 1));
                if (!one) return std::vector<float>{};
                out.insert(out.end(), one->last().begin(), one->last().end());
            }
            repacked = (*session)->memoryUse().repackedBytes;
            return out;
        };
        uint64_t packedBytes = 0, plainBytes = 0;
        const auto plain = run(false, plainBytes);
        const auto packed = run(true, packedBytes);
        QVERIFY(!plain.empty());
        QCOMPARE(plainBytes, uint64_t{0});
        if (cpu::canPack(tensor::TensorType::Q8_0)) QVERIFY(packedBytes > 0);
        QCOMPARE(packed.size(), plain.size());
        QVERIFY2(std::memcmp(packed.data(), plain.data(), plain.size() * sizeof(float)) == 0,
                 "the logits of repacked weights differ from those read in place");
    }
};

QTEST_GUILESS_MAIN(TestGoldenLogits)
#include "test_golden_logits.moc"
