// Views of model tensors as the forward pass uses them. Matrices stay in the memory mapping in
// their on-disk type (no copy); small vectors (norm gains, biases) are f32, copied only when the
// file stores them in another type.
#pragma once

#include "tensor/tensor_type.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace verdict::arch {

// A matrix (2-D) or a stack of matrices (3-D, experts) in the mapping.
struct Weight {
    std::string name;                      // GGUF tensor name, for messages and debug dumps
    const uint8_t* data = nullptr;         // first row; null when an optional tensor is absent
    tensor::TensorType type = tensor::TensorType::F32;
    std::array<int64_t, 4> ne{1, 1, 1, 1}; // ggml order: ne[0] = row length (input dim), ne[1] = rows
    uint64_t rowBytes = 0;                 // bytes of one row of ne[0] elements

    bool present() const { return data != nullptr; }
    int64_t cols() const { return ne[0]; }  // K of the matmul
    int64_t rows() const { return ne[1]; }  // output dimension
    const uint8_t* row(int64_t r) const { return data + static_cast<uint64_t>(r) * rowBytes; }
    // Matrix `e` of a 3-D stack [ne0, ne1, ne2]: rows e*ne1 .. (e+1)*ne1.
    const uint8_t* matrix(int64_t e) const { return row(e * ne[1]); }
};

// A 1-D f32 vector (norm weight, bias, rope frequency factors).
struct VecWeight {
    std::string name;
    const float* data = nullptr;  // null when an optional tensor is absent
    int64_t n = 0;
    std::vector<float> owned;     // storage when the file's type was not f32

    bool present() const { return data != nullptr; }
};

}  // namespace verdict::arch
