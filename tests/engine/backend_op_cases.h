// Backend parity cases in the style of llama.cpp's test-backend-ops: every op of
// backend/ops/backend.h x weight type x shape (odd sizes, batches of 1 / 5 / 40 rows, short and
// long contexts, several sequences in one pass) run on a backend and compared with a plain
// reference computed here in double precision from the same inputs (weights at their dequantized
// values). The error is the normalised mean squared error NMSE = sum (out - ref)^2 / sum ref^2,
// the measure test-backend-ops uses, against a limit per op; integer outputs (expert ids) must
// match exactly.
//
// tests/engine/test_backend_ops runs them on the CPU backend under each SIMD level the CPU has;
// tests/gpu/test_gpu_backend_ops on the CUDA backend.
#pragma once

#include "backend/ops/backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace verdict::test {

struct OpCheck {
    std::string op;       // "matmul", "attention", ...
    std::string params;   // "type=q4_0 rows=7 cols=256 tok=5"
    double err = 0;       // NMSE, or mismatches for integer outputs
    double limit = 0;
    std::string skipped;  // why the backend does not run this case; empty when it ran
    std::string failure;  // a backend error (allocation, synchronize)
    bool ok() const { return !skipped.empty() || (failure.empty() && err <= limit); }
};

// Runs every case on `be`; deterministic for a seed.
std::vector<OpCheck> runBackendOpCases(backend::Backend& be, uint32_t seed = 1);

// One line per op: cases run and skipped, the worst error as a fraction of its limit.
std::string summarize(const std::vector<OpCheck>& checks);

}  // namespace verdict::test
