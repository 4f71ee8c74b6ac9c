// Dispatch of the reference (de)quantizers by tensor type.
#include "tensor/quantize.h"

#include "tensor/half.h"
#include "tensor/quant_internal.h"

#include <cassert>
#include <cstring>
#include <string>

namespace verdict::tensor {
namespace {

template <class Block>
const Block* as(const void* p) { return static_cast<const Block*>(p); }
template <class Block>
Block* as(void* p) { return static_cast<Block*>(p); }

}  // namespace

bool canDequantize(TensorType t) {
    switch (t) {
        case TensorType::F32: case TensorType::F16: case TensorType::BF16:
        case TensorType::Q4_0: case TensorType::Q4_1: case TensorType::Q5_0: case TensorType::Q5_1:
        case TensorType::Q8_0: case TensorType::Q8_1: case TensorType::Q2_K: case TensorType::Q3_K:
        case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K: case TensorType::Q8_K:
        case TensorType::IQ4_NL: case TensorType::IQ4_XS: case TensorType::MXFP4:
        case TensorType::IQ2_XXS: case TensorType::IQ2_XS: case TensorType::IQ2_S: case TensorType::IQ3_XXS:
        case TensorType::IQ3_S: case TensorType::IQ1_S: case TensorType::IQ1_M: case TensorType::TQ1_0:
        case TensorType::TQ2_0:
            return true;
        default:
            return false;
    }
}

bool canQuantize(TensorType t) {
    // The lattice i-quants and the ternary formats are read, not written (files come from llama-quantize).
    switch (t) {
        case TensorType::IQ2_XXS: case TensorType::IQ2_XS: case TensorType::IQ2_S: case TensorType::IQ3_XXS:
        case TensorType::IQ3_S: case TensorType::IQ1_S: case TensorType::IQ1_M: case TensorType::TQ1_0:
        case TensorType::TQ2_0:
            return false;
        default:
            return canDequantize(t);
    }
}

void dequantizeRow(TensorType t, const void* src, float* dst, int64_t n) {
    using namespace detail;
    assert(canDequantize(t) && n % traits(t).blockElems == 0);
    switch (t) {
        case TensorType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); break;
        case TensorType::F16: fp16ToFp32Row(static_cast<const uint16_t*>(src), dst, n); break;
        case TensorType::BF16: bf16ToFp32Row(static_cast<const uint16_t*>(src), dst, n); break;
        case TensorType::Q4_0: dequantizeQ4_0(as<BlockQ4_0>(src), dst, n); break;
        case TensorType::Q4_1: dequantizeQ4_1(as<BlockQ4_1>(src), dst, n); break;
        case TensorType::Q5_0: dequantizeQ5_0(as<BlockQ5_0>(src), dst, n); break;
        case TensorType::Q5_1: dequantizeQ5_1(as<BlockQ5_1>(src), dst, n); break;
        case TensorType::Q8_0: dequantizeQ8_0(as<BlockQ8_0>(src), dst, n); break;
        case TensorType::Q8_1: dequantizeQ8_1(as<BlockQ8_1>(src), dst, n); break;
        case TensorType::Q2_K: dequantizeQ2_K(as<BlockQ2_K>(src), dst, n); break;
        case TensorType::Q3_K: dequantizeQ3_K(as<BlockQ3_K>(src), dst, n); break;
        case TensorType::Q4_K: dequantizeQ4_K(as<BlockQ4_K>(src), dst, n); break;
        case TensorType::Q5_K: dequantizeQ5_K(as<BlockQ5_K>(src), dst, n); break;
        case TensorType::Q6_K: dequantizeQ6_K(as<BlockQ6_K>(src), dst, n); break;
        case TensorType::Q8_K: dequantizeQ8_K(as<BlockQ8_K>(src), dst, n); break;
        case TensorType::IQ4_NL: dequantizeIQ4_NL(as<BlockIQ4_NL>(src), dst, n); break;
        case TensorType::IQ4_XS: dequantizeIQ4_XS(as<BlockIQ4_XS>(src), dst, n); break;
        case TensorType::MXFP4: dequantizeMXFP4(as<BlockMXFP4>(src), dst, n); break;
        case TensorType::IQ2_XXS: dequantizeIQ2_XXS(as<BlockIQ2_XXS>(src), dst, n); break;
        case TensorType::IQ2_XS: dequantizeIQ2_XS(as<BlockIQ2_XS>(src), dst, n); break;
        case TensorType::IQ2_S: dequantizeIQ2_S(as<BlockIQ2_S>(src), dst, n); break;
        case TensorType::IQ3_XXS: dequantizeIQ3_XXS(as<BlockIQ3_XXS>(src), dst, n); break;
        case TensorType::IQ3_S: dequantizeIQ3_S(as<BlockIQ3_S>(src), dst, n); break;
        case TensorType::IQ1_S: dequantizeIQ1_S(as<BlockIQ1_S>(src), dst, n); break;
        case TensorType::IQ1_M: dequantizeIQ1_M(as<BlockIQ1_M>(src), dst, n); break;
        case TensorType::TQ1_0: dequantizeTQ1_0(as<BlockTQ1_0>(src), dst, n); break;
        case TensorType::TQ2_0: dequantizeTQ2_0(as<BlockTQ2_0>(src), dst, n); break;
        default: break;
    }
}

