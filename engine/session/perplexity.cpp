// Perplexity and KL-divergence as llama-perplexity computes them (see perplexity.h for the
// definitions and the source: ggml-org/llama.cpp tools/perplexity/perplexity.cpp, perplexity()
// and kl_divergence()). Shapes: a chunk is nCtx tokens; its logits are [nCtx][nVocab]; the scored
// rows are first = nCtx/2 ... nCtx-2, each predicting the token one position later.
#include "verdict/engine/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace verdict {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kMinCtx = 4;

double secondsSince(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Which tokens are evaluated and scored.
struct ChunkPlan {
    int64_t nCtx = 0;
    int64_t first = 0;       // first scored row of a chunk (nCtx/2)
    int64_t scored = 0;      // scored rows per chunk: nCtx - 1 - first
    int64_t chunks = 0;
};

Result<ChunkPlan> planChunks(int64_t nTokens, const PerplexityOptions& o) {
    if (o.nCtx < kMinCtx)
        return Error{"perplexity: the context (chunk size) must be at least " + std::to_string(kMinCtx)
                     + " tokens, got " + std::to_string(o.nCtx)};
    // llama-perplexity refuses texts shorter than two contexts (it needs 2*n_ctx tokens).
    if (nTokens < 2 * o.nCtx)
        return Error{"the text tokenizes to only " + std::to_string(nTokens) + " tokens; perplexity with a context of "
                     + std::to_string(o.nCtx) + " needs at least " + std::to_string(2 * o.nCtx) + " tokens"};
    ChunkPlan p;
    p.nCtx = o.nCtx;
    p.first = o.nCtx / 2;
    p.scored = o.nCtx - 1 - p.first;
    p.chunks = nTokens / o.nCtx;
    if (o.maxChunks > 0) p.chunks = std::min(p.chunks, o.maxChunks);
    return p;
}

// Running sums of a per-token quantity.
struct Moments {
    double sum = 0, sum2 = 0;
    int64_t n = 0;
    void add(double x) {
        sum += x;
        sum2 += x * x;
        ++n;
    }
    double mean() const { return n > 0 ? sum / static_cast<double>(n) : 0.0; }
    // sqrt((mean(x²) − mean(x)²)/(n−1)). llama-perplexity's mean_and_uncertainty() reports 0 for
    // n <= 10 (minCount 11); its final PPL estimate only needs n > 1 (minCount 2).
    double stderrOfMean(int64_t minCount = 2) const {
        if (n < minCount || n < 2) return 0.0;
        const double m = mean();
        const double var = sum2 / static_cast<double>(n) - m * m;
        return var > 0 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
    }
};

// log Σ exp(row) in double around the row's maximum, and the (first) argmax.
struct RowNorm {
    double logZ = 0;
    int64_t argmax = 0;
};

RowNorm normalise(const float* row, int64_t nVocab) {
    float mx = row[0];
    int64_t arg = 0;
    for (int64_t v = 1; v < nVocab; ++v)
        if (row[v] > mx) {
            mx = row[v];
            arg = v;
        }
    double s = 0;
    for (int64_t v = 0; v < nVocab; ++v) s += std::exp(static_cast<double>(row[v]) - mx);
    return {static_cast<double>(mx) + std::log(s), arg};
}

Result<std::unique_ptr<Session>> chunkSession(const std::shared_ptr<const Model>& model, const ChunkPlan& p,
                                              const PerplexityOptions& o) {
    SessionOptions so;
    so.nCtx = p.nCtx;
    so.kvType = o.kvType;
    so.nBatch = std::min<int64_t>(512, p.nCtx);
    auto s = Session::create(model, so);
    if (!s) return Error{"perplexity: cannot create a session of " + std::to_string(p.nCtx)
                         + " tokens: " + s.error().message};
    return s;
}

// Evaluates chunk `c` from an empty cache, its first token replaced by `bos` (when >= 0), and
// returns the logits of every position.
Result<LogitsView> evaluateChunk(Session& session, std::span<const int32_t> tokens, const ChunkPlan& p, int64_t c,
                                 int32_t bos) {
    std::vector<int32_t> chunk(tokens.begin() + c * p.nCtx, tokens.begin() + (c + 1) * p.nCtx);
    if (bos >= 0) chunk[0] = bos;
    session.clear();
    auto view = session.evaluate(chunk, true);
    if (!view) return Error{"perplexity: chunk " + std::to_string(c + 1) + ": " + view.error().message};
    return view;
}

double quantile(const std::vector<double>& sorted, double fraction) {
    if (sorted.empty()) return 0.0;
    if (fraction <= 0) return sorted.front();
    if (fraction >= 1) return sorted.back();
    const double pos = fraction * static_cast<double>(sorted.size() - 1);
    const auto i = static_cast<size_t>(pos);
    const double f = pos - static_cast<double>(i);
    return (1 - f) * sorted[i] + f * sorted[std::min(i + 1, sorted.size() - 1)];
}

Quantiles quantiles(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    Quantiles q;
    q.min = quantile(values, 0);
    q.p0_1 = quantile(values, 0.001);
    q.p1 = quantile(values, 0.01);
    q.p5 = quantile(values, 0.05);
    q.p10 = quantile(values, 0.10);
    q.median = quantile(values, 0.5);  // = the mean of the two middle values for an even count
    q.p90 = quantile(values, 0.90);
    q.p95 = quantile(values, 0.95);
    q.p99 = quantile(values, 0.99);
    q.p99_9 = quantile(values, 0.999);
    q.max = quantile(values, 1);
    return q;
}

void finishPerplexity(PerplexityResult& r, const Moments& nll, const ChunkPlan& p, int64_t textTokens,
                      double seconds) {
    r.nCtx = p.nCtx;
    r.textTokens = textTokens;
    r.chunks = static_cast<int64_t>(r.chunkPpl.size());
    r.tokensScored = nll.n;
    r.meanNll = nll.mean();
    r.nllStderr = nll.stderrOfMean();
    r.ppl = std::exp(r.meanNll);
    r.pplStderr = r.ppl * r.nllStderr;  // d exp(x)/dx = exp(x)
    r.seconds = seconds;
    r.tokensPerSecond = seconds > 0 ? static_cast<double>(r.chunks * p.nCtx) / seconds : 0.0;
}

Error cancelled(int64_t done, int64_t total) {
    return Error{"perplexity: cancelled after chunk " + std::to_string(done) + " of " + std::to_string(total)};
}

// The same ids for both models, or an Error naming the first difference.
Result<void> sameTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i)
        if (a[i] != b[i])
            return Error{"the two models tokenize the text differently: first difference at token " + std::to_string(i)
                         + " (id " + std::to_string(a[i]) + " vs " + std::to_string(b[i]) + ")"};
    if (a.size() != b.size())
        return Error{"the two models tokenize the text differently: " + std::to_string(a.size()) + " vs "
                     + std::to_string(b.size()) + " tokens"};
    return okResult();
}

