// CUDA device discovery. Without a driver cudaGetDeviceCount answers
// cudaErrorInsufficientDriver (or cudaErrorNoDevice): that means "no GPU", never a failure.
#include "backend/cuda/cuda_devices.h"

#include <cuda_runtime.h>

namespace verdict::cuda {

CudaProbe probeDevices() {
    CudaProbe p;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        p.status = std::string("no usable CUDA device (") + cudaGetErrorName(err) + ")";
        cudaGetLastError();  // clear the sticky error state
        return p;
    }
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
        DeviceInfo d;
        d.id = "cuda:" + std::to_string(i);
        d.name = prop.name;
        d.kind = "cuda";
        d.computeMajor = prop.major;
        d.computeMinor = prop.minor;
        d.totalBytes = prop.totalGlobalMem;
        d.threads = prop.multiProcessorCount;
        size_t freeB = 0, totalB = 0;
        if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) d.freeBytes = freeB;
        p.devices.push_back(d);
    }
    p.status = std::to_string(p.devices.size()) + (p.devices.size() == 1 ? " device" : " devices");
    return p;
}

}  // namespace verdict::cuda