void quantizeRow(TensorType t, const float* src, void* dst, int64_t n) {
    using namespace detail;
    assert(canQuantize(t) && n % traits(t).blockElems == 0);
    switch (t) {
        case TensorType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); break;
        case TensorType::F16: fp32ToFp16Row(src, static_cast<uint16_t*>(dst), n); break;
        case TensorType::BF16: fp32ToBf16Row(src, static_cast<uint16_t*>(dst), n); break;
        case TensorType::Q4_0: quantizeQ4_0(src, as<BlockQ4_0>(dst), n); break;
        case TensorType::Q4_1: quantizeQ4_1(src, as<BlockQ4_1>(dst), n); break;
        case TensorType::Q5_0: quantizeQ5_0(src, as<BlockQ5_0>(dst), n); break;
        case TensorType::Q5_1: quantizeQ5_1(src, as<BlockQ5_1>(dst), n); break;
        case TensorType::Q8_0: quantizeQ8_0(src, as<BlockQ8_0>(dst), n); break;
        case TensorType::Q8_1: quantizeQ8_1(src, as<BlockQ8_1>(dst), n); break;
        case TensorType::Q2_K: quantizeQ2_K(src, as<BlockQ2_K>(dst), n); break;
        case TensorType::Q3_K: quantizeQ3_K(src, as<BlockQ3_K>(dst), n); break;
        case TensorType::Q4_K: quantizeQ4_K(src, as<BlockQ4_K>(dst), n); break;
        case TensorType::Q5_K: quantizeQ5_K(src, as<BlockQ5_K>(dst), n); break;
        case TensorType::Q6_K: quantizeQ6_K(src, as<BlockQ6_K>(dst), n); break;
        case TensorType::Q8_K: quantizeQ8_K(src, as<BlockQ8_K>(dst), n); break;
        case TensorType::IQ4_NL: quantizeIQ4_NL(src, as<BlockIQ4_NL>(dst), n); break;
        case TensorType::IQ4_XS: quantizeIQ4_XS(src, as<BlockIQ4_XS>(dst), n); break;
        case TensorType::MXFP4: quantizeMXFP4(src, as<BlockMXFP4>(dst), n); break;
        default: break;
    }
}

Result<void> quantizeRows(TensorType t, const float* src, void* dst, int64_t nRows, int64_t rowLen) {
    const auto& tr = traits(t);
    if (!canQuantize(t))
        return Error{"quantize: no quantizer for tensor type " + std::string(tr.name)};
    if (nRows < 0 || rowLen <= 0 || rowLen % tr.blockElems != 0)
        return Error{"quantize: row length " + std::to_string(rowLen) + " is not a positive multiple of " +
                     std::string(tr.name) + "'s block size " + std::to_string(tr.blockElems)};
    const uint64_t rb = *rowBytes(t, static_cast<uint64_t>(rowLen));
    auto* out = static_cast<uint8_t*>(dst);
    for (int64_t r = 0; r < nRows; ++r) quantizeRow(t, src + r * rowLen, out + r * rb, rowLen);
    return okResult();
}

}  // namespace verdict::tensor
