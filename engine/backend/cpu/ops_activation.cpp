#include "backend/cpu/ops_activation.h"

#include <cmath>

namespace verdict::cpu {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

void swigluInPlace(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) gate[i] = silu(gate[i]) * up[i];
}

}  // namespace verdict::cpu
