// Quantised matrix x a batch of 9..64 vectors on the tensor cores (batched decode): each block
// decodes a tile of 32 weight rows x 128 elements from the GGUF blocks into shared memory as f16
// (block_decode.cuh decodeQuad), converts the matching 128 elements of up to 64 activation rows to
// f16, and multiplies them with WMMA 16x16x16 fragments accumulating in f32. The weights are read
// from memory once per 64 rows, in place (no dequantised copy of the matrix), which is what lets
// batched decode throughput grow with the batch. Same rounding as the cuBLAS path: f16 inputs,
// f32 accumulation; activation rows past f16's range scaled into it first (cuda_ops.h
// activationScales).
#include "backend/cuda/block_dispatch.cuh"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"

#include <mma.h>

namespace verdict::cuda {
namespace {

constexpr int kTileRows = 32;  // weight rows per block (two 16-row fragments)
constexpr int kTileCols = kMmaMaxCols;  // activation rows per block (four 16-column fragments)
constexpr int kStepUnits = 4;  // 32-element units per step of the K loop
constexpr int kStepK = 32 * kStepUnits;
constexpr int kPad = 8;        // f16 row padding of the shared tiles (bank conflicts; keeps ld % 8 == 0)
constexpr int kThreads = 128;  // 4 warps
// The warp -> fragment mapping below: 2 row fragments x 2 groups of 32 columns.
static_assert(kTileRows == 32 && kTileCols == 64 && kThreads == 128, "mmaKernel's warp layout");

template <BlockType T>
__global__ void mmaKernel(const uint8_t* w, uint64_t rowBytes, int64_t rows, int64_t units, const float* x,
                          int64_t ldx, int nCols, float* y, int64_t ldy, const float* scale) {
    using namespace nvcuda;
    __shared__ __align__(32) __half ws[kTileRows][kStepK + kPad];
    __shared__ __align__(32) __half xs[kTileCols][kStepK + kPad];
    __shared__ __align__(32) float out[kTileRows][kTileCols + 4];
    __shared__ float invScale[kTileCols];  // 1 / each activation row's power-of-two scale: exact

    const int warp = threadIdx.x / kWarp;
    const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kTileRows;
    const int rowFrag = warp % 2;          // rows rowFrag*16 .. +15 of the tile
    const int colBase = (warp / 2) * 32;   // activation rows colBase .. +31: two fragments

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2];
    wmma::fill_fragment(acc[0], 0.0f);
    wmma::fill_fragment(acc[1], 0.0f);
    for (int c = threadIdx.x; c < kTileCols; c += kThreads) invScale[c] = c < nCols ? __frcp_rn(scale[c]) : 1.0f;
    __syncthreads();

    constexpr int kQuads = kStepK / 4;  // quads per row and step
    for (int64_t u0 = 0; u0 < units; u0 += kStepUnits) {
        // Weight tile: 32 rows x 32 quads, 8 per thread; zeros past the last row or unit.
        for (int i = threadIdx.x; i < kTileRows * kQuads; i += kThreads) {
            const int r = i / kQuads, q = i % kQuads;
            const int64_t u = u0 + q / 8;
            float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (r0 + r < rows && u < units) decodeQuad<T>(w + static_cast<uint64_t>(r0 + r) * rowBytes, u, q % 8, v);
            for (int j = 0; j < 4; ++j) ws[r][4 * q + j] = __float2half_rn(v[j]);
        }
        // Activation tile: 64 rows x 32 float4, zeros past nCols or the last unit.
        for (int i = threadIdx.x; i < kTileCols * kQuads; i += kThreads) {
            const int c = i / kQuads, q = i % kQuads;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (c < nCols && u0 + q / 8 < units)
                v = __ldg(reinterpret_cast<const float4*>(x + c * ldx + u0 * 32 + 4 * q));
            const float inv = invScale[c];
            xs[c][4 * q] = __float2half_rn(v.x * inv);
            xs[c][4 * q + 1] = __float2half_rn(v.y * inv);
            xs[c][4 * q + 2] = __float2half_rn(v.z * inv);
            xs[c][4 * q + 3] = __float2half_rn(v.w * inv);
        }
        __syncthreads();
        if (colBase < nCols) {
            for (int kk = 0; kk < kStepK; kk += 16) {
                // A: 16 weight rows x 16 k (row-major in ws); B: 16 k x 16 activation rows, column c
                // of B = row c of xs, i.e. column-major with ld = the xs row length.
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
                wmma::load_matrix_sync(a, &ws[rowFrag * 16][kk], kStepK + kPad);
                for (int f = 0; f < 2; ++f) {
                    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
                    wmma::load_matrix_sync(b, &xs[colBase + 16 * f][kk], kStepK + kPad);
                    wmma::mma_sync(acc[f], a, b, acc[f]);
                }
            }
        }
        __syncthreads();
    }
    // out[r][c] = acc (element (m, n) of a fragment: weight row m, activation row n); then the
    // valid part to y[c][r0 + r].
    for (int f = 0; f < 2; ++f)
        wmma::store_matrix_sync(&out[rowFrag * 16][colBase + 16 * f], acc[f], kTileCols + 4, wmma::mem_row_major);
    __syncthreads();
    for (int i = threadIdx.x; i < kTileRows * kTileCols; i += kThreads) {
        const int c = i / kTileRows, r = i % kTileRows;  // consecutive threads: consecutive y addresses
        if (c < nCols && r0 + r < rows) y[c * ldy + r0 + r] = out[r][c] * scale[c];
    }
}

}  // namespace

void matmulMma(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t nTok, float* y, int64_t ldy,
               float* scale, cudaStream_t s) {
    const int64_t units = w.cols / 32;
    activationScales(x, ldx, w.cols, nTok, scale, s);
    const unsigned blocks = gridFor(w.rows, kTileRows);
    for (int64_t t0 = 0; t0 < nTok; t0 += kTileCols) {
        const int cols = static_cast<int>(nTok - t0 < kTileCols ? nTok - t0 : kTileCols);
        dispatchType(w.type, [&](auto tag) {
            mmaKernel<decltype(tag)::value><<<blocks, kThreads, 0, s>>>(w.data, w.rowBytes, w.rows, units, x + t0 * ldx,
                                                                        ldx, cols, y + t0 * ldy, ldy,
                                                                        scale + t0);
        });
    }
}

}  // namespace verdict::cuda
