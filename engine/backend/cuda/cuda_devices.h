// Host-side interface of the CUDA device probe (compiled only in CUDA builds).
#pragma once

#include "verdict/engine/devices.h"

#include <string>
#include <vector>

namespace verdict::cuda {

struct CudaProbe {
    std::vector<DeviceInfo> devices;
    std::string status;
};

CudaProbe probeDevices();

}  // namespace verdict::cuda
