#include "core/run/engine_backend.h"

#include "model/model_impl.h"
#include "tokenizer/chat_template.h"
#include "verdict/engine/model.h"
#include "verdict/engine/session.h"

#include <algorithm>
#include <optional>

namespace verdict::core {

struct EngineBackend::Impl {
    std::shared_ptr<const Model> model;
    std::unique_ptr<Session> session;
    EngineBackendOptions options;
    std::vector<std::string> parts;
    std::string templateSource;             // "" when the file has none
    std::optional<tok::ChatTemplate> tmpl;  // parsed template, when it parses
    std::string templateParseError;
    std::string bosText, eosText;           // token texts as the template sees them ("<s>", "</s>")

    struct Tokenized {
        RenderedPrompt rendered;
        std::vector<int32_t> tokens;
        bool templated = false;
    };

    Result<std::vector<int32_t>> tokenize(const std::string& text, bool templated) const {
        // A rendered template carries its special tokens as text ("<|im_start|>") and often the
        // BOS itself; parse them, and only add BOS when the text does not start with it.
        bool addSpecial = true;
        if (templated && !bosText.empty() && text.rfind(bosText, 0) == 0) addSpecial = false;
        return model->tokenize(text, addSpecial, templated);
    }

    Result<Tokenized> render(const Prompt& p) const {
        Tokenized out;
        std::string note;
        if (p.useChatTemplate && !p.messages.empty()) {
            if (tmpl) {
                tok::ChatTemplateInputs in;
                for (const ChatTurn& t : p.messages) in.messages.push_back({{"role", t.role}, {"content", t.content}});
                in.addGenerationPrompt = true;
                if (!bosText.empty()) in.bosToken = bosText;
                if (!eosText.empty()) in.eosToken = eosText;
                auto text = tmpl->render(in);
                if (text) {
                    out.rendered = {*text, "model", ""};
                    out.templated = true;
                } else {
                    note = "the model's chat template failed: " + text.error().message;
                    const std::string family = tok::detectTemplateFamily(templateSource);
                    if (auto b = tok::renderBuiltinTemplate(family, in)) {
                        out.rendered = {*b, "builtin:" + family, note};
                        out.templated = true;
                    }
                }
            } else {
                note = templateSource.empty() ? "the model has no chat template"
                                              : "the model's chat template does not parse: " + templateParseError;
            }
        }
        if (!out.templated) {
            std::string text = p.text;
            if (text.empty())  // chat-only item on a model without a template: contents in order
                for (const ChatTurn& t : p.messages) text += (text.empty() ? "" : "\n\n") + t.content;
            out.rendered = {std::move(text), "raw", std::move(note)};
        }
        auto tokens = tokenize(out.rendered.text, out.templated);
        if (!tokens) return tokens.error();
        out.tokens = std::move(*tokens);
        if (out.tokens.empty()) return Error{"the prompt tokenizes to nothing"};
        return out;
    }
};

EngineBackend::EngineBackend(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
EngineBackend::~EngineBackend() = default;

Result<std::unique_ptr<EngineBackend>> EngineBackend::open(const std::string& modelPath,
                                                           const EngineBackendOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    ModelOptions mo;
    mo.threads = options.threads;
    mo.cancel = options.cancelLoad;
    auto model = Model::open(modelPath, mo);
    if (!model) return model.error();
    impl->model = *model;
    if (!impl->model->hasTokenizer())
        return Error{modelPath + ": the model has no usable tokenizer, so suite prompts cannot be encoded"};

    SessionOptions so;
    so.nCtx = options.nCtx;
    auto session = Session::create(impl->model, so);
    if (!session) return session.error();
    impl->session = std::move(*session);

    // The template and the part list come from the engine's own GGUF reader (engine-internal
    // access; the public Model API does not expose metadata yet).
    const gguf::GgufFile& file = *impl->model->impl().file;
    impl->parts = file.partPaths();
    if (impl->parts.empty()) impl->parts.push_back(modelPath);
    impl->templateSource = file.getString("tokenizer.chat_template").value_or("");
    // Control tokens have no piece text; the template wants their vocabulary text.
    if (const auto* tokens = file.getArray("tokenizer.ggml.tokens")) {
        auto text = [&](int32_t id) -> std::string {
            if (id < 0 || static_cast<size_t>(id) >= tokens->size()) return {};
            const std::string* s = (*tokens)[static_cast<size_t>(id)].asString();
            return s ? *s : std::string();
        };
        impl->bosText = text(impl->model->bos());
        impl->eosText = text(impl->model->eos());
    }
    if (!impl->templateSource.empty()) {
        auto t = tok::ChatTemplate::parse(impl->templateSource);
        if (t) impl->tmpl = std::move(*t);
        else impl->templateParseError = t.error().message;
    }
    return std::unique_ptr<EngineBackend>(new EngineBackend(std::move(impl)));
}

BackendInfo EngineBackend::info() const {
    BackendInfo i;
    i.backend = "engine";
    i.modelPath = m_impl->model->path();
    i.modelParts = m_impl->parts;
    i.engineVersion = m_impl->options.engineVersion;
    i.device = "cpu (" + std::to_string(m_impl->model->threads()) + " threads)";
    i.chatTemplate = m_impl->templateSource;
    return i;
}

Result<Generation> EngineBackend::generate(const Prompt& prompt, const GenerationParams& params,
                                           const TokenCallback& onToken) {
    auto in = m_impl->render(prompt);
    if (!in) return in.error();
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
    if (onToken) cfg.onToken = [&](int32_t, std::string_view piece) { return onToken(piece); };

    Generation g;
    g.prompt = std::move(in->rendered);
    g.tokensIn = static_cast<int64_t>(in->tokens.size());
    if (params.maxTokens <= 0) return g;
    auto out = m_impl->session->generate(in->tokens, cfg);
    if (!out) return out.error();
    g.text = out->text;
    // An end-of-generation token is kept in `tokens` but is not output text.
    g.tokensOut = static_cast<int64_t>(out->tokens.size());
    const Timings& t = out->timings;
    if (!out->tokens.empty()) g.ttftMs = t.ttftMs;
    if (t.decodeTokens > 0 && t.decodeMs > 0) g.decodeTps = t.decodeTps;
    switch (out->stopReason) {
    case StopReason::MaxTokens: g.stopReason = "max_tokens"; break;
    case StopReason::Eos: g.stopReason = "eos"; break;
    case StopReason::StopString: g.stopReason = "stop_string"; break;
    case StopReason::Callback: g.stopReason = "callback"; break;
    case StopReason::ContextFull: g.stopReason = "context_full"; break;
    }
    return g;
}

Result<ContinuationScore> EngineBackend::logprobs(const Prompt& context, const std::string& continuation) {
    if (continuation.empty()) return Error{"logprobs: the continuation is empty"};
    auto ctx = m_impl->render(context);
    if (!ctx) return ctx.error();
    // Tokenize context + continuation as one text and take what follows the context's tokens,
    // so a word that merges across the boundary is split the way the model would see it.
    auto whole = m_impl->tokenize(ctx->rendered.text + continuation, ctx->templated);
    if (!whole) return whole.error();
    std::vector<int32_t> cont;
    const auto& c = ctx->tokens;
    if (whole->size() > c.size() && std::equal(c.begin(), c.end(), whole->begin())) {
        cont.assign(whole->begin() + static_cast<std::ptrdiff_t>(c.size()), whole->end());
    } else {
        auto alone = m_impl->model->tokenize(continuation, false, false);
        if (!alone) return alone.error();
        cont = std::move(*alone);
    }
    if (cont.empty()) return Error{"logprobs: the continuation tokenizes to nothing"};
    auto lp = m_impl->session->logprobs(c, cont);
    if (!lp) return lp.error();
    ContinuationScore s;
    s.context = std::move(ctx->rendered);
    s.logprob = lp->sum;
    s.contextTokens = static_cast<int64_t>(c.size());
    s.continuationTokens = static_cast<int64_t>(cont.size());
    s.greedy = lp->isGreedy;
    return s;
}

}  // namespace verdict::core
