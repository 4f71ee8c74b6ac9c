// The names of split GGUF models, as llama.cpp's gguf-split writes them:
// "NAME-00001-of-00003.gguf" is part 1 of 3 (5-digit part and count). GgufFile::open reads every
// part from the first one's name; model discovery lists a split model once, through part 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace verdict::gguf {

// "name-00001-of-00003.gguf" -> {prefix "name", part 1, count 3}; nullopt when not a split name.
struct SplitName {
    std::string prefix;  // path without "-0000k-of-0000n.gguf"
    uint32_t part = 0;   // 1-based
    uint32_t count = 0;
};
std::optional<SplitName> parseSplitName(const std::string& path);
std::string splitPath(const std::string& prefix, uint32_t part, uint32_t count);

}  // namespace verdict::gguf
