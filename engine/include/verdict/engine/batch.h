// Batched decoding: one forward pass advances several sessions of the same model by one token
// each, so every weight matrix is read once per step for all of them (a matmul over N rows
// instead of N matrix-vector products). This is what a latency sweep at batch 1..32 and a
// server's continuous batching run on.
//
// Every session keeps its own KV cache and position; the rows of one pass may be at different
// positions (prompts of different lengths). The logits equal those each session gets decoding
// alone, up to float summation order in the matmul kernels (tests/engine/test_batch_decode.cpp
// checks 1e-4).
//
// The pass's activation buffers (up to kMaxBatchRows rows; larger batches run as several
// passes) belong to the calling thread and are reused by its next batch; they are released when
// the thread ends. Sessions must not be used by another thread during a call.
#pragma once

#include "verdict/engine/generate.h"
#include "verdict/engine/result.h"
#include "verdict/engine/session.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace verdict {

inline constexpr int64_t kMaxBatchRows = 64;  // rows of one forward pass

// Appends tokens[i] to sessions[i] for every i in one forward pass and returns each session's
// logits for its new last position (view i is valid until sessions[i]'s next call).
// Fails, leaving every session unchanged, when: the spans are empty or differ in length, a session
// is null or appears twice, the sessions do not share one Model, a token id is outside the
// vocabulary, or a session's context is full. Messages name the index of the offending entry.
Result<std::vector<LogitsView>> decodeBatch(std::span<Session* const> sessions, std::span<const int32_t> tokens);

// One continuation to score on one session (see logprobsBatch).
struct LogprobsRequest {
    std::span<const int32_t> context;       // non-empty (at least a BOS token)
    std::span<const int32_t> continuation;  // non-empty
};

// Scores requests[i] on sessions[i] as Session::logprobs does (each session keeps the longest
// cached prefix of context + continuation, re-evaluating at least the context's last token), but
// with the rows of every session packed into shared forward passes of up to kMaxBatchRows rows,
// so every weight matrix is read once per pass for all of them: loglikelihood multiple-choice
// items of a suite run score several items at once.
//
// On the CPU every row is computed the same way whatever else shares its pass (the matmul kernels
// and the per-row attention do not depend on the pass's other rows), so result i is bit-identical
// to logprobsBatch over sessions[i] alone, for any batch and any split into passes, and equals
// Session::logprobs up to float summation order (tests/engine/test_batch_decode.cpp checks both;
// on the fixture models they are equal too). On a GPU the pass's row count picks the kernel
// (matvec, tensor-core tiles, cuBLAS), so results agree within the GPU backend's tolerance
// (tests/gpu/test_gpu_backend.cpp). Afterwards sessions[i] caches context +
// continuation. Fails before any pass, leaving every session as it was, on the conditions of
// decodeBatch that apply (null / repeated sessions, mixed models), a size mismatch, an empty span,
// a request longer than its session's context or an id outside the vocabulary (messages name the
// index of the offending request); a pass that fails (out of memory) leaves each session holding
// only the prefix it kept.
Result<std::vector<LogprobsResult>> logprobsBatch(std::span<Session* const> sessions,
                                                  std::span<const LogprobsRequest> requests);

// What an on-token callback asks for.
enum class BatchAction {
    Continue,      // go on
    StopSequence,  // stop this sequence (StopReason::Callback), keep the others going
    StopAll,       // stop every sequence still running (StopReason::Callback for all of them)
};

struct BatchCallbacks {
    // Called after every generated token of sequence `seq` (index into the sessions span) with its
    // text piece, at the same point Session::generate calls GenerateConfig::onToken (not for an
    // EOG token that ends the sequence). Empty: always Continue.
    std::function<BatchAction(size_t seq, int32_t token, std::string_view piece)> onToken;
};

// Generates for several sequences at once: sessions[i] is set to prompts[i] (reusing its cached
// prefix, as Session::generate does), the prompts are prefilled one after the other, then every
// running sequence decodes in lockstep through decodeBatch. Each sequence stops on its own, by
// the rules of Session::generate (cfg.maxTokens, EOG when cfg.stopAtEos, cfg.stopStrings,
// ContextFull when its session's context is full, cfg.onToken returning false), or through
// cb.onToken. Result i belongs to sessions[i] and is what Session::generate would return with
// sampling seed cfg.sampling.seed + i (greedy decoding: the same tokens as Session::generate, up
// to the 1e-4 logit tolerance above).
//
// Timings per sequence, filled like Session::generate's: promptTokens / promptMs / prefillTps are
// that sequence's own prefill; ttftMs runs from the start of this call to its first sampled token,
// so with sequential prefill the i-th sequence's TTFT includes the prefills of sequences 0..i-1
// (as a server's would); stepMs[k] is the k-th decode step, from the start of the batched forward
// pass to this sequence's token being sampled. Each session's timings() is set to its result's.
// A sequence stopped by StopAll before its prefill returns no tokens and promptTokens 0.
//
// Fails (before any session is touched) on the conditions of decodeBatch that apply, a size
// mismatch of sessions and prompts, an empty prompt, a prompt longer than its session's context
// or an id outside the vocabulary.
Result<std::vector<GenerateResult>> generateBatch(std::span<Session* const> sessions,
                                                  std::span<const std::vector<int32_t>> prompts,
                                                  const GenerateConfig& cfg, const BatchCallbacks& cb = {});

}  // namespace verdict
