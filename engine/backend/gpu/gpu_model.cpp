#include "backend/gpu/gpu_model.h"

#include <string>

namespace verdict::gpu {

#ifndef VERDICT_HAVE_CUDA
namespace {
Error noCuda(int device) {
    return Error{"device cuda:" + std::to_string(device)
                 + " requested, but this build of Verdict has no CUDA backend (nvcc was not found when it was "
                   "configured); use --device cpu, or rebuild with the CUDA Toolkit in /usr/local/cuda"};
}
}  // namespace

Result<std::unique_ptr<GpuModel>> openGpuModel(const GpuModelSource&, int device, int64_t) { return noCuda(device); }
Result<void> checkGpuModelPass(const GpuModelSource&) { return {}; }  // openGpuModel then says why
Result<std::unique_ptr<backend::Backend>> openGpuBackend(int device) { return noCuda(device); }
#endif

}  // namespace verdict::gpu
