// DeepSeek's multi-head latent attention, absorbed (backend::LatentAttention; DeepSeek-V2 paper,
// arXiv 2405.04434, section 2.1): the heads are never expanded. Three kernels; absorb and
// up-project read attn_kv_b's rows in their GGUF blocks (block_decode.cuh decodeQuad: the values of
// the f32 dequantization the CPU backend's `fused == false` path computes with, bit for bit):
//   absorb      qLat[t,h] = W_k[h]^T q_nope[t,h]               (rank floats per (row, head))
//   attention   online softmax over the row's positions of scale (qLat . latent_j + q_rope . kRope_j),
//               oLat[t,h] = sum_j p_j latent_j                 (the cache's latent rows are the values)
//   up-project  out[t,h] = W_v[h] oLat[t,h]
// W_k[h] / W_v[h]: the dNope key rows / dV value rows of head h (rows h (dNope + dV) + ..).
#include "backend/cuda/block_dispatch.cuh"
#include "backend/cuda/cuda_common.cuh"
#include "backend/cuda/cuda_ops.h"
#include "backend/cuda/softmax_state.cuh"

#include <algorithm>

namespace verdict::cuda {
namespace {

constexpr int kWarps = 4;
constexpr int kRankPerLane = kMlaMaxRank / kWarp;
constexpr int kRopePerLane = kMlaMaxRope / kWarp;

// grid (H, nTok), one thread per quad of the rank (rank / 4, rounded up to whole warps): thread l
// sums elements 4l .. 4l+3 over the head's key rows, in row order.
template <BlockType T>
__global__ void absorbKernel(const uint8_t* w, uint64_t rowBytes, const float* q, int H, int dn, int dr, int dv,
                             int rank, float* qLat) {
    const int h = blockIdx.x, t = blockIdx.y, l = threadIdx.x;
    if (4 * l >= rank) return;
    const float* qn = q + (static_cast<int64_t>(t) * H + h) * (dn + dr);
    const uint8_t* wk = w + static_cast<uint64_t>(h) * (dn + dv) * rowBytes;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < dn; ++i) {
        float v[4];
        decodeQuad<T>(wk + static_cast<uint64_t>(i) * rowBytes, l / 8, l % 8, v);
        const float x = qn[i];
#pragma unroll
        for (int j = 0; j < 4; ++j) s[j] += x * v[j];
    }
    float* out = qLat + (static_cast<int64_t>(t) * H + h) * rank + 4 * l;
#pragma unroll
    for (int j = 0; j < 4; ++j) out[j] = s[j];
}

// grid (H, nTok), kWarps warps taking positions in turn; their states merged in shared memory.
template <class KT>
__global__ void latentKernel(const RowCache* rows, int H, int dn, int dr, int rank, float scale, const float* q,
                             const float* qLat, float* oLat) {
    const int h = blockIdx.x, t = blockIdx.y;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const RowCache rc = rows[t];
    const KT* latents = reinterpret_cast<const KT*>(rc.base);                       // [capacity][rank]
    const KT* kRope = latents + static_cast<int64_t>(rc.capacity) * rank;           // [capacity][dr]
    const float* ql = qLat + (static_cast<int64_t>(t) * H + h) * rank;
    const float* qr = q + (static_cast<int64_t>(t) * H + h) * (dn + dr) + dn;
    float qv[kRankPerLane], qp[kRopePerLane];
#pragma unroll
    for (int i = 0; i < kRankPerLane; ++i) {
        const int d = lane + kWarp * i;
        qv[i] = d < rank ? ql[d] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kRopePerLane; ++i) {
        const int d = lane + kWarp * i;
        qp[i] = d < dr ? qr[d] : 0.0f;
    }
    WarpSoftmax<kRankPerLane> state;
    for (int p = warp; p <= rc.pos; p += kWarps) {
        const KT* lp = latents + static_cast<int64_t>(p) * rank;
        const KT* rp = kRope + static_cast<int64_t>(p) * dr;
        float s = 0.0f;
#pragma unroll
        for (int i = 0; i < kRankPerLane; ++i) {
            const int d = lane + kWarp * i;
            if (d < rank) s += qv[i] * toFloat(lp[d]);
        }
#pragma unroll
        for (int i = 0; i < kRopePerLane; ++i) {
            const int d = lane + kWarp * i;
            if (d < dr) s += qp[i] * toFloat(rp[d]);
        }
        state.add(warpSum(s) * scale, lp, rank, lane);  // the latent is the value row too
    }
    __shared__ BlockSoftmax<kWarps, kMlaMaxRank> merged;
    float M, L, f[kWarps];
    merged.merge(state, rank, M, L, f);
    float* o = oLat + (static_cast<int64_t>(t) * H + h) * rank;
    for (int d = threadIdx.x; d < rank; d += blockDim.x) o[d] = merged.value(d, f) / L;
}

// grid (H, nTok), kWarps warps: warp w takes value rows w, w + kWarps, ...; a row's dot product
// over the rank (lane l: quads l, l + 32, ...) is summed across the warp.
template <BlockType T>
__global__ void upProjectKernel(const uint8_t* w, uint64_t rowBytes, const float* oLat, int H, int dn, int dv,
                                int rank, float* out) {
    const int h = blockIdx.x, t = blockIdx.y;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    const float* ol = oLat + (static_cast<int64_t>(t) * H + h) * rank;
    const uint8_t* wv = w + (static_cast<uint64_t>(h) * (dn + dv) + dn) * rowBytes;
    float* o = out + (static_cast<int64_t>(t) * H + h) * dv;
    for (int k = warp; k < dv; k += kWarps) {
        const uint8_t* row = wv + static_cast<uint64_t>(k) * rowBytes;
        float s = 0.0f;
        for (int l = lane; 4 * l < rank; l += kWarp) {
            float v[4];
            decodeQuad<T>(row, l / 8, l % 8, v);
            s += v[0] * ol[4 * l] + v[1] * ol[4 * l + 1] + v[2] * ol[4 * l + 2] + v[3] * ol[4 * l + 3];
        }
        s = warpSum(s);
        if (lane == 0) o[k] = s;
    }
}

}  // namespace

