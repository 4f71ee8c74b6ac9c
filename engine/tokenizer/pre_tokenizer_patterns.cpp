// The long pre-tokenizer patterns. Each function documents the expression it implements; the
// expressions are the ones llama.cpp uses (src/llama-vocab.cpp, llm_tokenizer_bpe), and the
// three splitters follow the control flow of llama.cpp's src/unicode.cpp custom splitters.
#include "tokenizer/pre_tokenizer_detail.h"

namespace verdict::tok::pretok {

namespace {

constexpr uint16_t kWsLetterNumber = kCpWhitespace | kCpLetter | kCpNumber;
constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

inline uint32_t cpAt(const uint32_t* c, size_t i, size_t e) { return i < e ? c[i] : kOutOfRange; }

// Collects word ends of one piece, like the _add_token lambda of llama.cpp's splitters.
struct WordEnds {
    WordSink out;
    size_t prevEnd;
    void endAt(size_t end) {
        if (end > prevEnd) out(prevEnd, end);
        prevEnd = end;
    }
};

// Whitespace tail shared by the Llama-3 family: \s*[\r\n]+ | \s+(?!\S) | \s+ ; returns the new
// position (pos itself when there is no white space at pos).
size_t matchSpaceTail(const uint32_t* c, size_t pos, size_t e) {
    size_t n = 0;
    size_t lastCrLfEnd = 0;
    while (isSpaceAt(c, pos + n, e)) {
        if (isCrLf(c[pos + n])) lastCrLfEnd = pos + n + 1;
        ++n;
    }
    if (lastCrLfEnd > 0) return lastCrLfEnd;
    if (n > 1 && pos + n < e) return pos + n - 1;
    return pos + n;
}

// 's|'t|'re|'ve|'m|'ll|'d after a quote at `pos`; `lower` folds case first. Returns the
// length of the contraction (0 when none).
size_t contractionAt(const uint32_t* c, size_t pos, size_t e, bool fold) {
    if (cpAt(c, pos, e) != '\'' || pos + 1 >= e) return 0;
    auto norm = [&](uint32_t cp) { return fold ? cpToLower(cp) : cp; };
    const uint32_t a = norm(c[pos + 1]);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if (pos + 2 >= e) return 0;
    const uint32_t b = norm(c[pos + 2]);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

}  // namespace

// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
void splitGpt2(const uint32_t* c, size_t b, size_t e, WordSink out) {
    WordEnds sink{out, b};
    for (size_t pos = b; pos < e;) {
        const uint32_t cp = c[pos];
        const uint16_t f = flagsAt(c, pos, e);
        if (const size_t k = contractionAt(c, pos, e, false)) {
            pos += k;
            sink.endAt(pos);
            continue;
        }
        const uint16_t f2 = cp == ' ' ? flagsAt(c, pos + 1, e) : f;
        if (f2 & kCpLetter) {
            pos += (cp == ' ');
            while (flagsAt(c, pos, e) & kCpLetter) ++pos;
            sink.endAt(pos);
            continue;
        }
        if (f2 & kCpNumber) {
            pos += (cp == ' ');
            while (flagsAt(c, pos, e) & kCpNumber) ++pos;
            sink.endAt(pos);
            continue;
        }
        if (!(f2 & kWsLetterNumber) && f2) {
            pos += (cp == ' ');
            for (uint16_t g = flagsAt(c, pos, e); !(g & kWsLetterNumber) && g; g = flagsAt(c, pos, e)) ++pos;
            sink.endAt(pos);
            continue;
        }
        size_t n = 0;
        while (isSpaceAt(c, pos + n, e)) ++n;
        if (n > 1 && pos + n < e) {
            pos += n - 1;
        } else if (n > 0) {
            pos += n;
        } else {
            ++pos;
        }
        sink.endAt(pos);
    }
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
// \s*[\r\n]+|\s+(?!\S)|\s+          (\p{N} alone instead of \p{N}{1,3} when maxDigits is 1)
void splitLlama3(const uint32_t* c, size_t b, size_t e, size_t maxDigits, WordSink out, bool marksAreLetters) {
    WordEnds sink{out, b};
    const uint16_t letter = marksAreLetters ? (kCpLetter | kCpMark) : kCpLetter;
    const uint16_t wsLetterNumber = marksAreLetters ? (kWsLetterNumber | kCpMark) : kWsLetterNumber;
    for (size_t pos = b; pos < e;) {
        const uint32_t cp = c[pos];
        const uint16_t f = flagsAt(c, pos, e);
        if (const size_t k = contractionAt(c, pos, e, true)) {
            pos += k;
            sink.endAt(pos);
            continue;
        }
        if (!(isCrLf(cp) || (f & kCpNumber))) {
            if ((f & letter) || (flagsAt(c, pos + 1, e) & letter)) {
                ++pos;
                while (flagsAt(c, pos, e) & letter) ++pos;
                sink.endAt(pos);
                continue;
            }
        }
        if (f & kCpNumber) {
            size_t ini = pos;
            while (flagsAt(c, pos, e) & kCpNumber) {
                if (++pos - ini >= maxDigits) {
                    sink.endAt(pos);
                    ini = pos;
                }
            }
            sink.endAt(pos);
            continue;
        }
        const uint16_t f2 = cp == ' ' ? flagsAt(c, pos + 1, e) : f;
        if (!(f2 & wsLetterNumber) && f) {
            pos += (cp == ' ');
            for (uint16_t g = flagsAt(c, pos, e); !(g & wsLetterNumber) && g; g = flagsAt(c, pos, e)) ++pos;
            while (pos < e && isCrLf(c[pos])) ++pos;
            sink.endAt(pos);
            continue;
        }
        const size_t next = matchSpaceTail(c, pos, e);
        pos = next > pos ? next : pos + 1;
        sink.endAt(pos);
    }
}

// Kimi-K2 (tokenization_kimi.py): [\p{Han}]+ | letter words without Han, optional lead and
// contraction | \p{N}{1,3} | ?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+(?!\S) | \s+
void splitKimiK2(const uint32_t* c, size_t b, size_t e, WordSink out) {
    WordEnds sink{out, b};
    auto letterNotHan = [&](size_t i) {
        return (flagsAt(c, i, e) & kCpLetter) && !cpIsHan(cpAt(c, i, e));
    };
    for (size_t pos = b; pos < e;) {
        const uint32_t cp = c[pos];
        const uint16_t f = flagsAt(c, pos, e);
        if (cpIsHan(cp)) {
            while (cpIsHan(cpAt(c, pos, e))) ++pos;
            sink.endAt(pos);
            continue;
        }
        const bool leadCandidate = !(isCrLf(cp) || (f & (kCpLetter | kCpNumber)));
        const bool letterPattern = ((f & kCpLetter) && !cpIsHan(cp)) || (leadCandidate && letterNotHan(pos + 1));
        if (letterPattern) {
            bool hasLead = false;
            if (leadCandidate) {
                hasLead = true;
                ++pos;
            }
            bool hasLetters = false;
            while (letterNotHan(pos)) {
                hasLetters = true;
                ++pos;
            }
            if (hasLetters || (!hasLead && letterNotHan(pos))) {
                if (!hasLetters) ++pos;
                while (letterNotHan(pos)) ++pos;
                pos += contractionAt(c, pos, e, true);
                sink.endAt(pos);
                continue;
            }
            if (hasLead) --pos;
        }
        if (f & kCpNumber) {
            size_t ini = pos;
            while (flagsAt(c, pos, e) & kCpNumber) {
                if (++pos - ini >= 3) {
                    sink.endAt(pos);
                    ini = pos;
                }
            }
            sink.endAt(pos);
            continue;
        }
        uint16_t f2 = cp == ' ' ? flagsAt(c, pos + 1, e) : f;
        if (!(f2 & kWsLetterNumber) && f2) {
            pos += (cp == ' ');
            while (!(f2 & kWsLetterNumber) && f2) f2 = flagsAt(c, ++pos, e);
            while (pos < e && isCrLf(c[pos])) ++pos;
            sink.endAt(pos);
            continue;
        }
        const size_t next = matchSpaceTail(c, pos, e);
        pos = next > pos ? next : pos + 1;
        sink.endAt(pos);
    }
}

// GPT-4o / Tekken, as llama.cpp rewrites them for std::regex (lookaheads instead of \p{Lu}..):
//   [^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+C?
//  |[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*C?
//  |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with C = '[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD] (Tekken: no C, \p{N} alone).
size_t matchGpt4o(const uint32_t* c, size_t p, size_t e, bool contractions, size_t maxDigits) {
    auto flags = [&](size_t i) { return regexFlagsAt(c, i, e); };
    // "Upper" = a letter that is not a-z, "lower" = a letter that is not A-Z (in llama.cpp's
    // collapsed text every non-ASCII letter is both).
    auto upper = [&](size_t i) { return (flags(i) & kCpLetter) && !(c[i] >= 'a' && c[i] <= 'z'); };
    auto lower = [&](size_t i) { return (flags(i) & kCpLetter) && !(c[i] >= 'A' && c[i] <= 'Z'); };
    auto lead = [&](size_t i) { return i < e && !isCrLf(c[i]) && !(flags(i) & (kCpLetter | kCpNumber)); };
    // C? is case-insensitive in ASCII only; cpToLower maps no other code point onto the letters
    // of the contractions, so the folding helper gives exactly that.
    auto caseFold = [&](size_t end) { return contractions ? end + contractionAt(c, end, e, true) : end; };
    // Alternative 1: lead? upper* lower+ C?  (greedy upper*, backtracking to the last position
    // from which lower+ can start)
    for (int withLead = 1; withLead >= 0; --withLead) {
        if (withLead && !lead(p)) continue;
        const size_t s = p + size_t(withLead);
        size_t k = 0;
        while (s + k < e && upper(s + k)) ++k;
        size_t i = k + 1;
        if (s + k < e && lower(s + k)) {
            i = k;
        } else {
            for (size_t j = k; j-- > 0;) {
                if (lower(s + j)) {
                    i = j;
                    break;
                }
            }
        }
        if (i <= k) {
            size_t end = s + i;
            while (end < e && lower(end)) ++end;
            return caseFold(end) - p;
        }
    }
    // Alternative 2: lead? upper+ lower* C?
    for (int withLead = 1; withLead >= 0; --withLead) {
        if (withLead && !lead(p)) continue;
        size_t end = p + size_t(withLead);
        if (!(end < e && upper(end))) continue;
        while (end < e && upper(end)) ++end;
        while (end < e && lower(end)) ++end;
        return caseFold(end) - p;
    }
    // \p{N}{1,maxDigits}
    if (flags(p) & kCpNumber) {
        size_t end = p;
        while (end < e && end - p < maxDigits && (flags(end) & kCpNumber)) ++end;
        return end - p;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n/]*
    auto other = [&](size_t i) { return i < e && !(flags(i) & kWsLetterNumber); };
    const size_t s = (c[p] == ' ' && other(p + 1)) ? p + 1 : p;
    if (other(s)) {
        size_t end = s;
        while (other(end)) ++end;
        while (end < e && (isCrLf(c[end]) || c[end] == '/')) ++end;
        return end - p;
    }
    return matchSpaceTail(c, p, e) - p;
}

// DeepSeek-V3 (third expression):
//   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//    ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t matchDeepseek3(const uint32_t* c, size_t p, size_t e) {
    auto flags = [&](size_t i) { return regexFlagsAt(c, i, e); };
    auto asciiAlpha = [&](size_t i) {
        return i < e && ((c[i] >= 'A' && c[i] <= 'Z') || (c[i] >= 'a' && c[i] <= 'z'));
    };
    auto asciiPunct = [&](size_t i) {
        if (i >= e) return false;
        const uint32_t x = c[i];
        return (x >= 0x21 && x <= 0x2F) || (x >= 0x3A && x <= 0x40) || (x >= 0x5B && x <= 0x60) ||
               (x >= 0x7B && x <= 0x7E);
    };
    if (asciiPunct(p) && asciiAlpha(p + 1)) {
        size_t end = p + 1;
        while (asciiAlpha(end)) ++end;
        return end - p;
    }
    auto letterMark = [&](size_t i) { return (flags(i) & (kCpLetter | kCpMark)) != 0; };
    auto lead = [&](size_t i) {
        return i < e && !isCrLf(c[i]) && !(flags(i) & (kCpLetter | kCpPunct | kCpSymbol));
    };
    if (lead(p) && letterMark(p + 1)) {
        size_t end = p + 1;
        while (letterMark(end)) ++end;
        return end - p;
    }
    if (letterMark(p)) {
        size_t end = p;
        while (letterMark(end)) ++end;
        return end - p;
    }
    auto punctSymbol = [&](size_t i) { return (flags(i) & (kCpPunct | kCpSymbol)) != 0; };
    const size_t s = (c[p] == ' ' && punctSymbol(p + 1)) ? p + 1 : p;
    if (punctSymbol(s)) {
        size_t end = s;
        while (punctSymbol(end)) ++end;
        while (end < e && isCrLf(c[end])) ++end;
        return end - p;
    }
    return matchSpaceTail(c, p, e) - p;
}

}  // namespace verdict::tok::pretok
