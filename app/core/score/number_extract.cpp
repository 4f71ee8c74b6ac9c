#include "core/score/number_extract.h"

#include "core/score/text_normalize.h"

#include <charconv>
#include <cmath>

namespace verdict::core {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

size_t digitsAt(std::string_view s, size_t i) {
    size_t n = 0;
    while (i + n < s.size() && isDigit(s[i + n])) ++n;
    return n;
}

// Parses a number starting at i (s[i] is a digit, a sign or '.'); returns the end, or i if none.
size_t scanNumber(std::string_view s, size_t i, FoundNumber& out) {
    const size_t start = i;
    bool negative = false;
    if (s[i] == '-' || s[i] == '+') {
        negative = s[i] == '-';
        ++i;
    }
    std::string digits;  // the integer part without separators
    size_t lead = digitsAt(s, i);
    if (lead == 0 && !(i + 1 < s.size() && s[i] == '.' && isDigit(s[i + 1]))) return start;
    digits.append(s.substr(i, lead));
    i += lead;
    if (lead >= 1 && lead <= 3) {  // thousands groups: ",ddd" not followed by another digit
        while (i + 3 < s.size() && s[i] == ',' && digitsAt(s, i + 1) == 3) {
            digits.append(s.substr(i + 1, 3));
            i += 4;
        }
    }
    std::string frac;
    if (i + 1 < s.size() && s[i] == '.' && isDigit(s[i + 1])) {
        const size_t n = digitsAt(s, i + 1);
        frac.assign(s.substr(i + 1, n));
        i += 1 + n;
    }
    double value = 0.0;
    const std::string literal = (digits.empty() ? "0" : digits) + (frac.empty() ? "" : "." + frac);
    std::from_chars(literal.data(), literal.data() + literal.size(), value);
    // A fraction a/b: integer numerator, integer denominator, no spaces, and not part of a
    // longer slash chain such as a date (12/25/2020).
    const bool afterSlash = start > 0 && s[start - 1] == '/';
    if (frac.empty() && !afterSlash && i + 1 < s.size() && s[i] == '/' && isDigit(s[i + 1])) {
        const size_t n = digitsAt(s, i + 1);
        double den = 0.0;
        std::from_chars(s.data() + i + 1, s.data() + i + 1 + n, den);
        if (den != 0.0 && !(i + 1 + n < s.size() && (s[i + 1 + n] == '/' || s[i + 1 + n] == '.'))) {
            value /= den;
            i += 1 + n;
        }
    }
    out.value = negative ? -value : value;
    out.text = std::string(s.substr(start, i - start));
    out.offset = start;
    return i;
}

std::string lowerAscii(std::string_view s) {
    std::string o(s);
    for (char& c : o)
        if (c >= 'A' && c <= 'Z') c = char(c + 32);
    return o;
}

}  // namespace

std::vector<FoundNumber> findNumbers(std::string_view text) {
    const std::string s = foldWidthAndPunctuation(text);
    std::vector<FoundNumber> out;
    size_t i = 0;
    while (i < s.size()) {
        const char c = s[i];
        const bool prevAlnum = i > 0 && (isDigit(s[i - 1]) || isAlpha(s[i - 1]));
        const bool canStart = isDigit(c) || ((c == '-' || c == '+') && !prevAlnum && i + 1 < s.size() &&
                                             (isDigit(s[i + 1]) || (s[i + 1] == '.' && i + 2 < s.size() && isDigit(s[i + 2])))) ||
                              (c == '.' && !prevAlnum && i + 1 < s.size() && isDigit(s[i + 1]));
        if (!canStart) {
            ++i;
            continue;
        }
        FoundNumber n;
        const size_t end = scanNumber(s, i, n);
        if (end == i) {
            ++i;
            continue;
        }
        out.push_back(std::move(n));
        i = end;
    }
    return out;
}

std::optional<double> parseNumber(std::string_view text) {
    std::string s = foldWidthAndPunctuation(text);
    size_t b = 0, e = s.size();
    auto trimSpace = [&] {
        while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
        while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
    };
    trimSpace();
    if (b < e && s[b] == '$') ++b;
    if (e > b && (s[e - 1] == '%' || s[e - 1] == '.')) --e;
    trimSpace();
    if (b >= e) return std::nullopt;
    const std::string_view body(s.data() + b, e - b);
    FoundNumber n;
    if (body[0] == '$') return std::nullopt;
    const size_t end = scanNumber(body, 0, n);
    if (end != body.size()) {  // "-$5": sign before the currency
        if (body.size() > 2 && body[0] == '-' && body[1] == '$') {
            std::string again(1, '-');  // (not "-" + string: GCC 12 warns falsely, bug 105329)
            again.append(body.substr(2));
            const size_t end2 = scanNumber(again, 0, n);
            if (end2 == again.size()) return n.value;
        }
        return std::nullopt;
    }
    return n.value;
}

std::optional<FoundNumber> extractAnswerNumber(std::string_view text, NumberPick pick, std::string* how) {
    const std::string folded = foldWidthAndPunctuation(text);
    if (pick == NumberPick::Auto) {
        const std::string lower = lowerAscii(folded);
        struct Marker {
            const char* text;
            const char* name;
        };
        // Strongest marker first: the GSM8K delimiter, then the Chinese "answer", \boxed, English phrases.
        for (const Marker& m : {Marker{"####", "after ####"}, Marker{"答案", "after 答案"}, Marker{"\\boxed{", "in \\boxed{}"},
                                Marker{"answer is", "after 'answer is'"}, Marker{"answer:", "after 'answer:'"}}) {
            const size_t at = lower.rfind(m.text);
            if (at == std::string::npos) continue;
            const auto nums = findNumbers(std::string_view(folded).substr(at + std::string_view(m.text).size()));
            if (nums.empty()) continue;
            FoundNumber n = nums.front();
            n.offset += at + std::string_view(m.text).size();
            if (how) *how = m.name;
            return n;
        }
    }
    const auto nums = findNumbers(folded);
    if (nums.empty()) return std::nullopt;
    if (pick == NumberPick::First) {
        if (how) *how = "first number";
        return nums.front();
    }
    if (how) *how = "last number";
    return nums.back();
}

}  // namespace verdict::core
