// Perplexity of a model over a text, and the KL-divergence of one model's token distributions
// against a base model's on the same text — both defined exactly as llama.cpp's
// llama-perplexity defines them (tools/perplexity/perplexity.cpp, functions perplexity() and
// kl_divergence(), ggml-org/llama.cpp), so the figures can be compared with published ones:
//
//   * the text is tokenized with BOS (as the vocabulary asks) and cut into whole chunks of nCtx
//     tokens (a partial last chunk is dropped; at least 2 chunks' worth of tokens are required);
//   * each chunk is evaluated from an empty KV cache, its first token replaced by BOS when the
//     vocabulary adds one;
//   * only the second half is scored: the logits at positions nCtx/2 ... nCtx-2 predict the tokens
//     at nCtx/2+1 ... nCtx-1, i.e. nCtx - 1 - nCtx/2 tokens per chunk (255 for nCtx = 512);
//   * PPL = exp(mean NLL); its ± is the delta-method standard error PPL · sqrt(var(NLL)/(N-1))
//     with var the population variance of the per-token NLLs (llama-perplexity's "Final estimate:
//     PPL = x +/- y").
//
// KL-divergence: KL(base ‖ model) = Σ_v p_base(v) · (log p_base(v) − log p_model(v)) at every
// scored position; "same top p" = fraction of positions where both argmaxes agree; Δp = p_model −
// p_base of the correct next token. Means carry llama-perplexity's uncertainty
// sqrt((mean(x²) − mean(x)²)/(N−1)) (0 for N ≤ 10); percentiles interpolate linearly between the
// sorted values. Unlike llama-perplexity (which stores the base's log-probabilities as 16-bit
// values in a file and skips log p_base ≤ −16), both models run in-process chunk by chunk and
// every probability is used in double precision, so a model against itself gives exactly 0.
//
// Failure contract: every function returns an Error (nothing throws) for: a text without enough
// tokens (the message says how many were needed and found), nCtx < 4, a model without a
// tokenizer (text overloads), models whose vocabularies differ in size or tokenize the text
// differently (KLD), a session that cannot be allocated, and cancellation through `progress`.
#pragma once

#include "verdict/engine/model.h"
#include "verdict/engine/result.h"
#include "verdict/engine/session.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace verdict {

struct PerplexityOptions {
    int64_t nCtx = 512;          // tokens per chunk (llama-perplexity -c); >= 4
    int64_t maxChunks = 0;       // <= 0: every whole chunk of the text (llama-perplexity --chunks)
    KvType kvType = KvType::F32; // KV cache element type of the evaluating session(s)
    // Called after each chunk with (chunks done, chunks in total); return false to cancel.
    std::function<bool(int64_t done, int64_t total)> progress;
};

struct PerplexityResult {
    double ppl = 0;              // exp(mean NLL) over every scored token
    double pplStderr = 0;        // delta-method standard error of ppl (llama-perplexity's ±)
    double meanNll = 0;          // mean negative log-likelihood, nats per token
    double nllStderr = 0;        // standard error of meanNll
    int64_t nCtx = 0;            // chunk size used
    int64_t textTokens = 0;      // tokens of the whole text (BOS included)
    int64_t chunks = 0;          // chunks evaluated
    int64_t tokensScored = 0;    // chunks * (nCtx - 1 - nCtx/2)
    std::vector<double> chunkPpl;    // PPL of each chunk on its own
    std::vector<double> runningPpl;  // PPL over chunks 1..i (what llama-perplexity prints as [i]x)
    double seconds = 0;          // wall time of evaluation and scoring
    double tokensPerSecond = 0;  // evaluated tokens (chunks * nCtx) per second
};

// Quantiles of a distribution (linear interpolation between sorted values, as llama-perplexity).
struct Quantiles {
    double min = 0, p0_1 = 0, p1 = 0, p5 = 0, p10 = 0, median = 0, p90 = 0, p95 = 0, p99 = 0, p99_9 = 0, max = 0;
};

struct KlDivergenceResult {
    PerplexityResult model;      // PPL of the model under test (chunkPpl etc. filled)
    PerplexityResult base;       // PPL of the base model on the same positions
    double pplRatio = 0;         // PPL(model) / PPL(base) = exp(mean ln ratio)
    double pplRatioStderr = 0;   // delta method over the paired per-token NLL differences
    double lnPplRatio = 0;       // mean(NLL_model − NLL_base)
    double lnPplRatioStderr = 0;
    double meanKld = 0;          // mean KL(base ‖ model), nats
    double meanKldStderr = 0;
    Quantiles kld;               // distribution of the per-position KLD
    double sameTopP = 0;         // fraction (0..1) of positions where both argmaxes agree
    double sameTopPStderr = 0;   // sqrt(p(1−p)/(N−1))
    double meanDeltaP = 0;       // mean of p_model(correct) − p_base(correct), probability units
    double meanDeltaPStderr = 0;
    double rmsDeltaP = 0;        // sqrt(mean Δp²)
    double rmsDeltaPStderr = 0;  // 0.5/rms · stderr(mean Δp²), as llama-perplexity
    Quantiles deltaP;            // distribution of Δp
    std::vector<double> chunkKld;  // mean KLD of each chunk on its own
    int64_t nCtx = 0;
    int64_t chunks = 0;
    int64_t tokensScored = 0;
    double seconds = 0;          // wall time, both models
    double tokensPerSecond = 0;  // chunk tokens per second, both models together
};

// Perplexity over ready-made tokens (the caller added BOS). `addBos`: replace the first token of
// every chunk by the model's BOS (llama-perplexity does when the vocabulary adds BOS).
Result<PerplexityResult> computePerplexity(const std::shared_ptr<const Model>& model,
                                           std::span<const int32_t> tokens, bool addBos,
                                           const PerplexityOptions& options = {});

// Tokenizes `text` with the model's special tokens (BOS as the vocabulary asks), then as above.
Result<PerplexityResult> computePerplexity(const std::shared_ptr<const Model>& model, std::string_view text,
                                           const PerplexityOptions& options = {});

// KL-divergence of `model` against `base` on the same tokens. Both must have the same n_vocab.
Result<KlDivergenceResult> computeKlDivergence(const std::shared_ptr<const Model>& model,
                                               const std::shared_ptr<const Model>& base,
                                               std::span<const int32_t> tokens, bool addBos,
                                               const PerplexityOptions& options = {});

// Tokenizes `text` with both models; they must produce the same ids (else an Error naming the
// first differing position).
Result<KlDivergenceResult> computeKlDivergence(const std::shared_ptr<const Model>& model,
                                               const std::shared_ptr<const Model>& base, std::string_view text,
                                               const PerplexityOptions& options = {});

// Whether the model's tokenizer adds BOS to a text (false without a tokenizer or a BOS token).
bool addsBos(const Model& model);

}  // namespace verdict
