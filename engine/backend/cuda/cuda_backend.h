// The CUDA implementation of backend/ops/backend.h: the launchers of cuda_ops.h behind the op
// interface, on one device and one stream, every allocation through cuda_memory.h's ledger.
// Plain C++ (no CUDA header), so host code and tests can open it.
//
// Every architecture's forward runs on it when a model opens on a GPU (model/model.cpp
// openOneForwardOnGpu). Checked op by op against the plain reference of tests/engine/
// backend_op_cases.h by tests/gpu/test_gpu_backend_ops, end to end by tests/gpu/test_gpu_backend
// (label gpu; not yet run on a GPU).
#pragma once

#include "backend/ops/backend.h"

#include <memory>

namespace verdict::cuda {

// The backend on device cuda:N; an error that says why when there is no such device, no driver
// ("no GPU") or the stream cannot be made.
Result<std::unique_ptr<backend::Backend>> openCudaBackend(int device);

}  // namespace verdict::cuda
