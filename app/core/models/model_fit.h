// The fit badge: will this model run on this device at this context length?
//
//   need = weights + KV cache at ctx + compute scratch at ctx (the model card's MemoryEstimate,
//          see verdict info / docs/cli.md) + a fixed overhead for the runtime (kOverhead*)
//   have = the device's free memory now (CPU: /proc/meminfo MemAvailable; CUDA: cudaMemGetInfo free)
//
//   Fits     need <= 80 % of have
//   Tight    80 % < need <= 100 % of have (it loads, but other programs, the estimate's error or
//            a longer prompt can push it over; expect swapping on a CPU)
//   WontFit  need > have
//
// Why 80 %: the estimate is approximate (the scratch figure models one 512-token batch, not every
// allocator rounding), free memory moves while the model loads (browsers, the desktop, another
// model in the comparison), and on a CPU the mmapped weights compete with the page cache that
// MemAvailable counts as free. A fifth of headroom absorbs that; beyond it the badge says "tight"
// rather than pretending to know.
// A device that reports no free memory (freeBytes 0, e.g. /proc/meminfo unreadable) is Tight
// with a reason saying free memory is unknown: neither a promise nor a refusal.
#pragma once

#include "verdict/engine/devices.h"
#include "verdict/engine/model_card.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::core {

// Unsupported: this build cannot run the model at all, whatever the memory (an architecture,
// weight type or tokenizer it lacks: verdict/engine/model_support.h); the reason names them.
enum class Fit { Fits, Tight, WontFit, Unsupported };

// "fits", "tight", "wont_fit", "unsupported" (the CLI's JSON values).
std::string_view fitName(Fit fit);

// Share of free memory (percent) a model may need and still be called Fits.
inline constexpr uint64_t kFitsPercent = 80;
// Runtime overhead beyond the card's estimate. CPU: thread stacks and pools, the tokenizer's
// tables, the sampler's buffers, the process itself. CUDA: the CUDA context and cuBLAS
// workspace, which take 300-500 MB on current drivers before the first allocation.
inline constexpr uint64_t kOverheadCpuBytes = 256ull << 20;
inline constexpr uint64_t kOverheadCudaBytes = 512ull << 20;

struct FitVerdict {
    Fit fit = Fit::WontFit;
    uint64_t needBytes = 0;   // weights + KV + compute + overhead
    uint64_t haveBytes = 0;   // device free memory
    std::string reason;       // one sentence: "needs 5.1 GB of 3.9 GB free on cuda:0"
};

// Memory the card needs at `ctx` tokens (without the overhead): the card's memoryAtCtx when it
// was described at this ctx, else weights + kvBytesPerToken * ctx + the scratch estimate
// recomputed for ctx from the card's shape (the same formula as the engine's model card).
MemoryEstimate estimateAtCtx(const ModelCard& card, uint64_t ctx);

// Pure: no I/O. ctx 0 means the card's training context. Unsupported comes first (the memory
// figures are still filled in).
FitVerdict assessFit(const ModelCard& card, uint64_t ctx, const DeviceInfo& device);

// "5.1 GB", "850 MB", "12 KB" (decimal units, as disk and memory sizes are usually shown).
std::string formatDecimalBytes(uint64_t bytes);

}  // namespace verdict::core
