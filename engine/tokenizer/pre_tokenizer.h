// Pre-tokenizers of byte-level BPE vocabularies: split text into words before BPE merges.
//
// llama.cpp (src/llama-vocab.cpp, llm_tokenizer_bpe) maps tokenizer.ggml.pre to a list of
// regular expressions applied one after another: each expression splits every current piece
// into its matches and the gaps between them (src/unicode.cpp, unicode_regex_split). Here
// every expression is a hand-written matcher over code points with the same leftmost-first,
// backtracking semantics as the std::regex llama.cpp runs, including its quirks:
//   * outside ASCII, \p{..} classes follow the Unicode category tables (unicode.h) and every
//     non-ASCII White_Space code point counts as \s only (it is seen as U+000B);
//   * inside ASCII, \p{S} lacks '~' (llama.cpp's collapsed class table omits it);
//   * the GPT-2, Llama-3 and Kimi-K2 patterns use llama.cpp's dedicated splitters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace verdict::tok {

// One value per distinct list of expressions (several tokenizer.ggml.pre names share one).
enum class PreType {
    Default,        // llama.cpp's fallback list (BPE vocabularies with pre "default" or none)
    Gpt2,           // gpt-2, mpt, olmo, jais, phi-2, ...
    Llama3,         // llama3 / llama-bpe, dbrx, smaug-bpe, glm4
    Qwen2,          // qwen2, deepseek-r1-qwen, stablelm2, megrez, hunyuan, grok-2
    Qwen35,         // qwen35: Qwen2's with combining marks (\p{M}) in the letter runs
    DeepseekLlm,    // deepseek-llm
    DeepseekCoder,  // deepseek-coder
    Deepseek3,      // deepseek-v3, hunyuan-dense
    Falcon,         // falcon
    Starcoder,      // starcoder, refact, command-r, smollm, codeshell, exaone, minerva-7b
    Gpt4o,          // gpt-4o, llama4, minimax-m2
    Tekken,         // tekken (Mistral Nemo)
    KimiK2,         // kimi-k2
    Bloom,          // bloom, poro-chat, gpt3-finnish
    Viking,         // viking
};

// What a tokenizer.ggml.pre name selects, with the vocabulary flags llama.cpp sets for it.
struct PreTokenizerInfo {
    PreType type = PreType::Default;
    bool cleanSpaces = true;       // detokenizer removes spaces before punctuation
    bool ignoreMerges = false;     // a word that is a whole token is emitted without merging
    bool addBos = false;           // default of add_bos_token when the key is absent
    bool addSep = false;           // default of add_sep_token when the key is absent
    bool noBos = false;            // the vocabulary has no BOS token (chatglm)
};

// nullopt for names llama.cpp does not know (it refuses to load those vocabularies).
// An empty name selects Default, as llama.cpp does (with a warning).
std::optional<PreTokenizerInfo> lookupPreTokenizer(std::string_view name);

// Non-owning reference to a callable `void(size_t begin, size_t end)`.
class WordSink {
public:
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, WordSink>)
    WordSink(F& f) : m_ctx(&f), m_fn([](void* ctx, size_t b, size_t e) { (*static_cast<F*>(ctx))(b, e); }) {}  // NOLINT
    void operator()(size_t b, size_t e) const { m_fn(m_ctx, b, e); }

private:
    void* m_ctx;
    void (*m_fn)(void*, size_t, size_t);
};

// Splits `cps[0..n)` into words, calling `sink(begin, end)` (code point offsets) for each word
// in order. Words are never empty and cover the text without gaps.
void preTokenize(PreType type, const uint32_t* cps, size_t n, WordSink sink);

}  // namespace verdict::tok
