// Session::generate (prompt -> sampled continuation) and Session::logprobs (scoring).
#include "verdict/engine/session.h"

#include "sampling/sampler.h"
#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace verdict {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

Result<void> checkFits(const detail::SessionImpl& d, size_t n, const char* what) {
    if (n == 0) return Error{std::string(what) + " is empty"};
    if (static_cast<int64_t>(n) > d.nCtx)
        return Error{std::string(what) + " of " + std::to_string(n) + " tokens does not fit in the context of "
                     + std::to_string(d.nCtx) + " tokens"};
    return {};
}

// Where a stop string occurs in text[from..], or npos.
size_t findStop(const std::string& text, size_t from, const std::vector<std::string>& stops, size_t& stopLen) {
    size_t best = std::string::npos;
    for (const std::string& s : stops) {
        if (s.empty()) continue;
        const size_t start = from >= s.size() ? from - s.size() + 1 : 0;
        const size_t p = text.find(s, start);
        if (p != std::string::npos && p < best) {
            best = p;
            stopLen = s.size();
        }
    }
    return best;
}

}  // namespace

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateConfig& cfg) {
    detail::SessionImpl& d = *m_impl;
    if (auto r = checkFits(d, prompt.size(), "prompt"); !r) return r.error();
    const auto t0 = Clock::now();

    // Reuse the cached prefix; at least the last prompt token is evaluated to get its logits.
    int64_t keep = d.commonPrefix(prompt);
    keep = std::min<int64_t>(keep, static_cast<int64_t>(prompt.size()) - 1);
    d.truncate(keep);
    auto first = d.evaluate(prompt.subspan(static_cast<size_t>(keep)), false);
    if (!first) return first.error();

    GenerateResult out;
    Timings& tm = out.timings;
    tm.loadMs = d.m->loadMs;
    tm.promptTokens = static_cast<int64_t>(prompt.size()) - keep;
    tm.promptMs = msSince(t0);
    tm.prefillTps = tm.promptMs > 0 ? 1000.0 * static_cast<double>(tm.promptTokens) / tm.promptMs : 0.0;

    sampling::Sampler sampler(cfg.sampling);
    for (int32_t t : prompt) sampler.accept(t);
    size_t maxStop = 0;
    for (const auto& s : cfg.stopStrings) maxStop = std::max(maxStop, s.size());

    std::span<const float> logits = first->last();
    const int64_t nVocab = d.m->cfg.nVocab;
    out.stopReason = StopReason::MaxTokens;
    auto stepStart = Clock::now();
    for (int32_t i = 0; i < cfg.maxTokens; ++i) {
        const int32_t tok = sampler.sample(logits);
        sampler.accept(tok);
        if (i == 0) {
            tm.ttftMs = msSince(t0);
        } else {
            tm.stepMs.push_back(msSince(stepStart));
        }
        out.tokens.push_back(tok);

        const bool eog = d.model->isEog(tok);
        const std::string piece = d.model->tokenToPiece(tok);
        if (eog && cfg.stopAtEos) {
            out.stopReason = StopReason::Eos;
            break;
        }
        const size_t before = out.text.size();
        out.text += piece;
        if (cfg.onToken && !cfg.onToken(tok, piece)) {
            out.stopReason = StopReason::Callback;
            break;
        }
        if (maxStop > 0) {
            size_t stopLen = 0;
            const size_t at = findStop(out.text, before, cfg.stopStrings, stopLen);
            if (at != std::string::npos) {
                out.text.resize(at);
                out.stopReason = StopReason::StopString;
                break;
            }
        }
        if (i + 1 == cfg.maxTokens) break;
        if (static_cast<int64_t>(d.tokens.size()) >= d.nCtx) {
            out.stopReason = StopReason::ContextFull;
            break;
        }
        stepStart = Clock::now();
        const int32_t one[1] = {tok};
        auto next = d.evaluate(std::span<const int32_t>(one, 1), false);
        if (!next) return next.error();
        logits = std::span<const float>(next->data, static_cast<size_t>(nVocab));
    }
    tm.decodeTokens = static_cast<int64_t>(tm.stepMs.size());
    for (double ms : tm.stepMs) tm.decodeMs += ms;
    tm.decodeTps = tm.decodeMs > 0 ? 1000.0 * static_cast<double>(tm.decodeTokens) / tm.decodeMs : 0.0;
    d.timings = tm;
    return out;
}

Result<LogprobsResult> Session::logprobs(std::span<const int32_t> context, std::span<const int32_t> continuation) {
    detail::SessionImpl& d = *m_impl;
    if (context.empty()) return Error{"logprobs: the context is empty (it needs at least a BOS token)"};
    if (continuation.empty()) return Error{"logprobs: the continuation is empty"};
    std::vector<int32_t> full(context.begin(), context.end());
    full.insert(full.end(), continuation.begin(), continuation.end());
    if (auto r = checkFits(d, full.size(), "context + continuation"); !r) return r.error();

    // The logits that predict continuation[0] are those of the last context position, so that
    // position is always re-evaluated; everything before it may come from the cache.
    const auto nCtxTok = static_cast<int64_t>(context.size());
    int64_t keep = std::min<int64_t>(d.commonPrefix(full), nCtxTok - 1);
    d.truncate(keep);
    auto view = d.evaluate(std::span<const int32_t>(full).subspan(static_cast<size_t>(keep)), true);
    if (!view) return view.error();

    LogprobsResult out;
    out.isGreedy = true;
    for (size_t i = 0; i < continuation.size(); ++i) {
        const int64_t row = nCtxTok - 1 + static_cast<int64_t>(i) - keep;
        const std::span<const float> l = view->row(row);
        float maxv = l[0];
        for (float x : l) maxv = std::max(maxv, x);
        double sum = 0.0;
        for (float x : l) sum += std::exp(static_cast<double>(x) - maxv);
        const int32_t tok = continuation[i];
        const double lp = static_cast<double>(l[static_cast<size_t>(tok)]) - maxv - std::log(sum);
        out.tokenLogprobs.push_back(static_cast<float>(lp));
        out.sum += lp;
        if (sampling::argmax(l.data(), static_cast<int64_t>(l.size())) != tok) out.isGreedy = false;
    }
    return out;
}

}  // namespace verdict
