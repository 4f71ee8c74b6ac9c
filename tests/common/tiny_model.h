// A tiny synthetic GGUF (one layer, 32-wide, the generator's 512-token vocabulary) for tests that
// need a real model file or tokenizer without fixtures: written in well under a second.
#pragma once

#include "verdict/engine/synthetic_model.h"

#include <string>

namespace verdict::test {

inline Result<void> writeTinyModel(const std::string& path) {
    SyntheticModelSpec spec;
    spec.nEmbd = 32;
    spec.nLayer = 1;
    spec.nHead = 2;
    spec.nHeadKv = 1;
    spec.nFf = 64;
    return writeSyntheticModel(spec, path);
}

}  // namespace verdict::test
