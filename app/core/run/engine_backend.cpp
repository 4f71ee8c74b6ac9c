#include "core/run/engine_backend.h"

#include "core/run/device_check.h"
#include "core/run/prompt_tokenizer.h"
#include "core/run/tool_call_parse.h"
#include "verdict/engine/batch.h"
#include "verdict/engine/batch_scheduler.h"
#include "verdict/engine/devices.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <algorithm>
#include <future>
#include <mutex>
#include <optional>

namespace verdict::core {

struct EngineBackend::Impl {
    std::shared_ptr<const Model> model;
    std::unique_ptr<Session> session;
    EngineBackendOptions options;
    std::unique_ptr<PromptTokenizer> renderer;
    std::mutex sessionMu;                         // the session serves one call at a time
    std::unique_ptr<BatchScheduler> scheduler;    // parallel > 1: generate() runs here
    // Log-likelihood scoring: `session` first, then up to parallel - 1 more made on first use.
    std::vector<Session*> loglikSessions;
    std::vector<std::unique_ptr<Session>> ownedLoglikSessions;
    int parallel = 1;
    // The cancel flag (Ctrl-C, a Cancel button) as the chat template's stop question.
    std::function<bool()> shouldStop() const {
        if (!options.cancelLoad) return {};
        return [flag = options.cancelLoad] { return flag->load(); };
    }
};

EngineBackend::EngineBackend(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
EngineBackend::~EngineBackend() = default;

Result<std::unique_ptr<EngineBackend>> EngineBackend::open(const std::string& modelPath,
                                                           const EngineBackendOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    auto model = openLocalModel(modelPath, options.threads, options.device, options.gpuLayers, options.cancelLoad);
    if (!model) return model.error();
    impl->model = *model;
    auto renderer = PromptTokenizer::create(impl->model);
    if (!renderer) return renderer.error();
    impl->renderer = std::move(*renderer);

    SessionOptions so;
    so.nCtx = options.nCtx;
    auto session = Session::create(impl->model, so);
    if (!session) return session.error();
    impl->session = std::move(*session);

    impl->parallel = options.parallel > 0 ? options.parallel : chooseParallel(*impl->model, impl->session->memoryUse().kvBytes);
    impl->parallel = static_cast<int>(std::min<int64_t>(impl->parallel, kMaxBatchRows));
    if (impl->parallel > 1) {
        BatchSchedulerOptions bo;
        bo.maxSequences = impl->parallel;
        bo.nCtx = impl->session->nCtx();
        auto scheduler = BatchScheduler::create(impl->model, bo);
        if (!scheduler)
            return Error{"cannot run " + std::to_string(impl->parallel) + " sequences at once (--parallel): " +
                         scheduler.error().message};
        impl->scheduler = std::move(*scheduler);
    }
    return std::unique_ptr<EngineBackend>(new EngineBackend(std::move(impl)));
}

int EngineBackend::chooseParallel(const Model& model, uint64_t kvBytesPerSequence) {
    const std::string device = model.device();
    const int cap = device == "cpu" ? 4 : 16;
    uint64_t freeBytes = 0;
    for (const DeviceInfo& d : listDevices().devices)
        if (d.id == device) freeBytes = d.freeBytes;
    if (kvBytesPerSequence == 0 || freeBytes == 0) return 1;
    const uint64_t fit = freeBytes / 2 / kvBytesPerSequence;
    return static_cast<int>(std::clamp<uint64_t>(fit, 1, static_cast<uint64_t>(cap)));
}

int EngineBackend::maxConcurrentCalls() const { return m_impl->scheduler ? m_impl->parallel : 1; }

BackendInfo EngineBackend::info() const {
    BackendInfo i;
    i.backend = "engine";
    i.modelPath = m_impl->model->path();
    i.modelParts = m_impl->renderer->parts();
    i.engineVersion = m_impl->options.engineVersion;
    i.device = describeDevice(*m_impl->model);
    i.chatTemplate = m_impl->renderer->templateSource();
    return i;
}

GenerateConfig toGenerateConfig(const GenerationParams& params) {
    GenerateConfig cfg;
    cfg.maxTokens = params.maxTokens;
    cfg.sampling.temperature = static_cast<float>(params.temperature);
    cfg.sampling.topK = params.topK;
    cfg.sampling.topP = static_cast<float>(params.topP);
    cfg.sampling.minP = static_cast<float>(params.minP);
    cfg.sampling.repeatPenalty = static_cast<float>(params.repeatPenalty);
    cfg.sampling.seed = params.seed;
    cfg.stopAtEos = true;
    cfg.stopStrings = params.stop;
    return cfg;
}

Result<Generation> EngineBackend::generate(const Prompt& prompt, const GenerationParams& params,
                                           const TokenCallback& onToken) {
    auto in = m_impl->renderer->render(prompt, m_impl->shouldStop());
    if (!in) return in.error();
    GenerateConfig cfg = toGenerateConfig(params);
    const bool tools = !prompt.tools.is_null();
    cfg.renderSpecialTokens = tools;  // tool-call markup is often control tokens ("<|channel|>", "[TOOL_CALLS]")
    if (onToken) cfg.onToken = [&](int32_t, std::string_view piece) { return onToken(piece); };

    Generation g;
    g.prompt = std::move(in->rendered);
    g.tokensIn = static_cast<int64_t>(in->tokens.size());
    if (params.maxTokens <= 0) return g;
    std::optional<Result<GenerateResult>> out;
    if (m_impl->scheduler) {
        // One sequence of the continuous batch; this thread waits for it (onToken runs on the
        // scheduler's thread meanwhile, so what it refers to stays alive).
        std::promise<Result<GenerateResult>> done;
        std::future<Result<GenerateResult>> result = done.get_future();
        BatchRequest req;
        req.prompt = in->tokens;
        req.cfg = cfg;
        req.onDone = [&done](Result<GenerateResult> r) { done.set_value(std::move(r)); };
        auto id = m_impl->scheduler->submit(std::move(req));
        if (!id) return id.error();
        out.emplace(result.get());
    } else {
        std::lock_guard lock(m_impl->sessionMu);
        out.emplace(m_impl->session->generate(in->tokens, cfg));
    }
    if (!*out) return out->error();
    const GenerateResult* res = &out->value();
    g.text = res->text;
    // An end-of-generation token is kept in `tokens` but is not output text.
    g.tokensOut = static_cast<int64_t>(res->tokens.size());
    const Timings& t = res->timings;
    if (!res->tokens.empty()) g.ttftMs = t.ttftMs;
    if (t.decodeTokens > 0 && t.decodeMs > 0) g.decodeTps = t.decodeTps;
    switch (res->stopReason) {
    case StopReason::MaxTokens: g.stopReason = "max_tokens"; break;
    case StopReason::Eos: g.stopReason = "eos"; break;
    case StopReason::StopString: g.stopReason = "stop_string"; break;
    case StopReason::Callback: g.stopReason = "callback"; break;
    case StopReason::ContextFull: g.stopReason = "context_full"; break;
    }
    if (tools) {
        ParsedToolCalls calls = parseToolCalls(g.text);
        if (!calls.calls.empty() || !calls.problems.empty()) {
            g.text = std::move(calls.content);
            g.toolCalls = std::move(calls.calls);
            g.toolCallFormat = std::move(calls.format);
            g.toolCallProblems = std::move(calls.problems);
        }
    }
    return g;
}

Result<ContinuationScore> EngineBackend::logprobs(const Prompt& context, const std::string& continuation) {
    auto scores = logprobsMany({LoglikRequest{context, {continuation}}});
    return std::move(scores.front().front());
}

std::vector<std::vector<Result<ContinuationScore>>> EngineBackend::logprobsMany(const std::vector<LoglikRequest>& requests) {
    std::vector<std::vector<Result<ContinuationScore>>> out(requests.size());
    std::lock_guard lock(m_impl->sessionMu);
    const int64_t nCtx = m_impl->session->nCtx();

    // Each request: its context rendered and tokenized once, then each continuation's tokens:
    // context + continuation tokenized as one text and what follows the context's tokens taken,
    // so a word that merges across the boundary is split the way the model would see it.
    struct Item {
        RenderedPrompt rendered;
        std::vector<int32_t> context;
        std::vector<std::vector<int32_t>> continuations;
        bool failed = false;                 // a batch call failed: nothing more is scored
        std::optional<Error> unscorable;     // why continuations[size] cannot be scored (tokenizing, fit)
    };
    std::vector<Item> items(requests.size());
    auto continuationTokens = [&](const PromptTokenizer::Tokenized& ctx, const std::string& continuation) -> Result<std::vector<int32_t>> {
        if (continuation.empty()) return Error{"logprobs: the continuation is empty"};
        auto whole = m_impl->renderer->tokenize(ctx.rendered.text + continuation, ctx.templated);
        if (!whole) return whole.error();
        const auto& c = ctx.tokens;
        std::vector<int32_t> cont;
        if (whole->size() > c.size() && std::equal(c.begin(), c.end(), whole->begin())) {
            cont.assign(whole->begin() + static_cast<std::ptrdiff_t>(c.size()), whole->end());
        } else {
            auto alone = m_impl->model->tokenize(continuation, false, false);
            if (!alone) return alone.error();
            cont = std::move(*alone);
        }
        if (cont.empty()) return Error{"logprobs: the continuation tokenizes to nothing"};
        if (c.empty()) return Error{"logprobs: the context is empty (it needs at least a BOS token)"};
        if (static_cast<int64_t>(c.size() + cont.size()) > nCtx)
            return Error{"context + continuation of " + std::to_string(c.size() + cont.size())
                         + " tokens does not fit in the context of " + std::to_string(nCtx) + " tokens"};
        return cont;
    };
    size_t rounds = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        rounds = std::max(rounds, requests[i].continuations.size());
        auto ctx = m_impl->renderer->render(requests[i].context, m_impl->shouldStop());
        if (!ctx) {
            if (!requests[i].continuations.empty()) items[i].unscorable = ctx.error();
            continue;
        }
        for (const std::string& continuation : requests[i].continuations) {
            auto cont = continuationTokens(*ctx, continuation);
            if (!cont) {
                items[i].unscorable = cont.error();  // the continuations before it are scored, the rest not
                break;
            }
            items[i].continuations.push_back(std::move(*cont));
        }
        items[i].rendered = std::move(ctx->rendered);
        items[i].context = std::move(ctx->tokens);
    }

    // Requests in groups of one per session; in round k a group scores every request's k-th
    // continuation in shared passes, so each session re-evaluates only its context's last token and
    // the continuation after the first round.
    auto& sessions = m_impl->loglikSessions;
    if (sessions.empty()) sessions.push_back(m_impl->session.get());
    while (sessions.size() < std::min(requests.size(), static_cast<size_t>(std::max(1, m_impl->parallel)))) {
        SessionOptions so;
        so.nCtx = nCtx;
        auto extra = Session::create(m_impl->model, so);
        if (!extra) break;  // fewer sessions: the requests share them in more calls
        m_impl->ownedLoglikSessions.push_back(std::move(*extra));
        sessions.push_back(m_impl->ownedLoglikSessions.back().get());
    }
    for (size_t from = 0; from < requests.size(); from += sessions.size()) {
        for (size_t k = 0; k < rounds; ++k) {
            std::vector<Session*> batch;
            std::vector<LogprobsRequest> asks;
            std::vector<size_t> who;
            for (size_t i = from; i < std::min(requests.size(), from + sessions.size()); ++i) {
                Item& it = items[i];
                if (it.failed || k >= it.continuations.size()) continue;
                batch.push_back(sessions[i - from]);
                asks.push_back(LogprobsRequest{it.context, it.continuations[k]});
                who.push_back(i);
            }
            if (batch.empty()) continue;
            auto lp = logprobsBatch(batch, asks);
            for (size_t j = 0; j < who.size(); ++j) {
                Item& it = items[who[j]];
                if (!lp) {
                    out[who[j]].push_back(lp.error());
                    it.failed = true;
                    continue;
                }
                const LogprobsResult& r = (*lp)[j];
                ContinuationScore s;
                s.context = it.rendered;
                s.logprob = r.sum;
                s.contextTokens = static_cast<int64_t>(it.context.size());
                s.continuationTokens = static_cast<int64_t>(it.continuations[k].size());
                s.greedy = r.isGreedy;
                out[who[j]].push_back(std::move(s));
            }
        }
    }
    // A continuation that cannot be scored ends its request's list, after the ones before it.
    for (size_t i = 0; i < requests.size(); ++i)
        if (items[i].unscorable && !items[i].failed) out[i].push_back(std::move(*items[i].unscorable));
    return out;
}

}  // namespace verdict::core
