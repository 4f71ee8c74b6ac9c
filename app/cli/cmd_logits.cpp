// verdict logits MODEL --tokens 1,415,2217 [--device DEV] [--gpu-layers N] [--json]: evaluates exactly that token sequence (no BOS
// added; teacher forcing, one batch) and prints the logits at every position.
//   --json: {"n_vocab": N, "tokens": [ids], "logits": [[N floats] per position]}
//   text:   per position the token and its 5 most likely successors.
// Floats are printed with the shortest text that reads back to the same f32.
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/device_option.h"
#include "cli/options.h"
#include "core/run/device_check.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <numeric>

namespace verdict::cli {
namespace {

void appendFloat(std::string& out, float v) {
    char buf[32];
    if (!std::isfinite(v)) {  // JSON has no inf/nan
        out += v > 0 ? "1e999" : (v < 0 ? "-1e999" : "null");
        return;
    }
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? p : buf);
}

struct LogitsSettings {
    std::vector<int64_t> tokens;
    int threads = 0;
    std::string kvType = "f32";
};

const OptionTable<LogitsSettings>& logitsOptions() {
    using S = LogitsSettings;
    static const OptionTable<S> table = {
        intListOption<S>("tokens", "IDS", "comma-separated token ids to evaluate (required; no BOS is added)",
                         [](auto& s) -> auto& { return s.tokens; }, 0, std::numeric_limits<int32_t>::max() - 1),
        intOption<S>("threads", "N", kThreadsHelp, [](auto& s) -> auto& { return s.threads; }, 0, kMaxThreads, 't'),
        kvTypeOption<S>([](auto& s) -> auto& { return s.kvType; }),
    };
    return table;
}

}  // namespace

int runLogits(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(logitsOptions(), LogitsSettings{});
    for (OptionSpec spec : {deviceOptionSpec(), gpuLayersOptionSpec(), jsonOption("print {\"n_vocab\", \"tokens\", \"logits\"} as JSON"),
                            helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("logits", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict logits MODEL.gguf --tokens 1,415,2217 [--device DEV] [--gpu-layers N] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("logits", "expected exactly one model file (see --help)", kExitUsage);
    if (!args->has("tokens")) return fail("logits", "missing --tokens IDS", kExitUsage);
    LogitsSettings settings;
    if (auto e = applyOptions(logitsOptions(), *args, settings)) return fail("logits", *e, kExitUsage);
    const std::vector<int32_t> tokens(settings.tokens.begin(), settings.tokens.end());
    std::string device;
    if (int rc = readDeviceOption("logits", *args, &device); rc != kExitOk) return rc;
    int gpuLayers = -1;
    if (int rc = readGpuLayersOption("logits", *args, device, &gpuLayers); rc != kExitOk) return rc;

    auto model = core::openLocalModel(args->positionals()[0], settings.threads, device, gpuLayers, nullptr);
    if (!model) return fail("logits", model.error().message, openFailureExitCode(device));
    SessionOptions so;
    so.nCtx = static_cast<int64_t>(tokens.size());
    so.kvType = settings.kvType == "f16" ? KvType::F16 : KvType::F32;
    auto session = Session::create(*model, so);
    if (!session) return fail("logits", session.error().message, kExitRuntime);
    auto view = (*session)->evaluate(tokens, true);
    if (!view) return fail("logits", view.error().message, kExitBadInput);

    if (args->has("json")) {
        std::string out = "{\"n_vocab\": " + std::to_string(view->nVocab) + ", \"tokens\": [";
        for (size_t i = 0; i < tokens.size(); ++i) out += (i ? ", " : "") + std::to_string(tokens[i]);
        out += "], \"logits\": [";
        for (int64_t r = 0; r < view->rows; ++r) {
            out += r ? ",\n[" : "\n[";
            const auto row = view->row(r);
            for (size_t i = 0; i < row.size(); ++i) {
                if (i) out += ',';
                appendFloat(out, row[i]);
            }
            out += ']';
            if (out.size() > (1u << 20)) {
                std::fwrite(out.data(), 1, out.size(), stdout);
                out.clear();
            }
        }
        out += "]}\n";
        std::fwrite(out.data(), 1, out.size(), stdout);
        return kExitOk;
    }
    std::vector<int32_t> order(static_cast<size_t>(view->nVocab));
    for (int64_t r = 0; r < view->rows; ++r) {
        const auto row = view->row(r);
        std::iota(order.begin(), order.end(), 0);
        const size_t k = std::min<size_t>(5, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<long>(k), order.end(),
                          [&row](int32_t a, int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
        std::cout << "pos " << r << " token " << tokens[static_cast<size_t>(r)] << ":";
        for (size_t i = 0; i < k; ++i) {
            std::string f;
            appendFloat(f, row[order[i]]);
            std::cout << "  " << order[i] << " " << (*model)->tokenToPiece(order[i]) << " (" << f << ")";
        }
        std::cout << "\n";
    }
    return kExitOk;
}

}  // namespace verdict::cli