Result<std::vector<int32_t>> tokenizeText(const Model& model, std::string_view text) {
    if (!model.hasTokenizer()) return Error{"perplexity: " + model.path() + " has no usable tokenizer"};
    auto ids = model.tokenize(text, true, false);  // llama-perplexity: common_tokenize(ctx, text, true)
    if (!ids) return ids.error();
    return ids;
}

}  // namespace

bool addsBos(const Model& model) {
    if (!model.hasTokenizer() || model.bos() < 0) return false;
    auto ids = model.tokenize("a", true, false);
    return ids && !ids->empty() && ids->front() == model.bos();
}

Result<PerplexityResult> computePerplexity(const std::shared_ptr<const Model>& model,
                                           std::span<const int32_t> tokens, bool addBos,
                                           const PerplexityOptions& options) {
    if (!model) return Error{"perplexity: no model"};
    auto plan = planChunks(static_cast<int64_t>(tokens.size()), options);
    if (!plan) return plan.error();
    const ChunkPlan& p = *plan;
    auto session = chunkSession(model, p, options);
    if (!session) return session.error();
    const int32_t bos = addBos ? model->bos() : -1;
    const auto t0 = Clock::now();

    PerplexityResult r;
    Moments total;
    for (int64_t c = 0; c < p.chunks; ++c) {
        auto view = evaluateChunk(**session, tokens, p, c, bos);
        if (!view) return view.error();
        Moments chunk;
        for (int64_t j = p.first; j < p.nCtx - 1; ++j) {
            const float* row = view->data + j * view->nVocab;
            const int32_t next = tokens[static_cast<size_t>(c * p.nCtx + j + 1)];
            const double nll = normalise(row, view->nVocab).logZ - static_cast<double>(row[next]);
            chunk.add(nll);
            total.add(nll);
        }
        r.chunkPpl.push_back(std::exp(chunk.mean()));
        r.runningPpl.push_back(std::exp(total.mean()));
        if (options.progress && !options.progress(c + 1, p.chunks)) return cancelled(c + 1, p.chunks);
    }
    finishPerplexity(r, total, p, static_cast<int64_t>(tokens.size()), secondsSince(t0));
    return r;
}

