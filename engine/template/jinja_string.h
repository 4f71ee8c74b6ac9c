// Python `str` semantics over UTF-8 bytes, for the Jinja interpreter.
//
// Templates index, slice, measure and case-map strings the way Python does: by code point.
// Strings are stored as UTF-8; a byte that is not part of a valid UTF-8 sequence counts as one
// unit of its own (like Python's surrogateescape), so invalid input never fails and never
// merges with its neighbours. Case mapping covers ASCII, Latin-1, Latin Extended-A, Greek,
// Cyrillic, Armenian and fullwidth Latin; other scripts are returned unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::tok::jinja {

// One unit of a UTF-8 string: a code point, or a single invalid byte (valid == false).
struct Utf8Unit {
    char32_t codePoint = 0;
    std::size_t length = 1;  // bytes
    bool valid = true;
};

Utf8Unit decodeUtf8At(std::string_view s, std::size_t pos);
void appendUtf8(std::string& out, char32_t codePoint);
// Number of units (code points, invalid bytes counted one each).
std::size_t utf8Length(std::string_view s);
// Byte offset of every unit start, followed by s.size(): units + 1 entries.
std::vector<std::size_t> utf8Boundaries(std::string_view s);
// Byte offset of unit `unitIndex` (clamped to s.size()).
std::size_t utf8OffsetOfUnit(std::string_view s, std::size_t unitIndex);

// Joins the pieces into one string. Used instead of `"x" + str` chains where GCC 12 emits a
// false -Wrestrict warning (GCC bug 105651).
template <class... Parts>
std::string concat(const Parts&... parts) {
    std::string out;
    (out.append(std::string_view(parts)), ...);
    return out;
}

bool isPySpace(char32_t c);
bool isPyLineBreak(char32_t c);
char32_t upperCodePoint(char32_t c);
char32_t lowerCodePoint(char32_t c);
bool isCasedCodePoint(char32_t c);
bool isAlphaCodePoint(char32_t c);
bool isDigitCodePoint(char32_t c);

std::string pyUpper(std::string_view s);
std::string pyLower(std::string_view s);
std::string pyTitle(std::string_view s);       // str.title()
std::string pyCapitalize(std::string_view s);  // str.capitalize()
std::string jinjaTitle(std::string_view s);    // the `title` filter (splits on -, space, brackets)

// strip family; chars == nullopt strips Python whitespace, otherwise any unit found in *chars.
std::string pyStrip(std::string_view s, const std::optional<std::string>& chars, bool left, bool right);

// str.split / str.rsplit; sep == nullopt splits on whitespace runs and drops empty parts.
// Throws ValueError for an empty separator. maxSplit < 0 means no limit.
std::vector<std::string> pySplit(std::string_view s, const std::optional<std::string>& sep, std::int64_t maxSplit);
std::vector<std::string> pyRSplit(std::string_view s, const std::optional<std::string>& sep, std::int64_t maxSplit);
std::vector<std::string> pySplitLines(std::string_view s, bool keepEnds);

// str.replace with Python's empty-pattern behaviour; count < 0 replaces all.
// LimitError when the result would pass maxBytes (each match can add a whole `to`).
std::string pyReplace(std::string_view s, std::string_view from, std::string_view to, std::int64_t count,
                      std::size_t maxBytes = static_cast<std::size_t>(-1));
// str.find / str.rfind / str.count over units; start/end are unit indices (Python slice rules).
std::int64_t pyFind(std::string_view s, std::string_view sub, std::optional<std::int64_t> start,
                    std::optional<std::int64_t> end, bool reverse);
std::int64_t pyCount(std::string_view s, std::string_view sub);

// markupsafe.escape: & < > " ' become &amp; &lt; &gt; &#34; &#39;.
std::string htmlEscape(std::string_view s);

// Python repr() of a str: quotes chosen like CPython, escapes for non-printable characters.
std::string pyReprString(std::string_view s);
// Python repr() of a float: shortest round-trip digits, '1e-05', '1e+16', '2.0', 'inf', 'nan'.
std::string pyFloatRepr(double v);

}  // namespace verdict::tok::jinja
