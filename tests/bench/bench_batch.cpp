// Batched decode benchmark: aggregate decode tokens per second of decodeBatch at several batch
// sizes on one model; with --loglik N, log-likelihood scoring of N multiple-choice items instead. Each batch size gets fresh sessions whose prompts (of slightly different
// lengths) are prefilled first; then `steps` decode steps are timed, each one forward pass over
// all sequences, feeding every sequence its own greedy token.
//
// Prints one JSON object. Not a pass/fail test: on a CPU, weights are read once per step for the
// whole batch, so aggregate tok/s should grow with the batch until compute (not memory
// bandwidth) limits it; per-sequence tok/s falls.
//
//   bench_batch MODEL.gguf [--threads N] [--batches 1,2,4,8,16,32] [--steps S] [--prompt N] [--device DEV]
//   bench_batch MODEL.gguf --loglik N [--prompt N] [--batches 1,4,16] ...
//
// --loglik: N MMLU-shaped items (a few-shot prefix of --prompt tokens shared by all, a question of
// 24-31 tokens, 4 choices of 1-3 tokens) scored as a suite run scores them: first with
// Session::logprobs on one session, choice after choice (the one-at-a-time path; each item reuses
// the cached prefix), then with logprobsBatch in groups of each --batches size, one session per
// item of a group (what EngineBackend::logprobsMany does). Items/s of each, and whether every
// group size gave the same log-probabilities bit for bit.
//
// A model of the fixtures README's "perf" shape: verdict make-model --n-embd 2048 --n-layer 16
// --n-head 32 --n-head-kv 8 --n-ff 5632 --n-vocab 32000 --ctx 2048 --type q4_0 perf-q4_0.gguf
#include "sampling/sampler.h"
#include "verdict/engine/batch.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace verdict;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string model;
    int threads = 0;
    std::vector<int> batches = {1, 2, 4, 8, 16, 32};
    int steps = 16;
    int prompt = 32;
    std::string device = "cpu";
    int loglik = 0;  // > 0: score this many multiple-choice items instead of decoding
};

int usage(const char* why) {
    std::fprintf(stderr, "bench_batch: %s\nusage: bench_batch MODEL.gguf [--threads N] [--batches 1,2,4] "
                         "[--steps S] [--prompt N] [--device cpu|cuda:N] [--loglik ITEMS]\n", why);
    return 3;
}

bool parseInts(const char* s, std::vector<int>& out) {
    out.clear();
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) {
        const int v = std::atoi(item.c_str());
        if (v <= 0) return false;
        out.push_back(v);
    }
    return !out.empty();
}

struct Figures {
    int batch = 0;
    double prefillMs = 0;   // all prompts, one after the other
    double decodeMs = 0;    // `steps` batched steps
    double aggregateTps = 0;
    double perSeqTps = 0;
    double stepMsMean = 0;
};

Result<Figures> runBatch(const std::shared_ptr<const Model>& model, const Options& o, int batch) {
    std::vector<std::unique_ptr<Session>> sessions;
    std::vector<Session*> ptrs;
    SessionOptions so;
    so.nCtx = o.prompt + batch + o.steps + 8;
    const auto nVocab = static_cast<int32_t>(model->shape().nVocab);
    Figures f;
    f.batch = batch;
    std::vector<int32_t> next;
    const auto p0 = Clock::now();
    for (int i = 0; i < batch; ++i) {
        auto s = Session::create(model, so);
        if (!s) return s.error();
        std::vector<int32_t> prompt{model->bos() >= 0 ? model->bos() : 1};
        for (int j = 1; j < o.prompt + i % 8; ++j) prompt.push_back((7 + 131 * j + 17 * i) % nVocab);
        auto l = (*s)->evaluate(prompt);
        if (!l) return l.error();
        next.push_back(sampling::argmax(l->last().data(), nVocab));
        ptrs.push_back(s->get());
        sessions.push_back(std::move(*s));
    }
    f.prefillMs = std::chrono::duration<double, std::milli>(Clock::now() - p0).count();
    const auto t0 = Clock::now();
    for (int step = 0; step < o.steps; ++step) {
        auto views = decodeBatch(ptrs, next);
        if (!views) return views.error();
        for (int i = 0; i < batch; ++i) next[static_cast<size_t>(i)] = sampling::argmax((*views)[static_cast<size_t>(i)].last().data(), nVocab);
    }
    f.decodeMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    f.aggregateTps = 1000.0 * batch * o.steps / f.decodeMs;
    f.perSeqTps = f.aggregateTps / batch;
    f.stepMsMean = f.decodeMs / o.steps;
    return f;
}