Result<PerplexityResult> computePerplexity(const std::shared_ptr<const Model>& model, std::string_view text,
                                           const PerplexityOptions& options) {
    if (!model) return Error{"perplexity: no model"};
    auto ids = tokenizeText(*model, text);
    if (!ids) return ids.error();
    return computePerplexity(model, *ids, addsBos(*model), options);
}

Result<KlDivergenceResult> computeKlDivergence(const std::shared_ptr<const Model>& model,
                                               const std::shared_ptr<const Model>& base,
                                               std::span<const int32_t> tokens, bool addBos,
                                               const PerplexityOptions& options) {
    if (!model || !base) return Error{"kl-divergence: no model"};
    const int64_t nVocab = model->shape().nVocab;
    if (nVocab != base->shape().nVocab)
        return Error{"kl-divergence: the vocabularies differ: " + model->path() + " has "
                     + std::to_string(nVocab) + " tokens, " + base->path() + " has "
                     + std::to_string(base->shape().nVocab)};
    if (addBos && model->bos() != base->bos())
        return Error{"kl-divergence: the models have different BOS tokens (" + std::to_string(model->bos()) + " vs "
                     + std::to_string(base->bos()) + ")"};
    auto plan = planChunks(static_cast<int64_t>(tokens.size()), options);
    if (!plan) return plan.error();
    const ChunkPlan& p = *plan;
    auto sessionModel = chunkSession(model, p, options);
    if (!sessionModel) return sessionModel.error();
    auto sessionBase = chunkSession(base, p, options);
    if (!sessionBase) return sessionBase.error();
    const int32_t bos = addBos ? model->bos() : -1;
    const auto t0 = Clock::now();

    // The base's raw logits of the scored rows, kept while the model evaluates the same chunk
    // (one chunk at a time: [scored][nVocab] floats, no file).
    std::vector<float> baseRows(static_cast<size_t>(p.scored * nVocab));
    std::vector<double> baseLogZ(static_cast<size_t>(p.scored));
    std::vector<int64_t> baseArgmax(static_cast<size_t>(p.scored));

    KlDivergenceResult r;
    Moments nllModel, nllBase, nllDiff, kld, dp, dp2;
    int64_t sameTop = 0;
    std::vector<double> kldValues, dpValues;
    kldValues.reserve(static_cast<size_t>(p.chunks * p.scored));
    dpValues.reserve(static_cast<size_t>(p.chunks * p.scored));

    for (int64_t c = 0; c < p.chunks; ++c) {
        auto vb = evaluateChunk(**sessionBase, tokens, p, c, bos);
        if (!vb) return Error{"kl-divergence (base " + base->path() + "): " + vb.error().message};
        for (int64_t j = 0; j < p.scored; ++j) {
            const float* row = vb->data + (p.first + j) * nVocab;
            std::copy(row, row + nVocab, baseRows.begin() + j * nVocab);
            const RowNorm n = normalise(row, nVocab);
            baseLogZ[static_cast<size_t>(j)] = n.logZ;
            baseArgmax[static_cast<size_t>(j)] = n.argmax;
        }
        auto vm = evaluateChunk(**sessionModel, tokens, p, c, bos);
        if (!vm) return Error{"kl-divergence (model " + model->path() + "): " + vm.error().message};

        Moments chunkNllModel, chunkNllBase, chunkKld;
        for (int64_t j = 0; j < p.scored; ++j) {
            const float* rm = vm->data + (p.first + j) * nVocab;
            const float* rb = baseRows.data() + j * nVocab;
            const RowNorm nm = normalise(rm, nVocab);
            const double zb = baseLogZ[static_cast<size_t>(j)];
            const int32_t next = tokens[static_cast<size_t>(c * p.nCtx + p.first + j + 1)];
            const double lm = nm.logZ - static_cast<double>(rm[next]);  // NLL of the model
            const double lb = zb - static_cast<double>(rb[next]);       // NLL of the base
            double k = 0;
            for (int64_t v = 0; v < nVocab; ++v) {
                const double logPb = static_cast<double>(rb[v]) - zb;
                const double logPm = static_cast<double>(rm[v]) - nm.logZ;
                k += std::exp(logPb) * (logPb - logPm);
            }
            const double deltaP = std::exp(-lm) - std::exp(-lb);
            nllModel.add(lm);
            nllBase.add(lb);
            nllDiff.add(lm - lb);
            kld.add(k);
            dp.add(deltaP);
            dp2.add(deltaP * deltaP);
            chunkNllModel.add(lm);
            chunkNllBase.add(lb);
            chunkKld.add(k);
            kldValues.push_back(k);
            dpValues.push_back(deltaP);
            if (nm.argmax == baseArgmax[static_cast<size_t>(j)]) ++sameTop;
        }
        r.model.chunkPpl.push_back(std::exp(chunkNllModel.mean()));
        r.model.runningPpl.push_back(std::exp(nllModel.mean()));
        r.base.chunkPpl.push_back(std::exp(chunkNllBase.mean()));
        r.base.runningPpl.push_back(std::exp(nllBase.mean()));
        r.chunkKld.push_back(chunkKld.mean());
        if (options.progress && !options.progress(c + 1, p.chunks)) return cancelled(c + 1, p.chunks);
    }

    const double seconds = secondsSince(t0);
    const auto textTokens = static_cast<int64_t>(tokens.size());
    finishPerplexity(r.model, nllModel, p, textTokens, seconds);
    finishPerplexity(r.base, nllBase, p, textTokens, seconds);
    constexpr int64_t kMinForUncertainty = 11;  // llama-perplexity: uncertainty only for count > 10
    r.lnPplRatio = nllDiff.mean();
    r.lnPplRatioStderr = nllDiff.stderrOfMean(kMinForUncertainty);
    r.pplRatio = std::exp(r.lnPplRatio);
    r.pplRatioStderr = r.pplRatio * r.lnPplRatioStderr;
    r.meanKld = kld.mean();
    r.meanKldStderr = kld.stderrOfMean(kMinForUncertainty);
    r.kld = quantiles(std::move(kldValues));
    const auto n = static_cast<double>(kld.n);
    r.sameTopP = n > 0 ? static_cast<double>(sameTop) / n : 0.0;
    r.sameTopPStderr = n > 1 ? std::sqrt(r.sameTopP * (1 - r.sameTopP) / (n - 1)) : 0.0;
    r.meanDeltaP = dp.mean();
    r.meanDeltaPStderr = dp.stderrOfMean(kMinForUncertainty);
    r.rmsDeltaP = std::sqrt(dp2.mean());
    r.rmsDeltaPStderr = r.rmsDeltaP > 0 ? 0.5 / r.rmsDeltaP * dp2.stderrOfMean(kMinForUncertainty) : 0.0;
    r.deltaP = quantiles(std::move(dpValues));
    r.nCtx = p.nCtx;
    r.chunks = static_cast<int64_t>(r.chunkKld.size());
    r.tokensScored = kld.n;
    r.seconds = seconds;
    r.tokensPerSecond = seconds > 0 ? static_cast<double>(r.chunks * p.nCtx) / seconds : 0.0;
    return r;
}

Result<KlDivergenceResult> computeKlDivergence(const std::shared_ptr<const Model>& model,
                                               const std::shared_ptr<const Model>& base, std::string_view text,
                                               const PerplexityOptions& options) {
    if (!model || !base) return Error{"kl-divergence: no model"};
    auto ids = tokenizeText(*model, text);
    if (!ids) return ids.error();
    auto baseIds = tokenizeText(*base, text);
    if (!baseIds) return baseIds.error();
    if (auto same = sameTokens(*ids, *baseIds); !same) return Error{"kl-divergence: " + same.error().message};
    return computeKlDivergence(model, base, *ids, addsBos(*model), options);
}

}  // namespace verdict
