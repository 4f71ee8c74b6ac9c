// The engine's way to a GPU, free of CUDA headers: the op backend (backend/ops/backend.h) of a
// CUDA device, which every architecture's one forward (arch/) runs on when a model opens there.
//
// The CUDA implementation lives in backend/cuda/ (compiled only when nvcc is found); builds
// without it answer every GPU request with a clear error.
#pragma once

#include "backend/ops/backend.h"
#include "verdict/engine/result.h"

#include <memory>

namespace verdict::gpu {

// The op backend of CUDA device `device`, or why there is none (no CUDA in this build, no driver,
// no such device).
Result<std::unique_ptr<backend::Backend>> openGpuBackend(int device);

}  // namespace verdict::gpu
