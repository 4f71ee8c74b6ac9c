// Host-side mapping from the engine's tensor types to the block decoders of block_decode.cuh.
#pragma once

#include "backend/cuda/block_decode.cuh"
#include "tensor/tensor_type.h"

#include <optional>

namespace verdict::cuda {

// The BlockType that decodes weight rows of type t; nullopt for types the CUDA backend cannot
// read (IQ*, TQ*, MXFP4, integer types, and the activation formats Q8_1 / Q8_K).
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
    }
    return {0, 0, 0};
}

}  // namespace verdict::cuda