void mlaAbsorb(const DeviceMatrix& kvB, const float* q, int64_t nTok, const MlaShape& a, float* qLat,
               cudaStream_t s) {
    if (nTok <= 0) return;
    if (nTok > kMaxGridY) {  // rows on grid y: in chunks
        for (int64_t t0 = 0; t0 < nTok; t0 += kMaxGridY)
            mlaAbsorb(kvB, q + t0 * a.nHead * (a.dNope + a.dRope), std::min(kMaxGridY, nTok - t0), a,
                      qLat + t0 * a.nHead * a.rank, s);
        return;
    }
    const int threads = (a.rank / 4 + kWarp - 1) / kWarp * kWarp;
    dispatchType(kvB.type, [&](auto tag) {
        absorbKernel<decltype(tag)::value>
            <<<dim3(static_cast<unsigned>(a.nHead), static_cast<unsigned>(nTok)), threads, 0, s>>>(
                kvB.data, kvB.rowBytes, q, a.nHead, a.dNope, a.dRope, a.dV, a.rank, qLat);
    });
}

void mlaAttention(const RowCache* rows, int64_t nTok, const MlaShape& a, const float* q, const float* qLat,
                  float* oLat, cudaStream_t s) {
    if (nTok <= 0) return;
    if (nTok > kMaxGridY) {
        for (int64_t t0 = 0; t0 < nTok; t0 += kMaxGridY)
            mlaAttention(rows + t0, std::min(kMaxGridY, nTok - t0), a, q + t0 * a.nHead * (a.dNope + a.dRope),
                         qLat + t0 * a.nHead * a.rank, oLat + t0 * a.nHead * a.rank, s);
        return;
    }
    const dim3 grid(static_cast<unsigned>(a.nHead), static_cast<unsigned>(nTok));
    if (a.f16)
        latentKernel<__half><<<grid, kWarps * kWarp, 0, s>>>(rows, a.nHead, a.dNope, a.dRope, a.rank, a.scale, q, qLat,
                                                            oLat);
    else
        latentKernel<float><<<grid, kWarps * kWarp, 0, s>>>(rows, a.nHead, a.dNope, a.dRope, a.rank, a.scale, q, qLat,
                                                           oLat);
}

void mlaUpProject(const DeviceMatrix& kvB, const float* oLat, int64_t nTok, const MlaShape& a, float* out,
                  cudaStream_t s) {
    if (nTok <= 0) return;
    if (nTok > kMaxGridY) {
        for (int64_t t0 = 0; t0 < nTok; t0 += kMaxGridY)
            mlaUpProject(kvB, oLat + t0 * a.nHead * a.rank, std::min(kMaxGridY, nTok - t0), a,
                         out + t0 * a.nHead * a.dV, s);
        return;
    }
    dispatchType(kvB.type, [&](auto tag) {
        upProjectKernel<decltype(tag)::value>
            <<<dim3(static_cast<unsigned>(a.nHead), static_cast<unsigned>(nTok)), kWarps * kWarp, 0, s>>>(
                kvB.data, kvB.rowBytes, oLat, a.nHead, a.dNope, a.dV, a.rank, out);
    });
}

}  // namespace verdict::cuda
