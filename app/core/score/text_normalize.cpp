#include "core/score/text_normalize.h"

#include "core/suite/utf8_text.h"

#include <vector>

namespace verdict::core {

namespace {

// Chinese punctuation without a full-width ASCII twin, mapped to the ASCII mark it stands for.
const char* zhPunctToAscii(char32_t cp) {
    switch (cp) {
    case 0x3002: return ".";   // 。
    case 0xFF61: return ".";   // ｡ half-width ideographic full stop
    case 0x3001: return ",";   // 、
    case 0xFF64: return ",";   // ､
    case 0x201C: case 0x201D: case 0x300C: case 0x300D: case 0x300E: case 0x300F: return "\"";  // “ ” 「 」 『 』
    case 0x2018: case 0x2019: return "'";  // ‘ ’
    case 0x300A: case 0x3008: return "<";  // 《 〈
    case 0x300B: case 0x3009: return ">";  // 》 〉
    case 0x3010: case 0x3014: case 0x3016: return "[";  // 【 〔 〖
    case 0x3011: case 0x3015: case 0x3017: return "]";  // 】 〕 〗
    case 0x2026: return "...";  // …
    case 0x2014: case 0x2013: case 0x2015: return "-";  // — – ―
    case 0x00B7: case 0x30FB: return ".";  // · ・
    case 0x301C: return "~";   // 〜
    default: return nullptr;
    }
}

bool isPunct(char32_t cp) { return utf8::isAsciiPunctuation(cp) || (cp > 0x7F && utf8::isCjkPunctuation(cp)); }

}  // namespace

Result<NormalizeOptions> NormalizeOptions::fromParams(const nlohmann::json& params, const char* scorer) {
    NormalizeOptions o;
    if (!params.is_object()) return o;
    if (auto it = params.find("normalize"); it != params.end()) {
        if (it->is_boolean() && !it->get<bool>()) o = none();
        else if (!it->is_boolean() && !it->is_object())
            return Error{std::string(scorer) + ": param 'normalize' must be true/false or an object"};
    }
    const nlohmann::json* src = &params;
    if (auto it = params.find("normalize"); it != params.end() && it->is_object()) src = &*it;
    struct Key {
        const char* name;
        bool NormalizeOptions::*field;
    };
    for (const Key& k : {Key{"ignore_case", &NormalizeOptions::ignoreCase}, Key{"whitespace", &NormalizeOptions::whitespace},
                         Key{"punctuation", &NormalizeOptions::punctuation}, Key{"width", &NormalizeOptions::width},
                         Key{"zh_punct", &NormalizeOptions::zhPunct}, Key{"articles", &NormalizeOptions::articles}}) {
        auto it = src->find(k.name);
        if (it == src->end()) continue;
        if (!it->is_boolean()) return Error{std::string(scorer) + ": param '" + k.name + "' must be true or false"};
        o.*k.field = it->get<bool>();
    }
    return o;
}

std::string normalizeText(std::string_view text, const NormalizeOptions& o) {
    std::string out;
    out.reserve(text.size());
    bool pendingSpace = false;  // collapse whitespace as we go
    for (size_t i = 0; i < text.size();) {
        char32_t cp = utf8::decodeNext(text, i);
        if (o.width) cp = utf8::toHalfWidth(cp);
        std::string_view mapped;
        char one[5] = {};
        if (o.zhPunct)
            if (const char* a = zhPunctToAscii(cp)) mapped = a;
        if (mapped.empty()) {
            std::string tmp;
            utf8::append(tmp, cp);
            std::copy(tmp.begin(), tmp.end(), one);
            mapped = std::string_view(one, tmp.size());
        }
        for (size_t j = 0; j < mapped.size();) {
            char32_t c = utf8::decodeNext(mapped, j);
            if (o.punctuation && isPunct(c)) continue;
            if (o.ignoreCase) c = utf8::toLower(c);
            if (o.whitespace && utf8::isWhitespace(c)) {
                pendingSpace = !out.empty();
                continue;
            }
            if (pendingSpace) {
                out.push_back(' ');
                pendingSpace = false;
            }
            utf8::append(out, c);
        }
    }
    if (!o.whitespace && !pendingSpace) {
        // nothing to do: whitespace was copied as is
    }
    if (o.articles) {
        std::string kept;
        size_t start = 0;
        while (start <= out.size()) {
            size_t end = out.find(' ', start);
            if (end == std::string::npos) end = out.size();
            const std::string_view word(out.data() + start, end - start);
            std::string lower;
            for (char c : word) lower.push_back(c >= 'A' && c <= 'Z' ? char(c + 32) : c);
            if (!word.empty() && lower != "a" && lower != "an" && lower != "the") {
                if (!kept.empty()) kept.push_back(' ');
                kept.append(word);
            }
            start = end + 1;
        }
        out = std::move(kept);
    }
    return out;
}

std::string foldWidthAndPunctuation(std::string_view text) {
    NormalizeOptions o = NormalizeOptions::none();
    o.width = true;
    o.zhPunct = true;
    std::string out = normalizeText(text, o);
    // U+2212 MINUS SIGN and the full-width one read as '-' for numbers.
    std::string fixed;
    fixed.reserve(out.size());
    for (size_t i = 0; i < out.size();) {
        const size_t start = i;
        const char32_t cp = utf8::decodeNext(out, i);
        if (cp == 0x2212 || cp == 0xFE63) fixed.push_back('-');
        else fixed.append(out, start, i - start);
    }
    return fixed;
}

}  // namespace verdict::core
