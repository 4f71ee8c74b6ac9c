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
    // BF16: widening + FMA, not vdpbf16ps: on Zen 5 it was as fast or faster at prefill, and it
    // keeps exact products (vdpbf16ps treats subnormal inputs as zero).
    return avx512::floatKernel(t, false);
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
    // The vdpbf16ps variant (AVX512_BF16) is kept, tested and benchmarked, but not the default.
    if (t == tensor::TensorType::BF16 && maxSimdLevel() >= SimdLevel::Avx512 && cpuFeatures().avx512bf16)
        out.push_back(avx512::floatKernel(t, true));
#endif
    return out;
}

}  // namespace verdict::cpu
