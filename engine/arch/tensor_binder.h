// The "declare tensors" step of an architecture: every tensor the forward pass reads is declared
// with its name, expected shape and whether it is required. The binder checks the file against
// the declaration and collects every problem (missing tensor, wrong shape, a type the CPU engine
// cannot compute) so one load error lists them all.
#pragma once

#include "arch/weight.h"
#include "arch/weight_placement.h"
#include "gguf/gguf_file.h"
#include "verdict/engine/result.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace verdict::arch {

enum class Need { Required, Optional };

class TensorBinder {
public:
    explicit TensorBinder(const gguf::GgufFile& file) : m_file(file) {}

    // Binds a matrix (2-D) or expert stack (3-D); `shape` is in ggml order, e.g. {n_embd, n_vocab}.
    // Returns false (and records why) when a required tensor is missing or anything is wrong.
    bool matrix(Weight& out, const std::string& name, std::initializer_list<int64_t> shape,
                Need need = Need::Required);
    // Binds a 1-D vector of n elements, converting it to f32 if needed.
    bool vector(VecWeight& out, const std::string& name, int64_t n, Need need = Need::Required);

    // True if the file has a tensor of this name.
    bool has(const std::string& name) const { return m_file.tensor(name) != nullptr; }

    // Records a problem found by the architecture itself.
    void fail(const std::string& message) { m_errors.push_back(message); }

    // Success, or one error listing the problems (first few, then a count).
    Result<void> finish() const;

    // Sum of the data bytes of every bound tensor (weights resident when mapped).
    uint64_t boundBytes() const { return m_boundBytes; }

    // Host memory the architecture built itself from bound tensors (a rebuilt matrix), which the
    // forward reads like a bound tensor: a backend with memory of its own needs it uploaded too.
    void derived(const void* data, uint64_t bytes, const std::string& name, tensor::TensorType type) {
        m_regions.push_back({data, bytes, name, type});
    }
    // A bound tensor the architecture read only on the host (to build a derived matrix) and the
    // forward never touches: no backend needs it uploaded, so its region is dropped.
    void hostOnly(const Weight& w) {
        std::erase_if(m_regions, [&](const WeightRegion& r) { return w.present() && r.host == w.data; });
    }
    // Every host range the bound weights point into (tensor data, f32 copies, derived matrices):
    // what WeightPlacement::upload copies to a backend with memory of its own.
    const std::vector<WeightRegion>& regions() const { return m_regions; }

private:
    const gguf::TensorInfo* lookup(const std::string& name, Need need);
    bool checkShape(const gguf::TensorInfo& t, std::initializer_list<int64_t> shape);

    const gguf::GgufFile& m_file;
    std::vector<std::string> m_errors;
    uint64_t m_boundBytes = 0;
    std::vector<WeightRegion> m_regions;
};

}  // namespace verdict::arch
