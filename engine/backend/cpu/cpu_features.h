// What the CPU can run, detected once at run time (cpuid via __builtin_cpu_supports, which also
// checks that the OS saves the AVX / AVX-512 register state).
//
// The SIMD level used by the kernels is the best the CPU supports, unless the environment
// variable VERDICT_CPU_SIMD=scalar|avx2|avx512 asks for a lower one (tests and benchmarks use it
// to compare paths; asking for more than the CPU has falls back to what it has).
#pragma once

#include <string_view>

namespace verdict::cpu {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512dq = false;
    bool avx512vnni = false;
    bool avx512bf16 = false;
};

enum class SimdLevel {
    Scalar = 0,  // the reference kernels (any x86-64 or other CPU)
    Avx2 = 1,    // AVX2 + FMA + F16C (Haswell / Zen 1 and later)
    Avx512 = 2,  // AVX-512 F/BW/VL/DQ/VNNI (+ BF16 when present): Ice Lake, Zen 4 and later
};

const CpuFeatures& cpuFeatures();
// Best level this CPU supports (ignores the environment override).
SimdLevel maxSimdLevel();
// Level the kernels use: maxSimdLevel(), lowered by VERDICT_CPU_SIMD if set.
SimdLevel activeSimdLevel();
std::string_view simdLevelName(SimdLevel level);

}  // namespace verdict::cpu
