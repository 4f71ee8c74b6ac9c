// Where a backend keeps the weights a forward pass reads. The architectures bind their weights as
// host pointers (into the file mapping, or small f32 copies and rebuilt matrices they own); a
// backend whose memory is the host's (the CPU) reads them in place, any other gets a copy: every
// region the binder handed out (TensorBinder::regions) uploaded once into one allocation of the
// backend, and each host pointer the forward uses translated to the copy by its offset in its
// region (so row views into a tensor, phi3's fused QKV, translate too).
#pragma once

#include "backend/ops/backend.h"
#include "tensor/tensor_type.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace verdict::arch {

// A host memory range the forward pass reads weights from.
struct WeightRegion {
    const void* host = nullptr;
    uint64_t bytes = 0;
    std::string name;  // the tensor, for messages
    tensor::TensorType type = tensor::TensorType::F32;  // as the forward reads it (vectors: f32)
};

class WeightPlacement {
public:
    WeightPlacement() = default;
    WeightPlacement(const WeightPlacement&) = delete;
    WeightPlacement& operator=(const WeightPlacement&) = delete;
    ~WeightPlacement();

    // Uploads every region (overlapping or repeated regions once) into one allocation of `be`.
    static Result<std::unique_ptr<WeightPlacement>> upload(backend::Backend& be, std::vector<WeightRegion> regions);

    // The backend's copy of host address p (inside one of the regions), or null when p lies in no
    // region: a weight the binder did not hand out, which the backend does not have.
    const void* find(const void* p) const;
    uint64_t bytes() const { return m_bytes; }

private:
    struct Span {
        uintptr_t begin, end;  // host range
        uint64_t offset;       // where it starts in the allocation
    };
    backend::Backend* m_be = nullptr;
    uint8_t* m_data = nullptr;
    uint64_t m_bytes = 0;
    std::vector<Span> m_spans;  // sorted by begin, disjoint
};

}  // namespace verdict::arch
