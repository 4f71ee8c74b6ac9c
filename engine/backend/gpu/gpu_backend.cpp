#include "backend/gpu/gpu_backend.h"

#include <string>

namespace verdict::gpu {

#ifndef VERDICT_HAVE_CUDA
Result<std::unique_ptr<backend::Backend>> openGpuBackend(int device) {
    return Error{"device cuda:" + std::to_string(device)
                 + " requested, but this build of Verdict has no CUDA backend (nvcc was not found when it was "
                   "configured); use --device cpu, or rebuild with the CUDA Toolkit in /usr/local/cuda"};
}
#endif

}  // namespace verdict::gpu
