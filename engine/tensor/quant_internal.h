// Per-type reference quantizers / dequantizers behind tensor/quantize.h (internal to tensor/).
// Each takes k elements, a multiple of the type's block size.
#pragma once

#include "tensor/block_formats.h"

#include <cstdint>

namespace verdict::tensor::detail {

void quantizeQ4_0(const float* x, BlockQ4_0* y, int64_t k);
void quantizeQ4_1(const float* x, BlockQ4_1* y, int64_t k);
void quantizeQ5_0(const float* x, BlockQ5_0* y, int64_t k);
void quantizeQ5_1(const float* x, BlockQ5_1* y, int64_t k);
void quantizeQ8_0(const float* x, BlockQ8_0* y, int64_t k);
void quantizeQ8_1(const float* x, BlockQ8_1* y, int64_t k);
void quantizeQ2_K(const float* x, BlockQ2_K* y, int64_t k);
void quantizeQ3_K(const float* x, BlockQ3_K* y, int64_t k);
void quantizeQ4_K(const float* x, BlockQ4_K* y, int64_t k);
void quantizeQ5_K(const float* x, BlockQ5_K* y, int64_t k);
void quantizeQ6_K(const float* x, BlockQ6_K* y, int64_t k);
void quantizeQ8_K(const float* x, BlockQ8_K* y, int64_t k);

void dequantizeQ4_0(const BlockQ4_0* x, float* y, int64_t k);
void dequantizeQ4_1(const BlockQ4_1* x, float* y, int64_t k);
void dequantizeQ5_0(const BlockQ5_0* x, float* y, int64_t k);
void dequantizeQ5_1(const BlockQ5_1* x, float* y, int64_t k);
void dequantizeQ8_0(const BlockQ8_0* x, float* y, int64_t k);
void dequantizeQ8_1(const BlockQ8_1* x, float* y, int64_t k);
void dequantizeQ2_K(const BlockQ2_K* x, float* y, int64_t k);
void dequantizeQ3_K(const BlockQ3_K* x, float* y, int64_t k);
void dequantizeQ4_K(const BlockQ4_K* x, float* y, int64_t k);
void dequantizeQ5_K(const BlockQ5_K* x, float* y, int64_t k);
void dequantizeQ6_K(const BlockQ6_K* x, float* y, int64_t k);
void dequantizeQ8_K(const BlockQ8_K* x, float* y, int64_t k);
// quant_iq.cpp: Verdict's own quantizers (least-squared-error scale search) and ggml's dequantizers
void quantizeIQ4_NL(const float* x, BlockIQ4_NL* y, int64_t k);
void quantizeIQ4_XS(const float* x, BlockIQ4_XS* y, int64_t k);
void quantizeMXFP4(const float* x, BlockMXFP4* y, int64_t k);
void dequantizeIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t k);
void dequantizeIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t k);
void dequantizeMXFP4(const BlockMXFP4* x, float* y, int64_t k);
// quant_iq_grid.cpp: the lattice i-quants and the ternary formats, dequantization only
void dequantizeIQ2_XXS(const BlockIQ2_XXS* x, float* y, int64_t k);
void dequantizeIQ2_XS(const BlockIQ2_XS* x, float* y, int64_t k);
void dequantizeIQ2_S(const BlockIQ2_S* x, float* y, int64_t k);
void dequantizeIQ3_XXS(const BlockIQ3_XXS* x, float* y, int64_t k);
void dequantizeIQ3_S(const BlockIQ3_S* x, float* y, int64_t k);
void dequantizeIQ1_S(const BlockIQ1_S* x, float* y, int64_t k);
void dequantizeIQ1_M(const BlockIQ1_M* x, float* y, int64_t k);
void dequantizeTQ1_0(const BlockTQ1_0* x, float* y, int64_t k);
void dequantizeTQ2_0(const BlockTQ2_0* x, float* y, int64_t k);

// Scale searches of ggml-quants.c used by the K-quant reference quantizers (same names minus
// the snake case; see quant_k_search.cpp).
float makeQxQuants(int n, int nmax, const float* x, int8_t* L, int rmseType, const float* qw);
float makeQ3Quants(int n, int nmax, const float* x, int8_t* L, bool doRmse);
float makeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* theMin, uint8_t* Laux, float rmin, float rdelta, int nstep, bool useMad);

}  // namespace verdict::tensor::detail
