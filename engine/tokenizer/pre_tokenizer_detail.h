// Internal building blocks of the pre-tokenizers (see pre_tokenizer.h for the semantics).
#pragma once

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"

#include <cstddef>
#include <cstdint>

namespace verdict::tok::pretok {

// Flags of c[i] inside a piece ending at e; 0 past the end (llama.cpp's splitters do the same).
inline uint16_t flagsAt(const uint32_t* c, size_t i, size_t e) { return i < e ? cpFlags(c[i]) : 0; }

// Flags as llama.cpp's std::regex path sees them (its "collapsed" text): '~' is no \p{S}.
inline uint16_t regexFlagsAt(const uint32_t* c, size_t i, size_t e) {
    if (i >= e) return 0;
    const uint16_t f = cpFlags(c[i]);
    return c[i] == '~' ? uint16_t(f & ~kCpSymbol) : f;
}

// Code point as llama.cpp's std::wregex path sees it: non-ASCII white space becomes U+000B.
inline uint32_t wideSeen(uint32_t cp) {
    return (cp > 0x7F && (cpFlags(cp) & kCpWhitespace)) ? 0x0B : cp;
}

inline bool isSpaceAt(const uint32_t* c, size_t i, size_t e) {
    return i < e && (cpFlags(c[i]) & kCpWhitespace);
}

inline bool isCrLf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

// Splits the piece [b, e) by a matcher: `match(c, p, e)` returns the length of the match
// starting at p (0 = none). Matches and the gaps between them go to `next(begin, end)` in order,
// like std::regex_iterator over the piece.
template <class Match, class Next>
void splitByMatches(const uint32_t* c, size_t b, size_t e, Match&& match, Next&& next) {
    size_t gap = b;
    for (size_t p = b; p < e;) {
        const size_t k = match(c, p, e);
        if (k == 0) {
            ++p;
            continue;
        }
        if (p > gap) next(gap, p);
        next(p, p + k);
        p += k;
        gap = p;
    }
    if (gap < e) next(gap, e);
}

// llama.cpp's dedicated splitters (src/unicode.cpp unicode_regex_split_custom_*).
// Each splits the piece [b, e) and passes the words to `out`.
void splitGpt2(const uint32_t* c, size_t b, size_t e, WordSink out);
// maxDigits 3 is llama.cpp's Llama-3 splitter; 1 gives the same semantics as the Qwen2 regex.
// marksAreLetters: Qwen3.5's variant (llama.cpp v0.5.0, pre "qwen35"): combining marks \p{M} join
// the letter runs and leave the punctuation runs: [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ and
// ?[^\s\p{L}\p{M}\p{N}]+[\r\n]* (a base letter and its combining accents stay one word).
void splitLlama3(const uint32_t* c, size_t b, size_t e, size_t maxDigits, WordSink out, bool marksAreLetters = false);
void splitKimiK2(const uint32_t* c, size_t b, size_t e, WordSink out);

// Matchers of the long single-expression patterns.
size_t matchGpt4o(const uint32_t* c, size_t p, size_t e, bool contractions, size_t maxDigits);
size_t matchDeepseek3(const uint32_t* c, size_t p, size_t e);

}  // namespace verdict::tok::pretok
