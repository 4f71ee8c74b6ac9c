#include "backend/cpu/cpu_features.h"

#include <cstdlib>
#include <string>

namespace verdict::cpu {
namespace {

CpuFeatures detect() {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = __builtin_cpu_supports("f16c");
    f.avx512f = __builtin_cpu_supports("avx512f");
    f.avx512bw = __builtin_cpu_supports("avx512bw");
    f.avx512vl = __builtin_cpu_supports("avx512vl");
    f.avx512dq = __builtin_cpu_supports("avx512dq");
    f.avx512vnni = __builtin_cpu_supports("avx512vnni");
    f.avx512bf16 = __builtin_cpu_supports("avx512bf16");
#endif
    return f;
}

}  // namespace

const CpuFeatures& cpuFeatures() {
    static const CpuFeatures f = detect();
    return f;
}

SimdLevel maxSimdLevel() {
    const auto& f = cpuFeatures();
    const bool avx2 = f.avx2 && f.fma && f.f16c;
    if (avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512vnni) return SimdLevel::Avx512;
    if (avx2) return SimdLevel::Avx2;
    return SimdLevel::Scalar;
}

SimdLevel activeSimdLevel() {
    static const SimdLevel level = [] {
        SimdLevel l = maxSimdLevel();
        if (const char* env = std::getenv("VERDICT_CPU_SIMD")) {
            const std::string v(env);
            SimdLevel want = l;
            if (v == "scalar") want = SimdLevel::Scalar;
            else if (v == "avx2") want = SimdLevel::Avx2;
            else if (v == "avx512") want = SimdLevel::Avx512;
            if (static_cast<int>(want) < static_cast<int>(l)) l = want;
        }
        return l;
    }();
    return level;
}

std::string_view simdLevelName(SimdLevel level) {
    switch (level) {
        case SimdLevel::Scalar: return "scalar";
        case SimdLevel::Avx2: return "avx2";
        case SimdLevel::Avx512: return "avx512";
    }
    return "?";
}

}  // namespace verdict::cpu
