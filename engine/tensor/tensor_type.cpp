#include "tensor/tensor_type.h"

#include <array>
#include <cctype>

namespace verdict::tensor {
namespace {

// Block sizes and bytes from ggml-common.h (QK_K = 256). Comments give the block layout.
constexpr std::array kTraits = {
    TypeTraits{TensorType::F32, "f32", 1, 4, false},
    TypeTraits{TensorType::F16, "f16", 1, 2, false},
    TypeTraits{TensorType::Q4_0, "q4_0", 32, 18, true},      // f16 d, 16 B nibbles
    TypeTraits{TensorType::Q4_1, "q4_1", 32, 20, true},      // f16 d, f16 m, 16 B nibbles
    TypeTraits{TensorType::Q5_0, "q5_0", 32, 22, true},      // f16 d, 4 B high bits, 16 B nibbles
    TypeTraits{TensorType::Q5_1, "q5_1", 32, 24, true},      // f16 d, f16 m, 4 B qh, 16 B qs
    TypeTraits{TensorType::Q8_0, "q8_0", 32, 34, true},      // f16 d, 32 int8
    TypeTraits{TensorType::Q8_1, "q8_1", 32, 36, true},      // f16 d, f16 s, 32 int8
    TypeTraits{TensorType::Q2_K, "q2_K", 256, 84, true},     // 16 scales, 64 qs, f16 d, f16 dmin
    TypeTraits{TensorType::Q3_K, "q3_K", 256, 110, true},    // 32 hmask, 64 qs, 12 scales, f16 d
    TypeTraits{TensorType::Q4_K, "q4_K", 256, 144, true},    // f16 d, f16 dmin, 12 scales, 128 qs
    TypeTraits{TensorType::Q5_K, "q5_K", 256, 176, true},    // f16 d, dmin, 12 scales, 32 qh, 128 qs
    TypeTraits{TensorType::Q6_K, "q6_K", 256, 210, true},    // 128 ql, 64 qh, 16 scales, f16 d
    TypeTraits{TensorType::Q8_K, "q8_K", 256, 292, true},    // f32 d, 256 int8, 16 int16 bsums
    TypeTraits{TensorType::IQ2_XXS, "iq2_xxs", 256, 66, true},
    TypeTraits{TensorType::IQ2_XS, "iq2_xs", 256, 74, true},
    TypeTraits{TensorType::IQ3_XXS, "iq3_xxs", 256, 98, true},
    TypeTraits{TensorType::IQ1_S, "iq1_s", 256, 50, true},
    TypeTraits{TensorType::IQ4_NL, "iq4_nl", 32, 18, true},
    TypeTraits{TensorType::IQ3_S, "iq3_s", 256, 110, true},
    TypeTraits{TensorType::IQ2_S, "iq2_s", 256, 82, true},
    TypeTraits{TensorType::IQ4_XS, "iq4_xs", 256, 136, true},
    TypeTraits{TensorType::I8, "i8", 1, 1, false},
    TypeTraits{TensorType::I16, "i16", 1, 2, false},
    TypeTraits{TensorType::I32, "i32", 1, 4, false},
    TypeTraits{TensorType::I64, "i64", 1, 8, false},
    TypeTraits{TensorType::F64, "f64", 1, 8, false},
    TypeTraits{TensorType::IQ1_M, "iq1_m", 256, 56, true},
    TypeTraits{TensorType::BF16, "bf16", 1, 2, false},
    TypeTraits{TensorType::TQ1_0, "tq1_0", 256, 54, true},
    TypeTraits{TensorType::TQ2_0, "tq2_0", 256, 66, true},
    TypeTraits{TensorType::MXFP4, "mxfp4", 32, 17, true},    // e8m0 scale, 16 B fp4 pairs
};

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

std::optional<TypeTraits> typeTraits(uint32_t id) {
    for (const auto& t : kTraits)
        if (static_cast<uint32_t>(t.type) == id) return t;
    return std::nullopt;
}

const TypeTraits& traits(TensorType t) {
    for (const auto& tr : kTraits)
        if (tr.type == t) return tr;
    return kTraits[0];  // unreachable for valid enum values
}

std::string_view typeName(TensorType t) { return traits(t).name; }

std::optional<TensorType> typeFromName(std::string_view name) {
    for (const auto& t : kTraits)
        if (equalsIgnoreCase(t.name, name)) return t.type;
    return std::nullopt;
}

std::optional<uint64_t> rowBytes(TensorType t, uint64_t n) {
    const auto& tr = traits(t);
    if (n % tr.blockElems != 0) return std::nullopt;
    return n / tr.blockElems * tr.blockBytes;
}

}  // namespace verdict::tensor
