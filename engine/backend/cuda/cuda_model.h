// The CUDA implementation of gpu::GpuModel (cuda_model.cu).
#pragma once

#include "backend/gpu/gpu_model.h"

namespace verdict::cuda {

Result<std::unique_ptr<gpu::GpuModel>> openCudaModel(const gpu::GpuModelSource& model, int device, int64_t layers);
Result<void> checkModelPass(const gpu::GpuModelSource& model);  // openCudaModel's refusals, without opening

}  // namespace verdict::cuda
