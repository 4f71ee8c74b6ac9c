// Session::generate (prompt -> sampled continuation) and Session::logprobs (scoring).
#include "verdict/engine/session.h"

#include "sampling/sampler.h"
#include "session/session_impl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

namespace verdict {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

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

SamplingParams withSeed(SamplingParams p, uint64_t seed) {
    p.seed = seed;
    return p;
}

}  // namespace

void addTokenLogprob(std::span<const float> l, int32_t token, LogprobsResult& out) {
    float maxv = l[0];
    for (float x : l) maxv = std::max(maxv, x);
    double sum = 0.0;
    for (float x : l) sum += std::exp(static_cast<double>(x) - maxv);
    const double lp = static_cast<double>(l[static_cast<size_t>(token)]) - maxv - std::log(sum);
    out.tokenLogprobs.push_back(static_cast<float>(lp));
    out.sum += lp;
    if (sampling::argmax(l.data(), static_cast<int64_t>(l.size())) != token) out.isGreedy = false;
}

Result<void> checkFits(const SessionImpl& d, size_t n, const char* what) {
    if (n == 0) return Error{std::string(what) + " is empty"};
    if (static_cast<int64_t>(n) > d.nCtx)
        return Error{std::string(what) + " of " + std::to_string(n) + " tokens does not fit in the context of "
                     + std::to_string(d.nCtx) + " tokens"};
    return {};
}

SequenceGenerator::SequenceGenerator(const Model& model, const GenerateConfig& cfg, std::span<const int32_t> prompt,
                                     uint64_t seed)
    : m_model(model), m_cfg(cfg), m_sampler(withSeed(cfg.sampling, seed)) {
    for (int32_t t : prompt) m_sampler.accept(t);
    for (const auto& s : cfg.stopStrings) m_maxStop = std::max(m_maxStop, s.size());
    m_out.stopReason = StopReason::MaxTokens;
    m_done = cfg.maxTokens <= 0;
}

void SequenceGenerator::setPrefill(int64_t promptTokens, double promptMs) {
    Timings& tm = m_out.timings;
    tm.promptTokens = promptTokens;
    tm.promptMs = promptMs;
    tm.prefillTps = promptMs > 0 ? 1000.0 * static_cast<double>(promptTokens) / promptMs : 0.0;
}

int32_t SequenceGenerator::sampleNext(std::span<const float> logits, Clock::time_point since) {
    const int32_t tok = m_sampler.sample(logits);
    m_sampler.accept(tok);
    if (m_out.tokens.empty())
        m_out.timings.ttftMs = msSince(since);
    else
        m_out.timings.stepMs.push_back(msSince(since));
    return tok;
}

bool SequenceGenerator::accept(int32_t tok, const std::function<bool(std::string_view piece)>& onPiece) {
    m_out.tokens.push_back(tok);
    const bool eog = m_model.isEog(tok);
    const std::string piece = m_model.tokenToPiece(tok, m_cfg.renderSpecialTokens);
    if (eog && m_cfg.stopAtEos) {
        stop(StopReason::Eos);
        return false;
    }
    const size_t before = m_out.text.size();
    m_out.text += piece;
    if (onPiece && !onPiece(piece)) {
        stop(StopReason::Callback);
        return false;
    }
    if (m_maxStop > 0) {
        size_t stopLen = 0;
        const size_t at = findStop(m_out.text, before, m_cfg.stopStrings, stopLen);
        if (at != std::string::npos) {
            m_out.text.resize(at);
            stop(StopReason::StopString);
            return false;
        }
    }
    if (static_cast<int64_t>(m_out.tokens.size()) >= m_cfg.maxTokens) {
        stop(StopReason::MaxTokens);
        return false;
    }
    return true;
}

void SequenceGenerator::stop(StopReason reason) {
    m_out.stopReason = reason;
    m_done = true;
}

GenerateResult SequenceGenerator::finish() {
    Timings& tm = m_out.timings;
    tm.loadMs = m_model.impl().loadMs;
    tm.decodeTokens = static_cast<int64_t>(tm.stepMs.size());
    tm.decodeMs = 0;
    for (double ms : tm.stepMs) tm.decodeMs += ms;
    tm.decodeTps = tm.decodeMs > 0 ? 1000.0 * static_cast<double>(tm.decodeTokens) / tm.decodeMs : 0.0;
    m_done = true;
    return std::move(m_out);
}

}  // namespace detail

using detail::checkFits;

Result<GenerateResult> Session::generate(std::span<const int32_t> prompt, const GenerateConfig& cfg) {
    using Clock = detail::SequenceGenerator::Clock;
    detail::SessionImpl& d = *m_impl;
    if (auto r = checkFits(d, prompt.size(), "prompt"); !r) return r.error();
    const auto t0 = Clock::now();

    // Reuse the cached prefix; at least the last prompt token is evaluated to get its logits.
    int64_t keep = d.commonPrefix(prompt);
    keep = std::min<int64_t>(keep, static_cast<int64_t>(prompt.size()) - 1);
    d.truncate(keep);
    auto first = d.evaluate(prompt.subspan(static_cast<size_t>(keep)), false);
    if (!first) return first.error();

    detail::SequenceGenerator gen(*d.model, cfg, prompt, cfg.sampling.seed);
    gen.setPrefill(static_cast<int64_t>(prompt.size()) - keep,
                   std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    std::function<bool(std::string_view)> onPiece;
    int32_t tok = 0;
    if (cfg.onToken) onPiece = [&cfg, &tok](std::string_view piece) { return cfg.onToken(tok, piece); };

    std::span<const float> logits = first->last();
    const int64_t nVocab = d.m->cfg.nVocab;
    auto since = t0;
    while (!gen.done()) {
        tok = gen.sampleNext(logits, since);
        if (!gen.accept(tok, onPiece)) break;
        if (static_cast<int64_t>(d.tokens.size()) >= d.nCtx) {
            gen.stop(StopReason::ContextFull);
            break;
        }
        since = Clock::now();
        const int32_t one[1] = {tok};
        auto next = d.evaluate(std::span<const int32_t>(one, 1), false);
        if (!next) return next.error();
        logits = std::span<const float>(next->data, static_cast<size_t>(nVocab));
    }
    GenerateResult out = gen.finish();
    d.timings = out.timings;
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
    for (size_t i = 0; i < continuation.size(); ++i)
        detail::addTokenLogprob(view->row(nCtxTok - 1 + static_cast<int64_t>(i) - keep), continuation[i], out);
    return out;
}

}  // namespace verdict
