#include "tokenizer/tokenizer.h"

#include "gguf/gguf_file.h"
#include "tokenizer/models.h"
#include "tokenizer/unicode.h"

#include <limits>

namespace verdict::tok {

namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

void replaceAll(std::string& s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size() + s.size() / 4);
    size_t pos = 0;
    for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
        out.append(s, pos, hit - pos);
        out.append(to);
    }
    out.append(s, pos, std::string::npos);
    s.swap(out);
}

// Byte-level BPE token text -> bytes (llama.cpp llama_decode_text, including its marker for
// characters outside the byte alphabet).
std::string decodeByteLevel(std::string_view text) {
    std::string out;
    size_t off = 0;
    while (off < text.size()) {
        const uint32_t cp = decodeUtf8At(text, off);
        const int b = alphabetCpToByte(cp);
        if (b >= 0) {
            out.push_back(char(b));
            continue;
        }
        static constexpr char kHex[] = "0123456789abcdef";
        std::string utf8;
        appendUtf8(utf8, cp);
        out += "[UNK_BYTE_0x";
        for (const char ch : utf8) {
            out.push_back(kHex[uint8_t(ch) >> 4]);
            out.push_back(kHex[uint8_t(ch) & 15]);
        }
        out.append(text);
        out.push_back(']');
    }
    return out;
}

// llama.cpp's clean_up_tokenization_spaces passes (llama_vocab::impl::detokenize), on bytes.
void cleanSpaces(std::string& t) {
    auto pass = [&t](auto&& body) {
        const size_t n = t.size();
        size_t total = n ? 1 : 0;
        for (size_t i = 1; i < n; ++i) body(i, n, total);
        t.resize(total);
    };
    // " ?", " !", " .", " ," -> drop the space
    pass([&t](size_t i, size_t, size_t& total) {
        const char x = t[i];
        if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
        t[total++] = x;
    });
    // " ' " -> "'"
    pass([&t](size_t& i, size_t n, size_t& total) {
        const char x = t[i];
        if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
            --total;
            t[++i] = '\0';
        }
        t[total++] = x;
    });
    // " 's", " 'm", " 're", " 've" -> drop the space
    pass([&t](size_t i, size_t n, size_t& total) {
        const char x = t[i];
        if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            const char x1 = t[i + 1];
            if (x1 == 's' || x1 == 'm') {
                --total;
            } else if (x1 != 't' && x1 != 'd' && i + 2 < n) {
                const char x2 = t[i + 2];
                if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
            }
        }
        t[total++] = x;
    });
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Result<std::shared_ptr<const Tokenizer>> Tokenizer::fromGguf(const gguf::GgufFile& file) {
    auto spec = readVocabSpec(file);
    if (!spec) return spec.error();
    auto tok = fromSpec(std::move(spec.value()));
    if (!tok) return Error{file.path() + ": " + tok.error().message};
    return tok;
}

Result<std::shared_ptr<const Tokenizer>> Tokenizer::fromSpec(VocabSpec spec) {
    auto vocab = Vocab::build(std::move(spec));
    if (!vocab) return vocab.error();
    std::shared_ptr<Tokenizer> t(new Tokenizer());
    t->m_vocab = std::move(vocab.value());
    Vocab& v = t->m_vocab;
    switch (v.type) {
        case VocabType::Spm:
            t->m_spm = std::make_unique<SpmModel>(v);
            break;
        case VocabType::Bpe: {
            auto bpe = BpeModel::create(v);
            if (!bpe) return bpe.error();
            t->m_bpe = std::move(bpe.value());
            break;
        }
        case VocabType::CharBpe: {
            auto bpe = CharBpeModel::create(v);
            if (!bpe) return bpe.error();
            t->m_charBpe = std::move(bpe.value());
            break;
        }
        case VocabType::Wpm:
            break;
    }
    t->m_special = std::make_unique<SpecialMatcher>(v);

    // Newline token (llama.cpp: SPM byte token of '\n', BPE first token of "\n", else pad).
    if (v.type == VocabType::Spm) {
        v.newline = v.byteToken('\n');
        if (v.newline == kNoToken) v.newline = v.pad;
    } else if (v.type == VocabType::Bpe || v.type == VocabType::CharBpe) {
        std::vector<int32_t> ids;
        t->encodeText("\n", ids);
        v.newline = ids.empty() ? v.pad : ids[0];
    } else {
        v.newline = v.pad;
    }

    t->m_pieceOffsets.reserve(size_t(v.size()) + 1);
    t->m_pieceOffsets.push_back(0);
    for (int32_t id = 0; id < v.size(); ++id) {
        t->m_pieceBlob += t->pieceOf(id);
        if (t->m_pieceBlob.size() > std::numeric_limits<uint32_t>::max()) return Error{"token pieces exceed 4 GiB"};
        t->m_pieceOffsets.push_back(uint32_t(t->m_pieceBlob.size()));
    }
    return std::shared_ptr<const Tokenizer>(std::move(t));
}

std::string Tokenizer::pieceOf(int32_t id) const {
    const uint32_t attr = m_vocab.attr(id);
    const std::string_view text = m_vocab.text(id);
    if (attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) return std::string(text);
    if (attr & kAttrNormal) {
        if (m_vocab.type == VocabType::Bpe && !m_vocab.escapeWhitespaces) return decodeByteLevel(text);
        std::string s(text);
        replaceAll(s, kEscapedSpace, " ");
        return s;
    }
    if (attr & kAttrByte) {
        const int b = m_vocab.byteOfToken(id);
        return b >= 0 ? std::string(1, char(b)) : std::string();
    }
    return {};
}

