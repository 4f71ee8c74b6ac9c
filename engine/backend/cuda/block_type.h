// Host-side mapping from the engine's tensor types to the block decoders of block_decode.cuh.
#pragma once

#include "backend/cuda/block_decode.cuh"
#include "tensor/tensor_type.h"

#include <optional>

namespace verdict::cuda {

// The BlockType that decodes weight rows of type t; nullopt for types the CUDA backend cannot
// read (integer types, and the activation formats Q8_1 / Q8_K).
inline std::optional<BlockType> blockTypeFor(tensor::TensorType t) {
    using TT = tensor::TensorType;
    switch (t) {
        case TT::F32: return BlockType::F32;
        case TT::F16: return BlockType::F16;
        case TT::BF16: return BlockType::BF16;
        case TT::Q4_0: return BlockType::Q4_0;
        case TT::Q4_1: return BlockType::Q4_1;
        case TT::Q5_0: return BlockType::Q5_0;
        case TT::Q5_1: return BlockType::Q5_1;
        case TT::Q8_0: return BlockType::Q8_0;
        case TT::Q2_K: return BlockType::Q2_K;
        case TT::Q3_K: return BlockType::Q3_K;
        case TT::Q4_K: return BlockType::Q4_K;
        case TT::Q5_K: return BlockType::Q5_K;
        case TT::Q6_K: return BlockType::Q6_K;
        case TT::IQ4_NL: return BlockType::IQ4_NL;
        case TT::IQ4_XS: return BlockType::IQ4_XS;
        case TT::MXFP4: return BlockType::MXFP4;
        case TT::IQ2_XXS: return BlockType::IQ2_XXS;
        case TT::IQ2_XS: return BlockType::IQ2_XS;
        case TT::IQ2_S: return BlockType::IQ2_S;
        case TT::IQ3_XXS: return BlockType::IQ3_XXS;
        case TT::IQ3_S: return BlockType::IQ3_S;
        case TT::IQ1_S: return BlockType::IQ1_S;
        case TT::IQ1_M: return BlockType::IQ1_M;
        case TT::TQ1_0: return BlockType::TQ1_0;
        case TT::TQ2_0: return BlockType::TQ2_0;
        default: return std::nullopt;
    }
}

// Runtime view of BlockTraits<T> (elements, bytes, 32-element units per block).
struct BlockInfo {
    int elems;
    int bytes;
    int units;
};

template <BlockType T> constexpr BlockInfo blockInfoOf() {
    return {BlockTraits<T>::kElems, BlockTraits<T>::kBytes, BlockTraits<T>::kUnits};
}

constexpr BlockInfo blockInfo(BlockType b) {
    switch (b) {
        case BlockType::F32: return blockInfoOf<BlockType::F32>();
        case BlockType::F16: return blockInfoOf<BlockType::F16>();
        case BlockType::BF16: return blockInfoOf<BlockType::BF16>();
        case BlockType::Q4_0: return blockInfoOf<BlockType::Q4_0>();
        case BlockType::Q4_1: return blockInfoOf<BlockType::Q4_1>();
        case BlockType::Q5_0: return blockInfoOf<BlockType::Q5_0>();
        case BlockType::Q5_1: return blockInfoOf<BlockType::Q5_1>();
        case BlockType::Q8_0: return blockInfoOf<BlockType::Q8_0>();
        case BlockType::Q2_K: return blockInfoOf<BlockType::Q2_K>();
        case BlockType::Q3_K: return blockInfoOf<BlockType::Q3_K>();
        case BlockType::Q4_K: return blockInfoOf<BlockType::Q4_K>();
        case BlockType::Q5_K: return blockInfoOf<BlockType::Q5_K>();
        case BlockType::Q6_K: return blockInfoOf<BlockType::Q6_K>();
        case BlockType::IQ4_NL: return blockInfoOf<BlockType::IQ4_NL>();
        case BlockType::IQ4_XS: return blockInfoOf<BlockType::IQ4_XS>();
        case BlockType::MXFP4: return blockInfoOf<BlockType::MXFP4>();
        case BlockType::IQ2_XXS: return blockInfoOf<BlockType::IQ2_XXS>();
        case BlockType::IQ2_XS: return blockInfoOf<BlockType::IQ2_XS>();
        case BlockType::IQ2_S: return blockInfoOf<BlockType::IQ2_S>();
        case BlockType::IQ3_XXS: return blockInfoOf<BlockType::IQ3_XXS>();
        case BlockType::IQ3_S: return blockInfoOf<BlockType::IQ3_S>();
        case BlockType::IQ1_S: return blockInfoOf<BlockType::IQ1_S>();
        case BlockType::IQ1_M: return blockInfoOf<BlockType::IQ1_M>();
        case BlockType::TQ1_0: return blockInfoOf<BlockType::TQ1_0>();
        case BlockType::TQ2_0: return blockInfoOf<BlockType::TQ2_0>();
    }
    return {0, 0, 0};
}

}  // namespace verdict::cuda
