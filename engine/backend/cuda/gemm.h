// Products of a weight matrix with a pass of activation rows, the kernel chosen by the pass's size
// — the one place that choice is made (cuda_backend.cu's matmul and expert products):
//   - up to kMatvecMaxCols rows: ops_matvec.cu, the blocks read in place once for all rows;
//   - up to kMmaMaxCols rows of quantised / BF16 weights: ops_mma.cu's tensor-core tiles decoded in
//     place (VERDICT_CUDA_MMA=0 sends them to cuBLAS);
//   - more (prefill): cuBLAS — SGEMM for F32 weights (exact f32), else tiles of the weight
//     dequantized to f16 (F16 weights used as stored) times the activations rounded to f16, f32
//     accumulation and output, as llama.cpp's CUDA backend does — except that activation rows past
//     f16's range are scaled into it by a power of two and their outputs scaled back (cuda_ops.h
//     activationScales; the tensor-core tiles do the same).
// cuBLAS is dlopen'ed when the first Gemm starts, not linked: the binary (CUDA runtime linked
// statically) starts, and runs on the CPU, on machines without the CUDA libraries.
#pragma once

#include "backend/cuda/cuda_memory.h"
#include "backend/cuda/cuda_ops.h"
#include "verdict/engine/result.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

struct cublasContext;

namespace verdict::cuda {

class Gemm {
public:
    Gemm() = default;
    ~Gemm();
    Gemm(const Gemm&) = delete;
    Gemm& operator=(const Gemm&) = delete;

    // A cuBLAS handle on `stream` with its workspace (32 MiB, VramKind::Workspace in `ledger`).
    // deviceId names the device in errors ("cuda:0").
    Result<void> init(int device, Ledger& ledger, cudaStream_t stream, const std::string& deviceId);

    static constexpr int64_t kTileElems = int64_t{32} << 20;  // most f16 weight elements per GEMM tile (64 MiB)

    // f16 elements of the two scratch buffers product() needs for nTok rows of w (0: none): the
    // activations rounded to f16, and one tile of dequantized weight rows.
    static uint64_t xHalfElems(const DeviceMatrix& w, int64_t nTok);
    static uint64_t wHalfElems(const DeviceMatrix& w, int64_t nTok);
    // f32 elements of the activation rows' scales (0: the product needs none).
    static uint64_t scaleElems(const DeviceMatrix& w, int64_t nTok);

    // y[t][0 .. w.rows) (row stride ldy) = W . x[t] (rows of w.cols floats, stride ldx), t < nTok.
    // xHalf / wHalf / scale: at least xHalfElems / wHalfElems / scaleElems elements.
    void product(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t nTok, float* y, int64_t ldy,
                 __half* xHalf, __half* wHalf, float* scale);

    // The first cuBLAS failure since the last call ("" when none), cleared.
    std::string takeError();

    // The handle and workspace released (before the stream they use is destroyed).
    void reset();

private:
    cublasContext* m_handle = nullptr;
    cudaStream_t m_stream = nullptr;
    DeviceBuffer m_workspace;
    bool m_mmaOff = false;  // VERDICT_CUDA_MMA=0
    std::string m_error;
};

}  // namespace verdict::cuda
