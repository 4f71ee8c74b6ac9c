// Engine-internal state of a Session: the KV cache, the architecture's scratch buffers, the
// logits buffer and the cached token sequence.
#pragma once

#include "arch/architecture.h"
#include "model/model_impl.h"
#include "session/kv_cache.h"
#include "verdict/engine/session.h"

#include <memory>
#include <span>
#include <vector>

namespace verdict::detail {

struct SessionImpl {
    std::shared_ptr<const Model> model;
    const ModelImpl* m = nullptr;
    SessionOptions options;
    int64_t nCtx = 0;
    int64_t nBatch = 0;
    std::unique_ptr<session::KvCache> kv;
    std::unique_ptr<arch::ArchScratch> scratch;
    std::vector<float> logits;        // [rows][nVocab]: 1 row, or every row of an allLogits call
    std::vector<int32_t> tokens;      // the sequence held in the cache
    Timings timings;
    arch::DebugHook debug;            // tests: named intermediates of every forward pass

    // Checks ids and room, then runs the forward pass over `tokens` in chunks of nBatch.
    Result<LogitsView> evaluate(std::span<const int32_t> input, bool allLogits);
    // Length of the common prefix of the cache and `seq`.
    int64_t commonPrefix(std::span<const int32_t> seq) const;
    void truncate(int64_t n);
};

// Set a hook that sees every named intermediate (see arch::DebugHook); empty to remove.
void setDebugHook(Session& session, arch::DebugHook hook);

}  // namespace verdict::detail