void Tokenizer::encodeText(std::string_view text, std::vector<int32_t>& out) const {
    switch (m_vocab.type) {
        case VocabType::Spm:
            m_spm->encode(text, out);
            break;
        case VocabType::Bpe:
            m_bpe->encode(text, out);
            break;
        case VocabType::CharBpe:
            m_charBpe->encode(text, out);
            break;
        case VocabType::Wpm:
            wpmEncode(m_vocab, text, out);
            break;
    }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addSpecial, bool parseSpecial) const {
    std::vector<int32_t> out;
    // Offsets are 32-bit and escaping/canonicalising can triple the text: cap the input.
    if (text.size() >= (size_t(1) << 30)) return out;
    out.reserve(text.size() / 4 + 4);
    std::vector<SpecialMatcher::Fragment> frags;
    m_special->partition(text, parseSpecial, frags);
    const Vocab& v = m_vocab;

    switch (v.type) {
        case VocabType::Spm: {
            if (addSpecial && v.addBos) out.push_back(v.bos);
            bool prevSpecial = true;  // the first text gets the space prefix, as after a special token
            std::string buf;
            for (const auto& f : frags) {
                if (f.token != kNoToken) {
                    out.push_back(f.token);
                    prevSpecial = true;
                    continue;
                }
                buf.clear();
                buf.reserve(f.end - f.begin + 16);
                if (v.addSpacePrefix && prevSpecial) buf.append(kEscapedSpace);
                for (const char ch : text.substr(f.begin, f.end - f.begin)) {
                    if (ch == ' ') buf.append(kEscapedSpace);
                    else buf.push_back(ch);
                }
                m_spm->encode(buf, out);
                prevSpecial = false;
            }
            if (addSpecial && v.addEos) out.push_back(v.eos);
            break;
        }
        case VocabType::Bpe:
        case VocabType::CharBpe:
        case VocabType::Wpm: {
            const bool wpm = v.type == VocabType::Wpm;
            if (addSpecial && (wpm || v.addBos) && v.bos != kNoToken) out.push_back(v.bos);
            for (const auto& f : frags) {
                if (f.token != kNoToken) out.push_back(f.token);
                else encodeText(text.substr(f.begin, f.end - f.begin), out);
            }
            if (addSpecial && wpm && v.sep != kNoToken) out.push_back(v.sep);
            if (addSpecial && !wpm && v.addEos) out.push_back(v.eos);
            break;
        }
    }
    return out;
}

std::string Tokenizer::tokenToPiece(int32_t id, bool renderSpecial) const {
    if (id < 0 || id >= m_vocab.size()) return {};
    if (!renderSpecial && (m_vocab.attr(id) & (kAttrUnknown | kAttrControl))) return {};
    return std::string(m_pieceBlob.data() + m_pieceOffsets[size_t(id)],
                       m_pieceOffsets[size_t(id) + 1] - m_pieceOffsets[size_t(id)]);
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool renderSpecial) const {
    std::string out;
    bool removeSpace = m_vocab.addSpacePrefix;
    for (const int32_t id : ids) {
        const std::string piece = tokenToPiece(id, renderSpecial);
        size_t skip = 0;
        if (removeSpace && !piece.empty() && piece[0] == ' ') skip = 1;
        removeSpace = false;
        out.append(piece, skip, std::string::npos);
    }
    if (m_vocab.cleanSpaces) cleanSpaces(out);
    return out;
}

std::string_view Tokenizer::tokenText(int32_t id) const {
    return (id >= 0 && id < m_vocab.size()) ? m_vocab.text(id) : std::string_view();
}

float Tokenizer::tokenScore(int32_t id) const {
    return (id >= 0 && id < m_vocab.size()) ? m_vocab.scores[size_t(id)] : 0.0f;
}

uint32_t Tokenizer::tokenAttr(int32_t id) const {
    return (id >= 0 && id < m_vocab.size()) ? m_vocab.attr(id) : 0u;
}

std::optional<int32_t> Tokenizer::tokenId(std::string_view text) const {
    const int32_t id = m_vocab.find(text);
    if (id == kNoToken) return std::nullopt;
    return id;
}

// ---- StreamDecoder -----------------------------------------------------------------------

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool renderSpecial)
    : m_tok(tokenizer), m_renderSpecial(renderSpecial) {}

std::string StreamDecoder::push(int32_t id) {
    m_pending += m_tok.tokenToPiece(id, m_renderSpecial);
    std::string out;
    size_t pos = 0;
    while (pos < m_pending.size()) {
        const int len = strictUtf8Sequence(std::string_view(m_pending).substr(pos));
        if (len > 0) {
            out.append(m_pending, pos, size_t(len));
            pos += size_t(len);
        } else if (len == 0) {
            break;  // incomplete: wait for the next token
        } else {
            appendUtf8(out, kReplacementChar);
            ++pos;
        }
    }
    m_pending.erase(0, pos);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    if (!m_pending.empty()) appendUtf8(out, kReplacementChar);
    m_pending.clear();
    return out;
}

}  // namespace verdict::tok
