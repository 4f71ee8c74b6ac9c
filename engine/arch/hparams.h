// Reading hyper-parameters from GGUF metadata with errors that name the file and the key.
// Keys are "<arch>.<suffix>" (e.g. "llama.embedding_length"); see the GGUF spec's LLM section.
#pragma once

#include "arch/arch_config.h"
#include "gguf/gguf_file.h"
#include "verdict/engine/result.h"

#include <optional>
#include <string>
#include <string_view>

namespace verdict::arch {

class HParams {
public:
    HParams(const gguf::GgufFile& file, std::string arch) : m_file(file), m_arch(std::move(arch)) {}

    std::string key(std::string_view suffix) const { return m_arch + "." + std::string(suffix); }

    // Required unsigned integer "<arch>.<suffix>"; error names the key when absent or not a
    // non-negative integer (arrays, e.g. per-layer head counts, are reported as unsupported).
    Result<int64_t> requireUInt(std::string_view suffix) const;
    // Optional unsigned integer; `fallback` when absent, error when present but malformed.
    Result<int64_t> optionalUInt(std::string_view suffix, int64_t fallback) const;
    Result<float> optionalFloat(std::string_view suffix, float fallback) const;
    std::optional<std::string> optionalString(std::string_view suffix) const;

    // Fills the fields every llama-family architecture shares: sizes, heads, rope, eps, experts.
    // nVocab comes from "<arch>.vocab_size", else the token list, else token_embd's shape.
    Result<void> readCommon(ArchConfig& cfg) const;

    const gguf::GgufFile& file() const { return m_file; }

private:
    Result<void> readRope(ArchConfig& cfg) const;

    const gguf::GgufFile& m_file;
    std::string m_arch;
};

// Checks that the sizes agree with each other (heads divide, experts used <= experts, ...).
Result<void> validateConfig(const ArchConfig& cfg);

}  // namespace verdict::arch
