// The ggml tensor type table: every type id llama.cpp writes into GGUF files, with its block size
// (elements per block) and block byte size, so any file can be validated even where the engine
// cannot compute that type yet.
//
// Source of the ids and block layouts: ggml's public header ggml.h (enum ggml_type) and
// ggml-common.h (block_* structs), llama.cpp commit c392e509. Ids 4, 5, 31-33 and 36-38 were
// removed upstream and are rejected. Values stored on disk: never renumber.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace verdict::tensor {

enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
};

struct TypeTraits {
    TensorType type;
    std::string_view name;  // as llama.cpp prints it, e.g. "q4_K"
    uint32_t blockElems;    // elements per block (1 for plain types)
    uint32_t blockBytes;    // bytes per block
    bool quantized;
};

// Traits for a raw type id from a file; nullopt for ids that are unknown or removed.
std::optional<TypeTraits> typeTraits(uint32_t id);
const TypeTraits& traits(TensorType t);

std::string_view typeName(TensorType t);
// Parses "q4_0", "Q4_K", "f16", "bf16" ... (case-insensitive); nullopt if unknown.
std::optional<TensorType> typeFromName(std::string_view name);

// Byte size of a row of n elements; nullopt if n is not a multiple of the block size.
std::optional<uint64_t> rowBytes(TensorType t, uint64_t n);

}  // namespace verdict::tensor