struct McItem {
    std::vector<int32_t> context;
    std::vector<std::vector<int32_t>> choices;
};

std::vector<McItem> mcItems(const Model& model, const Options& o) {
    const auto nVocab = static_cast<int32_t>(model.shape().nVocab);
    std::vector<int32_t> prefix{model.bos() >= 0 ? model.bos() : 1};
    for (int j = 1; j < o.prompt; ++j) prefix.push_back((11 + 97 * j) % nVocab);
    std::vector<McItem> items(static_cast<size_t>(o.loglik));
    for (int i = 0; i < o.loglik; ++i) {
        McItem& it = items[static_cast<size_t>(i)];
        it.context = prefix;
        for (int j = 0; j < 24 + i % 8; ++j) it.context.push_back((5 + 131 * j + 71 * i) % nVocab);
        for (int c = 0; c < 4; ++c) {
            std::vector<int32_t> choice;
            for (int j = 0; j <= (i + c) % 3; ++j) choice.push_back((3 + 37 * c + 13 * j + 7 * i) % nVocab);
            it.choices.push_back(choice);
        }
    }
    return items;
}

// Session::logprobs, one choice after the other on one session. Returns seconds; sums[item][choice].
Result<double> loglikSequential(const std::shared_ptr<const Model>& model, const std::vector<McItem>& items,
                                int64_t nCtx, std::vector<std::vector<double>>& sums) {
    SessionOptions so;
    so.nCtx = nCtx;
    auto s = Session::create(model, so);
    if (!s) return s.error();
    sums.assign(items.size(), {});
    const auto t0 = Clock::now();
    for (size_t i = 0; i < items.size(); ++i)
        for (const auto& choice : items[i].choices) {
            auto lp = (*s)->logprobs(items[i].context, choice);
            if (!lp) return lp.error();
            sums[i].push_back(lp->sum);
        }
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// logprobsBatch in groups of `group` items, round by round over the choices.
Result<double> loglikBatched(const std::shared_ptr<const Model>& model, const std::vector<McItem>& items, int64_t nCtx,
                             int group, std::vector<std::vector<double>>& sums) {
    SessionOptions so;
    so.nCtx = nCtx;
    std::vector<std::unique_ptr<Session>> sessions;
    for (int g = 0; g < group; ++g) {
        auto s = Session::create(model, so);
        if (!s) return s.error();
        sessions.push_back(std::move(*s));
    }
    sums.assign(items.size(), {});
    const auto t0 = Clock::now();
    for (size_t from = 0; from < items.size(); from += static_cast<size_t>(group)) {
        const size_t to = std::min(items.size(), from + static_cast<size_t>(group));
        for (size_t c = 0; c < 4; ++c) {
            std::vector<Session*> ptrs;
            std::vector<LogprobsRequest> reqs;
            for (size_t i = from; i < to; ++i) {
                ptrs.push_back(sessions[i - from].get());
                reqs.push_back({items[i].context, items[i].choices[c]});
            }
            auto lp = logprobsBatch(ptrs, reqs);
            if (!lp) return lp.error();
            for (size_t i = from; i < to; ++i) sums[i].push_back((*lp)[i - from].sum);
        }
    }
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

int runLoglik(const std::shared_ptr<const Model>& model, const Options& o) {
    const auto items = mcItems(*model, o);
    const int64_t nCtx = o.prompt + 40;
    std::vector<std::vector<double>> ref, got;
    // Warm-up: page the weights in.
    if (auto w = loglikSequential(model, std::vector<McItem>(items.begin(), items.begin() + 1), nCtx, got); !w) {
        std::fprintf(stderr, "bench_batch: %s\n", w.error().message.c_str());
        return 1;
    }
    auto seq = loglikSequential(model, items, nCtx, ref);
    if (!seq) {
        std::fprintf(stderr, "bench_batch: %s\n", seq.error().message.c_str());
        return 1;
    }
    const double base = static_cast<double>(items.size()) / *seq;
    std::printf("{\n  \"model\": \"%s\",\n  \"device\": \"%s\",\n  \"threads\": %d,\n  \"items\": %d,\n"
                "  \"prefix_tokens\": %d,\n  \"session_logprobs\": {\"seconds\": %.3f, \"items_per_s\": %.3f},\n"
                "  \"batched\": [\n",
                o.model.c_str(), model->device().c_str(), model->threads(), o.loglik, o.prompt, *seq, base);
    std::vector<std::vector<double>> first;
    for (size_t k = 0; k < o.batches.size(); ++k) {
        auto secs = loglikBatched(model, items, nCtx, o.batches[k], got);
        if (!secs) {
            std::fprintf(stderr, "bench_batch: group %d: %s\n", o.batches[k], secs.error().message.c_str());
            return 1;
        }
        if (k == 0) first = got;
        double worst = 0;
        for (size_t i = 0; i < got.size(); ++i)
            for (size_t c = 0; c < got[i].size(); ++c) worst = std::max(worst, std::abs(got[i][c] - ref[i][c]));
        const double ips = static_cast<double>(items.size()) / *secs;
        std::printf("    {\"group\": %d, \"seconds\": %.3f, \"items_per_s\": %.3f, \"vs_session_logprobs\": %.2f, "
                    "\"same_as_first_group\": %s, \"max_abs_diff_vs_session_logprobs\": %.3g}%s\n",
                    o.batches[k], *secs, ips, ips / base, got == first ? "true" : "false", worst,
                    k + 1 < o.batches.size() ? "," : "");
        std::fflush(stdout);
    }
    std::printf("  ]\n}\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool hasValue = i + 1 < argc;
        if (a == "--help" || a == "-h") return usage("batched decode throughput"), 0;
        if (a == "--threads" && hasValue) {
            o.threads = std::atoi(argv[++i]);
        } else if (a == "--batches" && hasValue) {
            if (!parseInts(argv[++i], o.batches)) return usage("--batches wants positive integers, e.g. 1,2,4");
        } else if (a == "--steps" && hasValue) {
            o.steps = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--prompt" && hasValue) {
            o.prompt = std::max(1, std::atoi(argv[++i]));
        } else if (a == "--device" && hasValue) {
            o.device = argv[++i];
        } else if (a == "--loglik" && hasValue) {
            o.loglik = std::max(1, std::atoi(argv[++i]));
        } else if (!a.empty() && a[0] != '-' && o.model.empty()) {
            o.model = a;
        } else {
            return usage(("unknown or incomplete option " + a).c_str());
        }
    }
    if (o.model.empty()) return usage("no model given");
    ModelOptions mo;
    mo.threads = o.threads;
    mo.device = o.device;
    auto model = Model::open(o.model, mo);
    if (!model) {
        std::fprintf(stderr, "bench_batch: %s\n", model.error().message.c_str());
        return 2;
    }
    if (o.loglik > 0) return runLoglik(*model, o);
    // Warm-up: page the weights in and grow the buffers once.
    if (auto w = runBatch(*model, Options{o.model, o.threads, {}, 2, 4, o.device}, 1); !w) {
        std::fprintf(stderr, "bench_batch: %s\n", w.error().message.c_str());
        return 1;
    }
    std::printf("{\n  \"model\": \"%s\",\n  \"device\": \"%s\",\n  \"threads\": %d,\n  \"steps\": %d,\n"
                "  \"prompt_tokens\": %d,\n  \"runs\": [\n",
                o.model.c_str(), (*model)->device().c_str(), (*model)->threads(), o.steps, o.prompt);
    double base = 0;
    for (size_t k = 0; k < o.batches.size(); ++k) {
        auto f = runBatch(*model, o, o.batches[k]);
        if (!f) {
            std::fprintf(stderr, "bench_batch: batch %d: %s\n", o.batches[k], f.error().message.c_str());
            return 1;
        }
        if (k == 0) base = f->aggregateTps / f->batch;
        std::printf("    {\"batch\": %d, \"decode_tok_s\": %.2f, \"per_sequence_tok_s\": %.2f, \"step_ms\": %.3f, "
                    "\"speedup_vs_batch1\": %.2f, \"prefill_ms\": %.1f}%s\n",
                    f->batch, f->aggregateTps, f->perSeqTps, f->stepMsMean, base > 0 ? f->aggregateTps / base : 0.0,
                    f->prefillMs, k + 1 < o.batches.size() ? "," : "");
        std::fflush(stdout);
    }
    std::printf("  ]\n}\n");
    return 0;
}
