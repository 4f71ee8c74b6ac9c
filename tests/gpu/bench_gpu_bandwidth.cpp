// Device memory bandwidth probe for the roofline column of tests/gpu/run.sh: times device-to-device
// copies of a 1 GiB buffer (each byte read once and written once) with CUDA events and prints
// {"device": ..., "copy_gbs": read+write GB/s, best of 10}. Not a test; exits 2 without a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

int main() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::fprintf(stderr, "bench_gpu_bandwidth: no CUDA device\n");
        return 2;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    const size_t bytes = size_t(1) << 30;
    void *a = nullptr, *b = nullptr;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        std::fprintf(stderr, "bench_gpu_bandwidth: cannot allocate 2 GiB\n");
        return 3;
    }
    cudaMemset(a, 1, bytes);
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    float best = 1e30f;
    for (int rep = 0; rep < 11; ++rep) {
        cudaEventRecord(t0);
        cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(t1);
        cudaEventSynchronize(t1);
        float ms = 0;
        cudaEventElapsedTime(&ms, t0, t1);
        if (rep > 0) best = std::min(best, ms);  // the first copy is a warm-up
    }
    const double gbs = 2.0 * static_cast<double>(bytes) / (best * 1e-3) / 1e9;
    std::printf("{\"device\": \"%s\", \"copy_gbs\": %.1f, \"total_bytes\": %zu}\n", prop.name, gbs, prop.totalGlobalMem);
    cudaFree(a);
    cudaFree(b);
    return 0;
}
