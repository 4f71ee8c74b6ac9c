// GGUF reader: memory-maps a model file (or the parts of a split model) and parses it.
//
// Byte layout (GGUF v2/v3, little-endian; spec: ggml/docs/gguf.md in the ggml repository):
//   u32 magic "GGUF" (0x46554747) | u32 version (2 or 3; v1 used 32-bit counts and is rejected)
//   u64 n_tensors | u64 n_kv
//   n_kv x { string key | u32 value_type | value }
//       string = u64 length + bytes (no terminator)
//       array  = u32 element_type | u64 count | count x element
//   n_tensors x { string name | u32 n_dims (1..4) | n_dims x u64 ne | u32 ggml_type | u64 offset }
//   padding to general.alignment (default 32) | tensor data (each offset relative to here,
//   a multiple of the alignment)
//
// Split models (name-00001-of-0000N.gguf, keys split.no / split.count) open as one file: the
// metadata of part 1, the tensors of all parts.
//
// Every error names the file and the field or byte offset. Counts are checked against the bytes
// that remain before anything is allocated, so hostile files never cause huge allocations.
#pragma once

#include "gguf/gguf_value.h"
#include "tensor/tensor_type.h"
#include "verdict/engine/gguf_split.h"  // parseSplitName, splitPath
#include "verdict/engine/result.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace verdict::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
constexpr uint32_t kDefaultAlignment = 32;

struct TensorInfo {
    std::string name;
    uint32_t nDims = 0;
    std::array<uint64_t, 4> ne{1, 1, 1, 1};  // ggml order: ne[0] = row length (innermost)
    tensor::TensorType type = tensor::TensorType::F32;
    uint64_t offset = 0;     // relative to the data section of its file
    uint64_t nElements = 0;
    uint64_t nBytes = 0;
    uint32_t part = 0;       // index of the split part holding the data
    const uint8_t* data = nullptr;  // points into the mapping; valid while the GgufFile lives

    uint64_t rows() const { return nElements / ne[0]; }
    std::string shapeString() const;  // "[256, 512]"
};

struct MappedFile;  // RAII mmap, defined in mapped_file.h

class GgufFile {
public:
    // Opens and validates a file. A file named like name-00001-of-00003.gguf also opens its
    // sibling parts. Fails with a precise message on any malformed input.
    static Result<std::unique_ptr<GgufFile>> open(const std::string& path);

    // Parses an in-memory image (no mapping; `data` must outlive the result). Used by the fuzzer
    // and tests. `name` is used in error messages.
    static Result<std::unique_ptr<GgufFile>> parse(const uint8_t* data, size_t size,
                                                   const std::string& name);

    ~GgufFile();
    GgufFile(const GgufFile&) = delete;
    GgufFile& operator=(const GgufFile&) = delete;

    uint32_t version() const { return m_version; }
    uint32_t alignment() const { return m_alignment; }
    const std::string& path() const { return m_path; }
    const std::vector<std::string>& partPaths() const { return m_partPaths; }
    uint64_t fileBytes() const { return m_fileBytes; }  // all parts together

    // Metadata in file order.
    const std::vector<std::pair<std::string, Value>>& metadata() const { return m_kv; }
    const Value* find(std::string_view key) const;
    std::optional<std::string> getString(std::string_view key) const;
    std::optional<uint64_t> getUInt(std::string_view key) const;
    std::optional<int64_t> getInt(std::string_view key) const;
    std::optional<double> getFloat(std::string_view key) const;
    std::optional<bool> getBool(std::string_view key) const;
    const std::vector<Value>* getArray(std::string_view key) const;

    // Tensors in file order (part 1 first).
    const std::vector<TensorInfo>& tensors() const { return m_tensors; }
    const TensorInfo* tensor(std::string_view name) const;

private:
    GgufFile() = default;
    Result<void> parsePart(const uint8_t* data, size_t size, const std::string& name, uint32_t part);
    Result<void> addPart(const std::string& path, uint32_t part);

    uint32_t m_version = 0;
    uint32_t m_alignment = kDefaultAlignment;
    std::string m_path;
    std::vector<std::string> m_partPaths;
    uint64_t m_fileBytes = 0;
    std::vector<std::pair<std::string, Value>> m_kv;
    std::unordered_map<std::string, size_t> m_kvIndex;
    std::vector<TensorInfo> m_tensors;
    std::unordered_map<std::string, size_t> m_tensorIndex;
    std::vector<std::unique_ptr<MappedFile>> m_maps;
};

}  // namespace verdict::gguf
