// Vocab::build: llama.cpp's defaults, key overrides and token attribute fix-ups
// (src/llama-vocab.cpp, llama_vocab::impl::load), applied to a VocabSpec.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

namespace verdict::tok {

namespace {

uint32_t attrOfType(int32_t type) {
    switch (TokenType(type)) {
        case TokenType::Unknown: return kAttrUnknown;
        case TokenType::Unused: return kAttrUnused;
        case TokenType::Normal: return kAttrNormal;
        case TokenType::Control: return kAttrControl;
        case TokenType::UserDefined: return kAttrUserDefined;
        case TokenType::Byte: return kAttrByte;
        default: return kAttrUndefined;
    }
}

// Applies one special id: a default outside the vocabulary is dropped, a key inside it wins.
void applyId(int32_t& id, const std::optional<int64_t>& key, int32_t n) {
    if (id >= n) id = kNoToken;
    if (key && *key >= 0 && *key < n) id = int32_t(*key);
}

int32_t findFirst(const Vocab& v, std::initializer_list<std::string_view> texts) {
    for (std::string_view t : texts) {
        const int32_t id = v.find(t);
        if (id != kNoToken) return id;
    }
    return kNoToken;
}

void markControl(Vocab& v, int32_t id) {
    if (id != kNoToken) v.attrs[size_t(id)] |= kAttrControl;
}

std::string lowerAscii(std::string s) {
    for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return s;
}

}  // namespace

std::optional<std::string> Vocab::unsupported(std::string_view model, std::string_view pre) {
    if (model == "llama" || model == "bert" || model == "gemma4") return std::nullopt;
    if (model == "gpt2") {
        if (lookupPreTokenizer(pre)) return std::nullopt;
        return "tokenizer.ggml.pre = '" + std::string(pre) + "': unknown pre-tokenizer";
    }
    if (model == "no_vocab" || model == "none")
        return "tokenizer.ggml.model = '" + std::string(model) + "': the model has no vocabulary";
    return "tokenizer.ggml.model = '" + std::string(model) + "': unsupported tokenizer (supported: llama, gpt2, bert, gemma4)";
}

Result<Vocab> Vocab::build(VocabSpec spec) {
    Vocab v;
    v.model = spec.model;
    v.pre = spec.pre;
    const int32_t n = int32_t(spec.tokens.size());
    if (spec.tokens.empty()) return Error{"tokenizer.ggml.tokens is empty"};
    if (spec.tokens.size() > size_t(INT32_MAX / 2)) return Error{"tokenizer.ggml.tokens: too many tokens"};

    // Vocabulary type and its default special tokens.
    if (spec.model == "llama") {
        v.type = VocabType::Spm;
        v.bos = 1;
        v.eos = 2;
        v.unk = 0;
    } else if (spec.model == "bert") {
        v.type = VocabType::Wpm;
        v.bos = 101;
        v.unk = 100;
        v.sep = 102;
        v.pad = 0;
        v.mask = 103;
        v.addSep = true;
    } else if (spec.model == "gpt2") {
        v.type = VocabType::Bpe;
        if (!spec.merges && spec.pre != "kimi-k2")
            return Error{"tokenizer.ggml.merges: missing (required by tokenizer model 'gpt2')"};
        v.bos = 11;
        v.eos = 11;
    } else if (spec.model == "gemma4") {
        v.type = VocabType::CharBpe;
        if (!spec.merges) return Error{"tokenizer.ggml.merges: missing (required by tokenizer model 'gemma4')"};
        v.bos = 2;
        v.eos = 1;
        v.unk = 3;
        v.pad = 0;
    } else {
        return Error{*unsupported(spec.model, spec.pre)};
    }

    switch (v.type) {
        case VocabType::Bpe: {
            const auto info = lookupPreTokenizer(spec.pre);
            if (!info) return Error{*unsupported(spec.model, spec.pre)};
            v.preInfo = *info;
            v.addSpacePrefix = false;
            v.escapeWhitespaces = false;
            v.cleanSpaces = info->cleanSpaces;
            v.ignoreMerges = info->ignoreMerges;
            v.addBos = info->addBos;
            v.addSep = v.addSep || info->addSep;
            if (info->noBos) v.bos = kNoToken;
            break;
        }
        case VocabType::Spm:
            v.addSpacePrefix = true;
            v.cleanSpaces = false;
            v.addBos = true;
            v.addEos = false;
            break;
        case VocabType::CharBpe:
            v.addSpacePrefix = false;
            v.escapeWhitespaces = true;
            v.cleanSpaces = false;
            v.addBos = true;
            v.addEos = false;
            break;
        case VocabType::Wpm:
            v.addSpacePrefix = false;
            v.cleanSpaces = true;
            v.addBos = true;
            v.addEos = false;
            v.addSep = true;
            break;
    }
    if (spec.addSpacePrefix) v.addSpacePrefix = *spec.addSpacePrefix;
    if (spec.removeExtraWhitespaces) v.removeExtraWhitespaces = *spec.removeExtraWhitespaces;

    // Tokens.
    if (!spec.scores.empty() && spec.scores.size() < spec.tokens.size())
        return Error{"tokenizer.ggml.scores has " + std::to_string(spec.scores.size()) + " entries for " +
                     std::to_string(n) + " tokens"};
    if (!spec.tokenTypes.empty() && spec.tokenTypes.size() < spec.tokens.size())
        return Error{"tokenizer.ggml.token_type has " + std::to_string(spec.tokenTypes.size()) + " entries for " +
                     std::to_string(n) + " tokens"};
    size_t bytes = 0;
    for (const std::string& t : spec.tokens) bytes += t.size();
    v.texts.reserve(spec.tokens.size(), bytes + 64);
    v.scores.resize(size_t(n), 0.0f);
    v.attrs.resize(size_t(n), kAttrNormal);
    for (int32_t i = 0; i < n; ++i) {
        std::string word = std::move(spec.tokens[size_t(i)]);
        if (word.empty()) word = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
        bool duplicate = false;
        const int32_t id = v.texts.add(word, &duplicate);
        if (duplicate)
            return Error{"tokenizer.ggml.tokens: duplicate token '" + word + "' (ids " + std::to_string(id) + " and " +
                         std::to_string(i) + ")"};
        v.maxTokenLength = std::max(v.maxTokenLength, word.size());
        if (!spec.scores.empty()) v.scores[size_t(i)] = spec.scores[size_t(i)];
        if (!spec.tokenTypes.empty()) v.attrs[size_t(i)] = attrOfType(spec.tokenTypes[size_t(i)]);
    }
    if (spec.merges) v.merges = std::move(*spec.merges);

    // Special ids.
    applyId(v.bos, spec.bos, n);
    applyId(v.eos, spec.eos, n);
    applyId(v.eot, spec.eot, n);
    applyId(v.eom, spec.eom, n);
    applyId(v.unk, spec.unk, n);
    applyId(v.sep, spec.sep, n);
    applyId(v.pad, spec.pad, n);
    applyId(v.mask, spec.mask, n);
    applyId(v.fimPre, spec.fimPre, n);
    applyId(v.fimSuf, spec.fimSuf, n);
    applyId(v.fimMid, spec.fimMid, n);
    applyId(v.fimPad, spec.fimPad, n);
    applyId(v.fimRep, spec.fimRep, n);
    applyId(v.fimSep, spec.fimSep, n);
    v.cls = v.type == VocabType::Wpm ? v.bos : kNoToken;
    applyId(v.cls, spec.cls, n);

    if (spec.addBos) v.addBos = *spec.addBos;
    if (spec.addEos) v.addEos = *spec.addEos;
    if (spec.addSep) v.addSep = *spec.addSep;
    if (v.addBos && v.bos == kNoToken) return Error{"tokenizer.ggml.add_bos_token is true, but bos_token_id is not set"};
    if (v.addEos && v.eos == kNoToken) return Error{"tokenizer.ggml.add_eos_token is true, but eos_token_id is not set"};
    if (v.addSep && v.sep == kNoToken) return Error{"tokenizer.ggml.add_sep_token is true, but seperator_token_id is not set"};

    if (spec.lowercase) v.lowercase = *spec.lowercase;
    v.stripAccents = v.lowercase;
    if (spec.stripAccents) v.stripAccents = *spec.stripAccents;

    // Special tokens recognised by their text (llama.cpp's auto-detection). Where several
    // candidates exist, the first of the list wins (llama.cpp takes whichever its hash map
    // yields first).
    if (v.eot == kNoToken) {
        v.eot = findFirst(v, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                              "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
                              "<end_of_utterance>"});
        markControl(v, v.eot);
    }
    if (v.eom == kNoToken) {
        v.eom = findFirst(v, {"<|eom_id|>"});
        markControl(v, v.eom);
    }
    if (v.fimPre == kNoToken) {
        v.fimPre = findFirst(v, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                                 "▁<PRE>", "<|code_prefix|>", "<|prefix|>"});
        markControl(v, v.fimPre);
    }
    if (v.fimSuf == kNoToken) {
        v.fimSuf = findFirst(v, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                                 "▁<SUF>", "<|code_suffix|>", "<|suffix|>"});
        markControl(v, v.fimSuf);
    }
    if (v.fimMid == kNoToken) {
        v.fimMid = findFirst(v, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                                 "▁<MID>", "<|code_middle|>", "<|middle|>"});
        markControl(v, v.fimMid);
    }
    if (v.fimPad == kNoToken) {
        v.fimPad = findFirst(v, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"});
        markControl(v, v.fimPad);
    }
    if (v.fimRep == kNoToken) {
        v.fimRep = findFirst(v, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"});
        markControl(v, v.fimRep);
    }
    if (v.fimSep == kNoToken) {
        v.fimSep = findFirst(v, {"<|file_sep|>"});
        markControl(v, v.fimSep);
    }
    // Control tokens named "unused..." are unused.
    for (int32_t id = 0; id < n; ++id) {
        uint32_t& a = v.attrs[size_t(id)];
        if ((a & kAttrControl) && v.text(id).find("unused") != std::string_view::npos) a |= kAttrUnused;
    }

    // End-of-generation tokens.
    std::vector<int32_t> eog;
    for (int32_t id : {v.fimPad, v.fimRep, v.fimSep})
        if (id != kNoToken) eog.push_back(id);
    for (std::string_view t : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>",
                               "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>",
                               "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>", "<end_of_utterance>", "<eos>",
                               "<turn|>", "<|tool_response>", "<｜end▁of▁sentence｜>", "[e~["}) {
        const int32_t id = v.find(t);
        if (id == kNoToken) continue;
        eog.push_back(id);
        markControl(v, id);
    }
    for (const char* t : {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"}) {
        const int32_t id = v.find(t);
        if (id != kNoToken) v.attrs[size_t(id)] = kAttrUserDefined;  // gpt-oss: always rendered
    }
    for (int32_t id : {v.eos, v.eot, v.eom})
        if (id != kNoToken) eog.push_back(id);
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
    v.eog = eog;
    auto eogHas = [&](std::string_view t) {
        const int32_t id = v.find(t);
        return id != kNoToken && v.isEog(id) ? id : kNoToken;
    };
    auto eogErase = [&](int32_t id, uint32_t newAttr) {
        v.eog.erase(std::remove(v.eog.begin(), v.eog.end(), id), v.eog.end());
        v.attrs[size_t(id)] = newAttr;
    };
    // o200k_harmony / solar-open: <|end|> does not end generation there.
    if (const int32_t end = eogHas("<|end|>"); end != kNoToken) {
        const bool ret = eogHas("<|return|>") != kNoToken;
        const bool call = eogHas("<|call|>") != kNoToken || eogHas("<|calls|>") != kNoToken;
        const bool flush = eogHas("<|flush|>") != kNoToken;
        if ((ret && call) || (call && flush)) eogErase(end, kAttrUserDefined);
    }
    // gemma4 / paddleocr: </s> is not an end-of-generation token.
    if (const int32_t s = eogHas("</s>"); s != kNoToken && eogHas("<|tool_response>") != kNoToken)
        eogErase(s, kAttrNormal);

    // Tokens the text partitioner looks for: longest first, then by id.
    for (int32_t id = 0; id < n; ++id) {
        if (v.attrs[size_t(id)] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) v.specialTokens.push_back(id);
    }
    std::stable_sort(v.specialTokens.begin(), v.specialTokens.end(),
                     [&](int32_t a, int32_t b) { return v.text(a).size() > v.text(b).size(); });

    // Per-model attributes that GGUF does not carry.
    const std::string name = lowerAscii(spec.name);
    auto setAttr = [&](std::string_view text, uint32_t bit, bool on) {
        const int32_t id = v.find(text);
        if (id == kNoToken) return;
        if (on) v.attrs[size_t(id)] |= bit;
        else v.attrs[size_t(id)] &= ~bit;
    };
    const bool jina = spec.pre == "jina-v2-de" || spec.pre == "jina-v2-es" || spec.pre == "jina-v2-code" ||
                      spec.architecture.find("nomic-bert-moe") != std::string::npos ||
                      spec.architecture.find("jina-bert-v3") != std::string::npos;
    if (jina) {
        setAttr("<mask>", kAttrLStrip, true);
    } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (int32_t id : v.specialTokens) v.attrs[size_t(id)] |= kAttrRStrip;
        setAttr("</s>", kAttrRStrip, true);
        for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) setAttr(t, kAttrRStrip, false);
    } else if (name.find("modern-bert") != std::string::npos) {
        setAttr("[MASK]", kAttrLStrip, true);
    }
    return v;
}

}  // namespace verdict::tok
