// RAII read-only memory mapping of a whole file. The mapping is shared with the page cache, so
// opening a multi-GB model copies nothing.
#pragma once

#include "verdict/engine/result.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace verdict::gguf {

struct MappedFile {
    const uint8_t* data = nullptr;
    size_t size = 0;
    std::string path;

    static Result<std::unique_ptr<MappedFile>> open(const std::string& path);
    ~MappedFile();
    MappedFile() = default;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
};

}  // namespace verdict::gguf
