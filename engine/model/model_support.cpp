#include "verdict/engine/model_support.h"

#include "arch/arch_registry.h"
#include "backend/cpu/kernels.h"
#include "tensor/tensor_type.h"
#include "tokenizer/vocab.h"

#include <cstdio>

namespace verdict {

SupportReport checkCpuSupport(const ModelCard& card) {
    SupportReport r;
    if (!arch::findArchitecture(card.arch)) {
        std::string list;
        for (const std::string& n : arch::supportedArchitectures()) list += (list.empty() ? "" : ", ") + n;
        r.missing.push_back("architecture '" + card.arch + "' (supported: " + list + ")");
    }
    for (const auto& [name, bytes] : card.tensorTypeBytes) {
        const auto type = tensor::typeFromName(name);
        if (type && cpu::canCompute(*type)) continue;
        char size[32];
        std::snprintf(size, sizeof size, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
        r.missing.push_back("tensor type " + name + " (" + size + " of weights), which the CPU engine cannot compute");
    }
    if (card.tokenizerModel.empty())
        r.missing.push_back("a tokenizer (no tokenizer.ggml.model)");
    else if (auto why = tok::Vocab::unsupported(card.tokenizerModel, card.tokenizerPre))
        r.missing.push_back(*why);
    return r;
}

}  // namespace verdict
