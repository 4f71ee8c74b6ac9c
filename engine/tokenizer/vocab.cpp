#include "tokenizer/vocab.h"

#include "gguf/gguf_file.h"
#include "tokenizer/unicode.h"

#include <algorithm>
#include <string>

namespace verdict::tok {

namespace {

std::string keyError(const std::string& key, const std::string& what) {
    return "tokenizer metadata '" + key + "': " + what;
}

Result<std::vector<std::string>> readStringArray(const gguf::GgufFile& f, const std::string& key, bool required) {
    std::vector<std::string> out;
    const gguf::Value* v = f.find(key);
    if (!v) {
        if (required) return Error{f.path() + ": " + keyError(key, "missing")};
        return out;
    }
    const std::vector<gguf::Value>* arr = v->asArray();
    if (!arr || v->elemType != gguf::ValueType::String)
        return Error{f.path() + ": " + keyError(key, "expected an array of strings")};
    out.reserve(arr->size());
    for (const gguf::Value& e : *arr) out.push_back(*e.asString());
    return out;
}

Result<std::optional<int64_t>> readId(const gguf::GgufFile& f, const std::string& key) {
    const gguf::Value* v = f.find(key);
    if (!v) return std::optional<int64_t>{};
    if (v->type == gguf::ValueType::Array || v->type == gguf::ValueType::String ||
        v->type == gguf::ValueType::Bool)
        return Error{f.path() + ": " + keyError(key, "expected an integer token id")};
    if (auto i = v->asInt()) return std::optional<int64_t>{*i};
    return std::optional<int64_t>{int64_t(-1)};  // not representable: treated as out of range
}

Result<std::optional<bool>> readFlag(const gguf::GgufFile& f, const std::string& key) {
    const gguf::Value* v = f.find(key);
    if (!v) return std::optional<bool>{};
    if (auto b = v->asBool()) return std::optional<bool>{*b};
    return Error{f.path() + ": " + keyError(key, "expected a bool")};
}

}  // namespace

Result<VocabSpec> readVocabSpec(const gguf::GgufFile& f) {
    VocabSpec s;
    const std::string kModel = "tokenizer.ggml.model";
    const gguf::Value* model = f.find(kModel);
    if (!model) return Error{f.path() + ": " + keyError(kModel, "missing (the file has no tokenizer)")};
    if (!model->asString()) return Error{f.path() + ": " + keyError(kModel, "expected a string")};
    s.model = *model->asString();
    if (const gguf::Value* pre = f.find("tokenizer.ggml.pre")) {
        if (!pre->asString()) return Error{f.path() + ": " + keyError("tokenizer.ggml.pre", "expected a string")};
        s.pre = *pre->asString();
    }
    s.name = f.getString("general.name").value_or("");
    s.architecture = f.getString("general.architecture").value_or("");

    auto tokens = readStringArray(f, "tokenizer.ggml.tokens", true);
    if (!tokens) return tokens.error();
    s.tokens = std::move(tokens.value());

    if (const gguf::Value* v = f.find("tokenizer.ggml.scores")) {
        const auto* arr = v->asArray();
        if (!arr || (v->elemType != gguf::ValueType::Float32 && v->elemType != gguf::ValueType::Int32))
            return Error{f.path() + ": " + keyError("tokenizer.ggml.scores", "expected an array of f32 or i32")};
        s.scores.reserve(arr->size());
        for (const gguf::Value& e : *arr) s.scores.push_back(float(e.asFloat().value_or(0.0)));
    }
    if (const gguf::Value* v = f.find("tokenizer.ggml.token_type")) {
        const auto* arr = v->asArray();
        if (!arr || v->elemType != gguf::ValueType::Int32)
            return Error{f.path() + ": " + keyError("tokenizer.ggml.token_type", "expected an array of i32")};
        s.tokenTypes.reserve(arr->size());
        for (const gguf::Value& e : *arr) s.tokenTypes.push_back(int32_t(e.asInt().value_or(0)));
    }
    if (f.find("tokenizer.ggml.merges")) {
        auto merges = readStringArray(f, "tokenizer.ggml.merges", true);
        if (!merges) return merges.error();
        s.merges = std::move(merges.value());
    }

    struct IdKey {
        const char* key;
        std::optional<int64_t>* out;
    };
    const IdKey ids[] = {
        {"tokenizer.ggml.bos_token_id", &s.bos},       {"tokenizer.ggml.eos_token_id", &s.eos},
        {"tokenizer.ggml.eot_token_id", &s.eot},       {"tokenizer.ggml.eom_token_id", &s.eom},
        {"tokenizer.ggml.unknown_token_id", &s.unk},   {"tokenizer.ggml.seperator_token_id", &s.sep},
        {"tokenizer.ggml.padding_token_id", &s.pad},   {"tokenizer.ggml.cls_token_id", &s.cls},
        {"tokenizer.ggml.mask_token_id", &s.mask},     {"tokenizer.ggml.fim_pre_token_id", &s.fimPre},
        {"tokenizer.ggml.fim_suf_token_id", &s.fimSuf}, {"tokenizer.ggml.fim_mid_token_id", &s.fimMid},
        {"tokenizer.ggml.fim_pad_token_id", &s.fimPad}, {"tokenizer.ggml.fim_rep_token_id", &s.fimRep},
        {"tokenizer.ggml.fim_sep_token_id", &s.fimSep},
        // deprecated names, read after the new ones as llama.cpp does
        {"tokenizer.ggml.prefix_token_id", &s.fimPre}, {"tokenizer.ggml.suffix_token_id", &s.fimSuf},
        {"tokenizer.ggml.middle_token_id", &s.fimMid},
    };
    for (const IdKey& k : ids) {
        auto r = readId(f, k.key);
        if (!r) return r.error();
        if (r.value()) *k.out = r.value();
    }
    struct FlagKey {
        const char* key;
        std::optional<bool>* out;
    };
    const FlagKey flags[] = {
        {"tokenizer.ggml.add_bos_token", &s.addBos},
        {"tokenizer.ggml.add_eos_token", &s.addEos},
        {"tokenizer.ggml.add_sep_token", &s.addSep},
        {"tokenizer.ggml.add_space_prefix", &s.addSpacePrefix},
        {"tokenizer.ggml.remove_extra_whitespaces", &s.removeExtraWhitespaces},
        {"tokenizer.ggml.normalizer.lowercase", &s.lowercase},
        {"tokenizer.ggml.normalizer.strip_accents", &s.stripAccents},
    };
    for (const FlagKey& k : flags) {
        auto r = readFlag(f, k.key);
        if (!r) return r.error();
        *k.out = r.value();
    }
    return s;
}

bool Vocab::isEog(int32_t id) const { return std::binary_search(eog.begin(), eog.end(), id); }

int32_t Vocab::byteToken(uint8_t b) const {
    if (type == VocabType::Spm || type == VocabType::CharBpe) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        const char buf[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
        const int32_t id = find(std::string_view(buf, 6));
        if (id != kNoToken) return id;
        return find(std::string_view(reinterpret_cast<const char*>(&b), 1));
    }
    std::string s;
    appendUtf8(s, byteToAlphabetCp(b));
    return find(s);
}

int Vocab::byteOfToken(int32_t id) const {
    const std::string_view t = text(id);
    // <0xNN>: the two hex digits after "<0x" (llama.cpp token_to_byte reads substr(3, 2)).
    if (t.size() < 5 || t.substr(0, 3) != "<0x") return -1;
    auto hex = [](char ch) {
        return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
    };
    const int hi = hex(t[3]), lo = hex(t[4]);
    return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

}  // namespace verdict::tok
