// Which kernels exist for a weight type on this CPU: the reference (kernels_ref.cpp) and the x86
// SIMD tables, each returned only when the CPU can run it.
#include "backend/cpu/matmul_kernel.h"

#if defined(__x86_64__)
#include "backend/cpu/kernels_x86.h"
#endif

namespace verdict::cpu {

const MatmulKernel* avx2Kernel(tensor::TensorType t) {
#if defined(__x86_64__)
    if (maxSimdLevel() < SimdLevel::Avx2) return nullptr;
    if (const auto* k = avx2::q32Kernel(t)) return k;
    if (const auto* k = avx2::kquantKernel(t)) return k;
    return avx2::floatKernel(t);
#else
    (void)t;
    return nullptr;
#endif
}

const MatmulKernel* avx512Kernel(tensor::TensorType t) {
#if defined(__x86_64__)
    if (maxSimdLevel() < SimdLevel::Avx512) return nullptr;
    if (const auto* k = avx512::q32Kernel(t)) return k;
    if (const auto* k = avx512::kquantKernel(t)) return k;
    // BF16: vdpbf16ps where the CPU has AVX512_BF16. Both variants round the activations to bf16
    // (as llama.cpp does) and every bf16 x bf16 product is exact in f32; vdpbf16ps differs only in
    // treating subnormal inputs (|x| < 2^-126) as zero. Its packed panels run prefill at twice the
    // FMA's rate (Zen 4, bench_kernels 1 thread: 102-111 -> 177-202 GFLOP/s, tests/bench/README.md).
    return avx512::floatKernel(t, cpuFeatures().avx512bf16);
#else
    (void)t;
    return nullptr;
#endif
}

std::vector<const MatmulKernel*> availableKernels(tensor::TensorType t) {
    std::vector<const MatmulKernel*> out;
    if (const auto* k = referenceKernel(t)) out.push_back(k);
    if (const auto* k = avx2Kernel(t)) out.push_back(k);
    if (const auto* k = avx512Kernel(t)) out.push_back(k);
#if defined(__x86_64__)
    // The widening + FMA BF16 kernel, which CPUs without AVX512_BF16 run, stays tested and
    // benchmarked on those with it too (where avx512Kernel picks vdpbf16ps).
    if (t == tensor::TensorType::BF16 && maxSimdLevel() >= SimdLevel::Avx512 && cpuFeatures().avx512bf16)
        out.push_back(avx512::floatKernel(t, false));
#endif
    return out;
}

}  // namespace verdict::cpu
