#include "tokenizer/unicode.h"

#include "tokenizer/unicode_tables.h"
#include "verdict/engine/unicode_case.h"

#include <algorithm>
#include <array>
#include <map>

namespace verdict::tok {

namespace ut = unicode_tables;

namespace detail {

namespace {

FlagTable makeFlagTable() {
    std::vector<uint16_t> flat(size_t(kMaxCodePoint) + 1, kCpUndefined);
    for (size_t i = 0; i < ut::kFlagRangeCount; ++i) {
        const uint32_t begin = ut::kFlagRanges[i].start;
        const uint32_t end = i + 1 < ut::kFlagRangeCount ? ut::kFlagRanges[i + 1].start
                                                          : kMaxCodePoint + 1;
        std::fill(flat.begin() + begin, flat.begin() + end, ut::kFlagRanges[i].flags);
    }
    for (size_t i = 0; i < ut::kWhiteSpaceCount; ++i) flat[ut::kWhiteSpace[i]] |= kCpWhitespace;

    FlagTable t;
    for (uint32_t c = 0; c < 128; ++c) t.ascii[c] = flat[c];
    // Two-stage table: identical 256-entry blocks are stored once.
    std::map<std::array<uint16_t, 256>, uint16_t> seen;
    const size_t nBlocks = flat.size() / 256;
    t.stage1.resize(nBlocks);
    for (size_t b = 0; b < nBlocks; ++b) {
        std::array<uint16_t, 256> block;
        std::copy(flat.begin() + b * 256, flat.begin() + (b + 1) * 256, block.begin());
        auto [it, inserted] = seen.emplace(block, uint16_t(seen.size()));
        if (inserted) t.stage2.insert(t.stage2.end(), block.begin(), block.end());
        t.stage1[b] = it->second;
    }
    return t;
}

}  // namespace

const FlagTable* buildFlagTable() {
    static const FlagTable table = makeFlagTable();
    return &table;
}

}  // namespace detail

uint32_t cpToLower(uint32_t cp) {
    if (cp < 128) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    const ut::CpPair* begin = ut::kLowercase;
    const ut::CpPair* end = ut::kLowercase + ut::kLowercaseCount;
    const ut::CpPair* it =
        std::lower_bound(begin, end, cp, [](const ut::CpPair& p, uint32_t v) { return p.from < v; });
    return (it != end && it->from == cp) ? it->to : cp;
}

uint32_t cpNfdFirst(uint32_t cp) {
    if (cp < 0xC0) return cp;
    const ut::NfdRange* begin = ut::kNfdRanges;
    const ut::NfdRange* end = ut::kNfdRanges + ut::kNfdRangeCount;
    const ut::NfdRange* it = std::upper_bound(
        begin, end, cp, [](uint32_t v, const ut::NfdRange& r) { return v < r.first; });
    if (it == begin) return cp;
    --it;
    return (cp <= it->last) ? it->value : cp;
}

bool cpIsHan(uint32_t cp) {
    // Ranges from llama.cpp src/unicode.cpp unicode_cpt_is_han (CJK Unified Ideographs, Ext A-F,
    // Compatibility Ideographs and Supplement).
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0x2CEB0 && cp <= 0x2EBEF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0x2F800 && cp <= 0x2FA1F);
}

