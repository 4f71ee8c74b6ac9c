#include "gguf/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace verdict::gguf {
namespace {

class Out {
public:
    explicit Out(std::FILE* f) : m_f(f) {}
    bool ok() const { return m_ok; }
    uint64_t pos() const { return m_pos; }
    void bytes(const void* p, size_t n) {
        if (n && std::fwrite(p, 1, n, m_f) != n) m_ok = false;
        m_pos += n;
    }
    template <class T>
    void pod(T v) { bytes(&v, sizeof v); }
    void str(const std::string& s) {
        pod<uint64_t>(s.size());
        bytes(s.data(), s.size());
    }
    void pad(uint32_t alignment) {
        static const uint8_t kZeros[256] = {};
        uint64_t target = (m_pos + alignment - 1) / alignment * alignment;
        while (m_pos < target) bytes(kZeros, std::min<uint64_t>(sizeof kZeros, target - m_pos));
    }

private:
    std::FILE* m_f;
    uint64_t m_pos = 0;
    bool m_ok = true;
};

void writeValue(Out& o, const Value& v, ValueType type) {
    switch (type) {
        case ValueType::UInt8: o.pod<uint8_t>(static_cast<uint8_t>(v.asUInt().value_or(0))); break;
        case ValueType::Int8: o.pod<int8_t>(static_cast<int8_t>(v.asInt().value_or(0))); break;
        case ValueType::UInt16: o.pod<uint16_t>(static_cast<uint16_t>(v.asUInt().value_or(0))); break;
        case ValueType::Int16: o.pod<int16_t>(static_cast<int16_t>(v.asInt().value_or(0))); break;
        case ValueType::UInt32: o.pod<uint32_t>(static_cast<uint32_t>(v.asUInt().value_or(0))); break;
        case ValueType::Int32: o.pod<int32_t>(static_cast<int32_t>(v.asInt().value_or(0))); break;
        case ValueType::UInt64: o.pod<uint64_t>(v.asUInt().value_or(0)); break;
        case ValueType::Int64: o.pod<int64_t>(v.asInt().value_or(0)); break;
        case ValueType::Float32: o.pod<float>(static_cast<float>(v.asFloat().value_or(0))); break;
        case ValueType::Float64: o.pod<double>(v.asFloat().value_or(0)); break;
        case ValueType::Bool: o.pod<uint8_t>(v.asBool().value_or(false) ? 1 : 0); break;
        case ValueType::String: o.str(v.asString() ? *v.asString() : std::string()); break;
        case ValueType::Array: {
            static const std::vector<Value> kEmpty;
            const auto& items = v.asArray() ? *v.asArray() : kEmpty;
            o.pod<uint32_t>(static_cast<uint32_t>(v.elemType));
            o.pod<uint64_t>(items.size());
            for (const auto& item : items) writeValue(o, item, v.elemType);
            break;
        }
    }
}

}  // namespace

void GgufWriter::set(const std::string& key, Value value) {
    for (auto& kv : m_kv)
        if (kv.first == key) { kv.second = std::move(value); return; }
    m_kv.emplace_back(key, std::move(value));
}

void GgufWriter::addTensor(const std::string& name, tensor::TensorType type, std::vector<uint64_t> ne,
                           const void* data, uint64_t bytes) {
    m_tensors.push_back({name, type, std::move(ne), data, bytes, {}});
}

void GgufWriter::addTensor(const std::string& name, tensor::TensorType type, std::vector<uint64_t> ne, Producer produce) {
    m_tensors.push_back({name, type, std::move(ne), nullptr, 0, std::move(produce)});
}

uint32_t GgufWriter::alignment() const {
    for (const auto& kv : m_kv)
        if (kv.first == "general.alignment")
            if (auto a = kv.second.asUInt(); a && *a && (*a & (*a - 1)) == 0) return static_cast<uint32_t>(*a);
    return 32;
}

Result<void> GgufWriter::write(const std::string& path) const {
    const uint32_t align = alignment();
    // Validate shapes and compute offsets first, so a bad tensor never leaves a partial file.
    std::vector<uint64_t> sizes, offsets;
    uint64_t offset = 0;
    for (const auto& t : m_tensors) {
        if (t.ne.empty() || t.ne.size() > 4) return Error{path + ": tensor '" + t.name + "' must have 1..4 dims"};
        uint64_t n = 1;
        for (auto d : t.ne) n *= d;
        auto row = tensor::rowBytes(t.type, t.ne[0]);
        if (!row) return Error{path + ": tensor '" + t.name + "': row length " + std::to_string(t.ne[0]) +
                               " is not a multiple of the " + std::string(tensor::typeName(t.type)) + " block size"};
        uint64_t bytes = *row * (n / t.ne[0]);
        if (!t.produce && t.bytes != bytes)
            return Error{path + ": tensor '" + t.name + "': " + std::to_string(t.bytes) + " data bytes given, shape needs " + std::to_string(bytes)};
        offset = (offset + align - 1) / align * align;
        offsets.push_back(offset);
        sizes.push_back(bytes);
        offset += bytes;
    }

    const std::string tmp = path + ".tmp";
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
    if (!f) return Error{path + ": cannot create: " + std::strerror(errno)};
    Out o(f.get());
    o.pod<uint32_t>(0x46554747);
    o.pod<uint32_t>(m_version);
    o.pod<uint64_t>(m_tensors.size());
    o.pod<uint64_t>(m_kv.size());
    for (const auto& [key, value] : m_kv) {
        o.str(key);
        o.pod<uint32_t>(static_cast<uint32_t>(value.type));
        writeValue(o, value, value.type);
    }
    for (size_t i = 0; i < m_tensors.size(); ++i) {
        const auto& t = m_tensors[i];
        o.str(t.name);
        o.pod<uint32_t>(static_cast<uint32_t>(t.ne.size()));
        for (auto d : t.ne) o.pod<uint64_t>(d);
        o.pod<uint32_t>(static_cast<uint32_t>(t.type));
        o.pod<uint64_t>(offsets[i]);
    }
    // llama.cpp writes no padding after the tensor table of a file without tensors.
    if (!m_tensors.empty()) o.pad(align);
    const uint64_t dataStart = o.pos();
    std::vector<uint8_t> buffer;
    for (size_t i = 0; i < m_tensors.size(); ++i) {
        const auto& t = m_tensors[i];
        o.pad(align);
        if (o.pos() - dataStart != offsets[i]) return Error{path + ": internal offset mismatch at tensor '" + t.name + "'"};
        if (t.produce) {
            buffer.clear();
            if (auto r = t.produce(buffer); !r) return Error{path + ": tensor '" + t.name + "': " + r.error().message};
            if (buffer.size() != sizes[i])
                return Error{path + ": tensor '" + t.name + "': producer gave " + std::to_string(buffer.size()) +
                             " bytes, shape needs " + std::to_string(sizes[i])};
            o.bytes(buffer.data(), buffer.size());
        } else {
            o.bytes(t.data, sizes[i]);
        }
        if (!o.ok()) break;
    }
    if (!o.ok() || std::fflush(f.get()) != 0) {
        std::remove(tmp.c_str());
        return Error{path + ": write failed: " + std::strerror(errno)};
    }
    f.reset();
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return Error{path + ": cannot rename temp file: " + std::strerror(errno)};
    }
    return okResult();
}

}  // namespace verdict::gguf
