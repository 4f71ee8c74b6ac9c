// Can this build run a model, and if not, exactly what is missing — from its model card, before
// any weight is read (verdict info, the Models screen's badge, verdict discover).
#pragma once

#include "verdict/engine/model_card.h"

#include <string>
#include <vector>

namespace verdict {

struct SupportReport {
    // One line per missing piece, e.g. "architecture 'mamba' (supported: llama, qwen2, ...)",
    // "tensor type iq2_xxs (120.5 MiB of weights)", "tokenizer.ggml.pre = 'x': unknown pre-tokenizer".
    std::vector<std::string> missing;
    bool ok() const { return missing.empty(); }
};

// What the CPU engine of this build lacks for the card's architecture, weight types and
// tokenizer. (The CUDA backend runs a subset: Model::open says which when asked for a GPU.)
SupportReport checkCpuSupport(const ModelCard& card);

}  // namespace verdict
