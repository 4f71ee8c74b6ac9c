// The i-quants' lookup tables as device data: the lattice grids from the same files the CPU's
// tables are made of (tensor/iq_grids.inc, tensor/iq1_grid.inc), and the 16 levels of IQ4_NL /
// IQ4_XS and MXFP4 copied element by element from tensor/block_formats.h's constants. Global
// memory, not __constant__: the lanes of a warp look up different entries, which constant memory
// would serialise. Each translation unit that decodes blocks gets its own copy (no relocatable
// device code), 33 KiB of grids.
#pragma once

#include "tensor/block_formats.h"

#include <cstdint>

#if defined(__CUDACC__)
namespace verdict::cuda::dev {

#define VERDICT_IQ_GRID(type, name, count) static __device__ const type name[count] =
#include "tensor/iq_grids.inc"
#include "tensor/iq1_grid.inc"
#undef VERDICT_IQ_GRID

#define VD_LEVELS16(t) {t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15]}
static __device__ const int8_t kIQ4NLValues[16] = VD_LEVELS16(tensor::kIQ4NLValues);
static __device__ const int8_t kMXFP4Values[16] = VD_LEVELS16(tensor::kMXFP4Values);
#undef VD_LEVELS16
static_assert(sizeof(tensor::kIQ4NLValues) == 16 && sizeof(tensor::kMXFP4Values) == 16);

}  // namespace verdict::cuda::dev
#endif