uint32_t decodeUtf8At(std::string_view s, size_t& off) {
    const size_t n = s.size();
    const uint8_t b0 = uint8_t(s[off]);
    auto cont = [&](size_t i) { return off + i < n && (uint8_t(s[off + i]) & 0xC0) == 0x80; };
    auto cb = [&](size_t i) { return uint32_t(uint8_t(s[off + i]) & 0x3F); };
    if (b0 < 0x80) {
        off += 1;
        return b0;
    }
    if ((b0 & 0x40) == 0) {  // stray continuation byte
        off += 1;
        return kReplacementChar;
    }
    if ((b0 & 0x20) == 0) {
        if (!cont(1)) {
            off += 1;
            return kReplacementChar;
        }
        const uint32_t cp = (uint32_t(b0 & 0x1F) << 6) | cb(1);
        off += 2;
        return cp;
    }
    if ((b0 & 0x10) == 0) {
        if (!cont(1) || !cont(2)) {
            off += 1;
            return kReplacementChar;
        }
        const uint32_t cp = (uint32_t(b0 & 0x0F) << 12) | (cb(1) << 6) | cb(2);
        off += 3;
        return cp;
    }
    if ((b0 & 0x08) == 0) {
        if (!cont(1) || !cont(2) || !cont(3)) {
            off += 1;
            return kReplacementChar;
        }
        const uint32_t cp = (uint32_t(b0 & 0x07) << 18) | (cb(1) << 12) | (cb(2) << 6) | cb(3);
        off += 4;
        return cp <= kMaxCodePoint ? cp : kReplacementChar;
    }
    off += 1;
    return kReplacementChar;
}

size_t utf8EncodedLength(uint32_t cp) {
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(char(cp));
    } else if (cp < 0x800) {
        out.push_back(char(0xC0 | (cp >> 6)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(char(0xE0 | (cp >> 12)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(char(0xF0 | (cp >> 18)));
        out.push_back(char(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(char(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(char(0x80 | (cp & 0x3F)));
    }
}

void decodeUtf8(std::string_view s, std::vector<uint32_t>& cps) {
    cps.clear();
    cps.reserve(s.size());
    size_t off = 0;
    while (off < s.size()) {
        const uint8_t b = uint8_t(s[off]);
        if (b < 0x80) {
            cps.push_back(b);
            ++off;
        } else {
            cps.push_back(decodeUtf8At(s, off));
        }
    }
}

bool canonicalizeUtf8(std::string_view s, std::string& out) {
    // Fast scan: stop at the first sequence whose canonical encoding differs from its bytes.
    size_t off = 0;
    while (off < s.size()) {
        if (uint8_t(s[off]) < 0x80) {
            ++off;
            continue;
        }
        const size_t start = off;
        const uint32_t cp = decodeUtf8At(s, off);
        const size_t len = off - start;
        const bool same = (cp != kReplacementChar || len == 3) && utf8EncodedLength(cp) == len;
        if (!same) break;
    }
    if (off >= s.size()) return false;
    out.assign(s.data(), 0);
    out.reserve(s.size() + 16);
    off = 0;
    while (off < s.size()) appendUtf8(out, decodeUtf8At(s, off));
    return true;
}

int strictUtf8Sequence(std::string_view s) {
    if (s.empty()) return 0;
    const uint8_t b0 = uint8_t(s[0]);
    if (b0 < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return -1;
    }
    for (size_t i = 1; i < len; ++i) {
        if (i >= s.size()) return 0;
        const uint8_t b = uint8_t(s[i]);
        if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return -1;
    }
    return int(len);
}

namespace {

struct ByteAlphabet {
    uint32_t toCp[256];
    std::array<int16_t, 512> fromCp;  // alphabet code points are all below 0x144
};

ByteAlphabet buildByteAlphabet() {
    // GPT-2's bytes_to_unicode (openai/gpt-2 encoder.py): printable Latin-1 bytes map to
    // themselves, the other 68 bytes to U+0100.. in byte order.
    ByteAlphabet a;
    a.fromCp.fill(-1);
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        a.toCp[b] = printable ? b : next++;
        a.fromCp[a.toCp[b]] = int16_t(b);
    }
    return a;
}

const ByteAlphabet& byteAlphabet() {
    static const ByteAlphabet a = buildByteAlphabet();
    return a;
}

}  // namespace

uint32_t byteToAlphabetCp(uint8_t b) { return byteAlphabet().toCp[b]; }

int alphabetCpToByte(uint32_t cp) {
    return cp < 512 ? byteAlphabet().fromCp[cp] : -1;
}

}  // namespace verdict::tok

namespace verdict {
char32_t lowercaseCodePoint(char32_t cp) { return static_cast<char32_t>(tok::cpToLower(static_cast<uint32_t>(cp))); }
}  // namespace verdict
