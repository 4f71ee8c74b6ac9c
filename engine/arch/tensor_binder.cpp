#include "arch/tensor_binder.h"

#include "backend/cpu/kernels.h"

#include <cstring>

namespace verdict::arch {
namespace {
std::string shapeText(std::initializer_list<int64_t> shape) {
    std::string s = "[";
    bool first = true;
    for (int64_t d : shape) {
        if (!first) s += ", ";
        s += std::to_string(d);
        first = false;
    }
    return s + "]";
}
}  // namespace

const gguf::TensorInfo* TensorBinder::lookup(const std::string& name, Need need) {
    const gguf::TensorInfo* t = m_file.tensor(name);
    if (!t && need == Need::Required) m_errors.push_back("required tensor '" + name + "' is missing");
    return t;
}

bool TensorBinder::checkShape(const gguf::TensorInfo& t, std::initializer_list<int64_t> shape) {
    bool ok = true;
    size_t i = 0;
    for (int64_t d : shape) {
        if (static_cast<int64_t>(t.ne[i]) != d) ok = false;
        ++i;
    }
    for (; i < 4; ++i)
        if (t.ne[i] != 1) ok = false;
    if (!ok)
        m_errors.push_back("tensor '" + t.name + "' has shape " + t.shapeString() + ", expected " + shapeText(shape));
    return ok;
}

bool TensorBinder::matrix(Weight& out, const std::string& name, std::initializer_list<int64_t> shape, Need need) {
    out = Weight{};
    out.name = name;
    const gguf::TensorInfo* t = lookup(name, need);
    if (!t) return false;
    if (!checkShape(*t, shape)) return false;
    if (!cpu::canCompute(t->type)) {
        m_errors.push_back("tensor '" + name + "' has type " + std::string(tensor::typeName(t->type))
                           + ", which the CPU engine cannot compute");
        return false;
    }
    auto rb = tensor::rowBytes(t->type, t->ne[0]);
    if (!rb) {
        m_errors.push_back("tensor '" + name + "': row length " + std::to_string(t->ne[0])
                           + " is not a multiple of the block size of " + std::string(tensor::typeName(t->type)));
        return false;
    }
    out.data = t->data;
    out.type = t->type;
    for (int i = 0; i < 4; ++i) out.ne[i] = static_cast<int64_t>(t->ne[i]);
    out.rowBytes = *rb;
    m_boundBytes += t->nBytes;
    m_regions.push_back({t->data, t->nBytes, name, t->type});
    return true;
}

bool TensorBinder::vector(VecWeight& out, const std::string& name, int64_t n, Need need) {
    out = VecWeight{};
    out.name = name;
    const gguf::TensorInfo* t = lookup(name, need);
    if (!t) return false;
    if (!checkShape(*t, {n})) return false;
    if (t->type == tensor::TensorType::F32) {
        out.data = reinterpret_cast<const float*>(t->data);
    } else {
        if (!cpu::canCompute(t->type) || !tensor::rowBytes(t->type, t->ne[0])) {
            m_errors.push_back("tensor '" + name + "' has type " + std::string(tensor::typeName(t->type))
                               + ", which the CPU engine cannot read");
            return false;
        }
        out.owned.resize(static_cast<size_t>(n));
        cpu::dequantizeRow(t->type, t->data, out.owned.data(), n);
        out.data = out.owned.data();
    }
    out.n = n;
    m_boundBytes += t->nBytes;
    m_regions.push_back({out.data, static_cast<uint64_t>(n) * sizeof(float), name, tensor::TensorType::F32});
    return true;
}

Result<void> TensorBinder::finish() const {
    if (m_errors.empty()) return {};
    std::string msg = m_file.path() + ": ";
    const size_t kShown = 6;
    for (size_t i = 0; i < m_errors.size() && i < kShown; ++i) msg += (i ? "; " : "") + m_errors[i];
    if (m_errors.size() > kShown) msg += "; and " + std::to_string(m_errors.size() - kShown) + " more";
    return Error{msg};
}

}  // namespace verdict::arch
