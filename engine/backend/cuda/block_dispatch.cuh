// Calls f(tag) with tag a std::integral_constant<BlockType, t>, so one launcher can start the
// kernel specialised for a type only known at run time.
#pragma once

#include "backend/cuda/block_decode.cuh"

#include <type_traits>

namespace verdict::cuda {

template <BlockType T>
using TypeTag = std::integral_constant<BlockType, T>;

template <class F>
void dispatchType(BlockType t, F&& f) {
    switch (t) {
        case BlockType::F32: f(TypeTag<BlockType::F32>{}); break;
        case BlockType::F16: f(TypeTag<BlockType::F16>{}); break;
        case BlockType::BF16: f(TypeTag<BlockType::BF16>{}); break;
        case BlockType::Q4_0: f(TypeTag<BlockType::Q4_0>{}); break;
        case BlockType::Q4_1: f(TypeTag<BlockType::Q4_1>{}); break;
        case BlockType::Q5_0: f(TypeTag<BlockType::Q5_0>{}); break;
        case BlockType::Q5_1: f(TypeTag<BlockType::Q5_1>{}); break;
        case BlockType::Q8_0: f(TypeTag<BlockType::Q8_0>{}); break;
        case BlockType::Q2_K: f(TypeTag<BlockType::Q2_K>{}); break;
        case BlockType::Q3_K: f(TypeTag<BlockType::Q3_K>{}); break;
        case BlockType::Q4_K: f(TypeTag<BlockType::Q4_K>{}); break;
        case BlockType::Q5_K: f(TypeTag<BlockType::Q5_K>{}); break;
        case BlockType::Q6_K: f(TypeTag<BlockType::Q6_K>{}); break;
        case BlockType::IQ4_NL: f(TypeTag<BlockType::IQ4_NL>{}); break;
        case BlockType::IQ4_XS: f(TypeTag<BlockType::IQ4_XS>{}); break;
        case BlockType::MXFP4: f(TypeTag<BlockType::MXFP4>{}); break;
        case BlockType::IQ2_XXS: f(TypeTag<BlockType::IQ2_XXS>{}); break;
        case BlockType::IQ2_XS: f(TypeTag<BlockType::IQ2_XS>{}); break;
        case BlockType::IQ2_S: f(TypeTag<BlockType::IQ2_S>{}); break;
        case BlockType::IQ3_XXS: f(TypeTag<BlockType::IQ3_XXS>{}); break;
        case BlockType::IQ3_S: f(TypeTag<BlockType::IQ3_S>{}); break;
        case BlockType::IQ1_S: f(TypeTag<BlockType::IQ1_S>{}); break;
        case BlockType::IQ1_M: f(TypeTag<BlockType::IQ1_M>{}); break;
        case BlockType::TQ1_0: f(TypeTag<BlockType::TQ1_0>{}); break;
        case BlockType::TQ2_0: f(TypeTag<BlockType::TQ2_0>{}); break;
    }
}

}  // namespace verdict::cuda
