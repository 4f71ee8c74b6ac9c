// GGUF writer (v3, little-endian), producing files llama.cpp reads. Layout: see gguf_file.h.
// Metadata and tensors are written in the order they were added; each tensor's data starts at a
// multiple of general.alignment, and padding bytes are zero (as llama.cpp writes them), so a file
// read with GgufFile and written back through this class is byte-identical.
#pragma once

#include "gguf/gguf_value.h"
#include "tensor/tensor_type.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace verdict::gguf {

class GgufWriter {
public:
    explicit GgufWriter(uint32_t version = 3) : m_version(version) {}

    // Sets or replaces a key (keeps its first position). "general.alignment" sets the alignment.
    void set(const std::string& key, Value value);

    // ne in ggml order (ne[0] = row length). `data` must stay valid until write(); its size must
    // equal the tensor's byte size (checked in write()).
    void addTensor(const std::string& name, tensor::TensorType type, std::vector<uint64_t> ne,
                   const void* data, uint64_t bytes);
    // Same, with data produced on demand (streamed into the file; nothing kept in memory).
    using Producer = std::function<Result<void>(std::vector<uint8_t>& out)>;
    void addTensor(const std::string& name, tensor::TensorType type, std::vector<uint64_t> ne, Producer produce);

    // Writes the file atomically (temp file + rename). Errors name the path.
    Result<void> write(const std::string& path) const;

private:
    struct PendingTensor {
        std::string name;
        tensor::TensorType type;
        std::vector<uint64_t> ne;
        const void* data = nullptr;
        uint64_t bytes = 0;
        Producer produce;
    };
    uint32_t alignment() const;

    uint32_t m_version;
    std::vector<std::pair<std::string, Value>> m_kv;
    std::vector<PendingTensor> m_tensors;
};

}  // namespace verdict::gguf
