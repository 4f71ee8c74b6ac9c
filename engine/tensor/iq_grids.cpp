// The grids of iq_grids.h: the values live in iq_grids.inc and iq1_grid.inc (sources named there),
// which the CUDA backend includes as well (backend/cuda/iq_tables.cuh).
#include "tensor/iq_grids.h"

namespace verdict::tensor {

#define VERDICT_IQ_GRID(type, name, count) const type name[count] =
#include "tensor/iq_grids.inc"
#include "tensor/iq1_grid.inc"
#undef VERDICT_IQ_GRID

}  // namespace verdict::tensor
