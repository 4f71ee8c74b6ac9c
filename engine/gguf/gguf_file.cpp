#include "gguf/gguf_file.h"

#include "util/quote.h"

#include "gguf/mapped_file.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>

namespace verdict::gguf {
namespace {

constexpr uint32_t kMaxDims = 4;         // GGML_MAX_DIMS
constexpr int kMaxArrayNesting = 4;      // deeper nesting never occurs in real files
constexpr uint64_t kMaxStringBytes = uint64_t(1) << 30;

std::string hex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
    return buf;
}

// Bounds-checked little-endian reader. Every failure names the file, the field and the offset.
class Cursor {
public:
    Cursor(const uint8_t* data, size_t size, const std::string& name) : m_data(data), m_size(size), m_name(name) {}

    size_t pos() const { return m_pos; }
    size_t remaining() const { return m_size - m_pos; }

    Error error(const std::string& field, const std::string& what, size_t at) const {
        return Error{m_name + ": " + field + " at byte offset " + std::to_string(at) + ": " + what};
    }

    template <class T>
    Result<T> read(const std::string& field) {
        if (remaining() < sizeof(T))
            return error(field, "truncated file (needs " + std::to_string(sizeof(T)) + " bytes, " +
                                    std::to_string(remaining()) + " left)", m_pos);
        T v;
        std::memcpy(&v, m_data + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }

    Result<std::string> readString(const std::string& field) {
        size_t at = m_pos;
        auto len = read<uint64_t>(field + " length");
        if (!len) return len.error();
        if (*len > remaining())
            return error(field, "string length " + std::to_string(*len) + " runs past the end of the file (" +
                                    std::to_string(remaining()) + " bytes left)", at);
        if (*len > kMaxStringBytes) return error(field, "string length " + std::to_string(*len) + " is absurd", at);
        std::string s(reinterpret_cast<const char*>(m_data + m_pos), *len);
        m_pos += *len;
        return s;
    }

private:
    const uint8_t* m_data;
    size_t m_size;
    size_t m_pos = 0;
    const std::string& m_name;
};

// Smallest number of bytes one element of this type can occupy; used to reject absurd counts.
uint64_t minElementBytes(ValueType t) {
    if (t == ValueType::String) return 8;
    if (t == ValueType::Array) return 12;
    return scalarSize(t);
}

Result<Value> readValue(Cursor& c, ValueType type, const std::string& key, int depth);

Result<Value> readScalar(Cursor& c, ValueType type, const std::string& key) {
    switch (type) {
        case ValueType::UInt8: { auto v = c.read<uint8_t>(key); if (!v) return v.error(); return Value::u8(*v); }
        case ValueType::Int8: { auto v = c.read<int8_t>(key); if (!v) return v.error(); return Value::i8(*v); }
        case ValueType::UInt16: { auto v = c.read<uint16_t>(key); if (!v) return v.error(); return Value::u16(*v); }
        case ValueType::Int16: { auto v = c.read<int16_t>(key); if (!v) return v.error(); return Value::i16(*v); }
        case ValueType::UInt32: { auto v = c.read<uint32_t>(key); if (!v) return v.error(); return Value::u32(*v); }
        case ValueType::Int32: { auto v = c.read<int32_t>(key); if (!v) return v.error(); return Value::i32(*v); }
        case ValueType::UInt64: { auto v = c.read<uint64_t>(key); if (!v) return v.error(); return Value::u64(*v); }
        case ValueType::Int64: { auto v = c.read<int64_t>(key); if (!v) return v.error(); return Value::i64(*v); }
        case ValueType::Float32: { auto v = c.read<float>(key); if (!v) return v.error(); return Value::f32(*v); }
        case ValueType::Float64: { auto v = c.read<double>(key); if (!v) return v.error(); return Value::f64(*v); }
        case ValueType::Bool: {
            size_t at = c.pos();
            auto v = c.read<uint8_t>(key);
            if (!v) return v.error();
            if (*v > 1) return c.error(key, "bool value " + std::to_string(*v) + " is neither 0 nor 1", at);
            return Value::boolean(*v != 0);
        }
        case ValueType::String: { auto s = c.readString(key); if (!s) return s.error(); return Value::str(std::move(*s)); }
        case ValueType::Array: break;
    }
    return c.error(key, "internal: not a scalar type", c.pos());
}

Result<Value> readValue(Cursor& c, ValueType type, const std::string& key, int depth) {
    if (type != ValueType::Array) return readScalar(c, type, key);
    if (depth >= kMaxArrayNesting) return c.error(key, "arrays nested deeper than " + std::to_string(kMaxArrayNesting), c.pos());
    size_t at = c.pos();
    auto elem = c.read<uint32_t>(key + " array element type");
    if (!elem) return elem.error();
    if (!isValidValueType(*elem)) return c.error(key, "unknown array element type id " + std::to_string(*elem), at);
    auto elemType = static_cast<ValueType>(*elem);
    size_t countAt = c.pos();
    auto count = c.read<uint64_t>(key + " array count");
    if (!count) return count.error();
    uint64_t minBytes = minElementBytes(elemType);
    if (*count > c.remaining() / minBytes)
        return c.error(key, "array count " + std::to_string(*count) + " cannot fit in the " +
                                std::to_string(c.remaining()) + " bytes left", countAt);
    std::vector<Value> items;
    items.reserve(*count);
    for (uint64_t i = 0; i < *count; ++i) {
        auto v = readValue(c, elemType, key + "[" + std::to_string(i) + "]", depth + 1);
        if (!v) return v.error();
        items.push_back(std::move(*v));
    }
    return Value::array(elemType, std::move(items));
}

}  // namespace

std::string TensorInfo::shapeString() const {
    std::string s = "[";
    for (uint32_t i = 0; i < nDims; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

GgufFile::~GgufFile() = default;

Result<void> GgufFile::parsePart(const uint8_t* data, size_t size, const std::string& name, uint32_t part) {
    Cursor c(data, size, name);
    auto magic = c.read<uint32_t>("magic");
    if (!magic) return magic.error();
    if (*magic != kMagic) return c.error("magic", "not a GGUF file (magic " + hex(*magic) + ", expected 0x46554747 \"GGUF\")", 0);
    auto version = c.read<uint32_t>("version");
    if (!version) return version.error();
    if (*version == 1) return c.error("version", "GGUF v1 is not supported (32-bit counts); convert the file to v3", 4);
    if (*version != 2 && *version != 3) return c.error("version", "unsupported GGUF version " + std::to_string(*version) + " (supported: 2, 3)", 4);
    if (part == 0) m_version = *version;

    auto nTensors = c.read<uint64_t>("tensor count");
    if (!nTensors) return nTensors.error();
    auto nKv = c.read<uint64_t>("metadata count");
    if (!nKv) return nKv.error();
    // A key/value needs at least 13 bytes (key length 8 + type 4 + 1); a tensor info at least 32.
    if (*nKv > c.remaining() / 13)
        return c.error("metadata count", std::to_string(*nKv) + " key/value pairs cannot fit in a " + std::to_string(size) + "-byte file", 16);
    if (*nTensors > c.remaining() / 32)
        return c.error("tensor count", std::to_string(*nTensors) + " tensors cannot fit in a " + std::to_string(size) + "-byte file", 8);

    uint32_t alignment = kDefaultAlignment;
    std::vector<std::pair<std::string, Value>> kv;
    std::unordered_map<std::string, size_t> kvIndex;
    for (uint64_t i = 0; i < *nKv; ++i) {
        size_t keyAt = c.pos();
        auto key = c.readString("key of metadata entry " + std::to_string(i));
        if (!key) return key.error();
        if (key->empty()) return c.error("metadata entry " + std::to_string(i), "empty key", keyAt);
        if (kvIndex.count(*key)) return c.error("metadata key " + util::quoteFileText(*key), "duplicate key", keyAt);
        size_t typeAt = c.pos();
        auto type = c.read<uint32_t>("type of " + util::quoteFileText(*key));
        if (!type) return type.error();
        if (!isValidValueType(*type)) return c.error("type of " + util::quoteFileText(*key), "unknown value type id " + std::to_string(*type), typeAt);
        auto value = readValue(c, static_cast<ValueType>(*type), util::quoteFileText(*key), 0);
        if (!value) return value.error();
        if (*key == "general.alignment") {
            auto a = value->asUInt();
            if (value->type != ValueType::UInt32 || !a || *a == 0 || (*a & (*a - 1)) != 0)
                return c.error("'general.alignment'", "must be a u32 power of two, got " + value->toDisplayString(), typeAt);
            alignment = static_cast<uint32_t>(*a);
        }
        kvIndex.emplace(*key, kv.size());
        kv.emplace_back(std::move(*key), std::move(*value));
    }

    struct Pending { TensorInfo info; size_t at; };
    std::vector<Pending> infos;
    infos.reserve(*nTensors);
    for (uint64_t i = 0; i < *nTensors; ++i) {
        size_t at = c.pos();
        auto tname = c.readString("name of tensor " + std::to_string(i));
        if (!tname) return tname.error();
        const std::string field = "tensor " + util::quoteFileText(*tname);
        TensorInfo t;
        t.name = *tname;
        t.part = part;
        auto nDims = c.read<uint32_t>(field + " n_dims");
        if (!nDims) return nDims.error();
        if (*nDims == 0 || *nDims > kMaxDims)
            return c.error(field, "n_dims " + std::to_string(*nDims) + " out of range 1..4", at);
        t.nDims = *nDims;
        uint64_t elements = 1;
        for (uint32_t d = 0; d < *nDims; ++d) {
            auto ne = c.read<uint64_t>(field + " ne[" + std::to_string(d) + "]");
            if (!ne) return ne.error();
            if (*ne > uint64_t(std::numeric_limits<int64_t>::max()))
                return c.error(field, "dimension " + std::to_string(d) + " = " + std::to_string(*ne) + " is negative as int64", at);
            if (*ne != 0 && elements > uint64_t(std::numeric_limits<int64_t>::max()) / *ne)
                return c.error(field, "element count overflows (shape product exceeds 2^63)", at);
            t.ne[d] = *ne;
            elements *= *ne;
        }
        t.nElements = elements;
        size_t typeAt = c.pos();
        auto typeId = c.read<uint32_t>(field + " type");
        if (!typeId) return typeId.error();
        auto tr = tensor::typeTraits(*typeId);
        if (!tr) return c.error(field, "unknown or removed ggml type id " + std::to_string(*typeId), typeAt);
        t.type = tr->type;
        if (t.ne[0] % tr->blockElems != 0)
            return c.error(field, "row length " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                                      std::string(tr->name) + " block size " + std::to_string(tr->blockElems), at);
        const uint64_t blocks = elements / tr->blockElems;
        if (blocks > std::numeric_limits<uint64_t>::max() / tr->blockBytes)
            return c.error(field, "byte size overflows (" + std::to_string(elements) + " elements of " +
                                      std::string(tr->name) + ")", at);
        t.nBytes = blocks * tr->blockBytes;
        auto offset = c.read<uint64_t>(field + " offset");
        if (!offset) return offset.error();
        t.offset = *offset;
        if (t.offset % alignment != 0)
            return c.error(field, "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(alignment), at);
        infos.push_back({std::move(t), at});
    }

    // The data section starts at the next multiple of the alignment.
    uint64_t dataStart = (c.pos() + alignment - 1) / alignment * alignment;
    uint64_t dataBytes = dataStart <= size ? size - dataStart : 0;
    if (!infos.empty() && dataStart > size)
        return c.error("tensor data", "file ends before the data section (needs " + std::to_string(dataStart) + " bytes)", c.pos());

    std::vector<size_t> order(infos.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (auto& p : infos) {
        if (p.info.offset > dataBytes || p.info.nBytes > dataBytes - p.info.offset)
            return c.error("tensor " + util::quoteFileText(p.info.name), "data [" + std::to_string(p.info.offset) + ", +" +
                                std::to_string(p.info.nBytes) + ") runs past the end of the file (data section holds " +
                                std::to_string(dataBytes) + " bytes)", p.at);
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return infos[a].info.offset < infos[b].info.offset; });
    for (size_t k = 1; k < order.size(); ++k) {
        const auto& prev = infos[order[k - 1]].info;
        const auto& cur = infos[order[k]];
        if (prev.nBytes > 0 && cur.info.offset < prev.offset + prev.nBytes)
            return c.error("tensor " + util::quoteFileText(cur.info.name), "data overlaps tensor " + util::quoteFileText(prev.name), cur.at);
    }

    if (part == 0) {
        m_alignment = alignment;
        m_kv = std::move(kv);
        m_kvIndex = std::move(kvIndex);
    }
    for (auto& p : infos) {
        if (m_tensorIndex.count(p.info.name))
            return c.error("tensor " + util::quoteFileText(p.info.name), "duplicate tensor name", p.at);
        p.info.data = data + dataStart + p.info.offset;
        m_tensorIndex.emplace(p.info.name, m_tensors.size());
        m_tensors.push_back(std::move(p.info));
    }
    m_fileBytes += size;
    return okResult();
}

Result<std::unique_ptr<GgufFile>> GgufFile::parse(const uint8_t* data, size_t size, const std::string& name) {
    std::unique_ptr<GgufFile> f(new GgufFile());
    f->m_path = name;
    f->m_partPaths = {name};
    if (auto r = f->parsePart(data, size, name, 0); !r) return r.error();
    return f;
}

Result<void> GgufFile::addPart(const std::string& path, uint32_t part) {
    auto map = MappedFile::open(path);
    if (!map) return map.error();
    auto r = parsePart((*map)->data, (*map)->size, path, part);
    if (!r) return r;
    m_maps.push_back(std::move(*map));
    return okResult();
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
    std::unique_ptr<GgufFile> f(new GgufFile());
    auto split = parseSplitName(path);
    if (!split || split->count == 1) {
        f->m_path = path;
        f->m_partPaths = {path};
        if (auto r = f->addPart(path, 0); !r) return r.error();
        if (auto n = f->getUInt("split.count"); n && *n > 1)
            return Error{path + ": metadata 'split.count' = " + std::to_string(*n) +
                         " but the file name is not of the form NAME-00001-of-0000N.gguf; cannot find the other parts"};
        return f;
    }
    f->m_path = splitPath(split->prefix, 1, split->count);
    for (uint32_t k = 1; k <= split->count; ++k) {
        std::string p = splitPath(split->prefix, k, split->count);
        f->m_partPaths.push_back(p);
        if (auto r = f->addPart(p, k - 1); !r) return r.error();
    }
    if (auto n = f->getUInt("split.count"); n && *n != split->count)
        return Error{f->m_path + ": metadata 'split.count' = " + std::to_string(*n) + " disagrees with the file name (" +
                     std::to_string(split->count) + " parts)"};
    return f;
}

const Value* GgufFile::find(std::string_view key) const {
    auto it = m_kvIndex.find(std::string(key));
    return it == m_kvIndex.end() ? nullptr : &m_kv[it->second].second;
}

std::optional<std::string> GgufFile::getString(std::string_view key) const {
    const Value* v = find(key);
    if (!v || !v->asString()) return std::nullopt;
    return *v->asString();
}
std::optional<uint64_t> GgufFile::getUInt(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->asUInt() : std::nullopt;
}
std::optional<int64_t> GgufFile::getInt(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->asInt() : std::nullopt;
}
std::optional<double> GgufFile::getFloat(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->asFloat() : std::nullopt;
}
std::optional<bool> GgufFile::getBool(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->asBool() : std::nullopt;
}
const std::vector<Value>* GgufFile::getArray(std::string_view key) const {
    const Value* v = find(key);
    return v ? v->asArray() : nullptr;
}

const TensorInfo* GgufFile::tensor(std::string_view name) const {
    auto it = m_tensorIndex.find(std::string(name));
    return it == m_tensorIndex.end() ? nullptr : &m_tensors[it->second];
}

std::optional<SplitName> parseSplitName(const std::string& path) {
    // NAME-00001-of-00003.gguf: 5-digit part and count, as llama.cpp's gguf-split writes them.
    static constexpr std::string_view kSuffix = ".gguf";
    constexpr size_t kTail = 1 + 5 + 4 + 5 + 5;  // "-00001-of-00003.gguf"
    if (path.size() <= kTail) return std::nullopt;
    std::string tail = path.substr(path.size() - kTail);
    if (tail[0] != '-' || tail.compare(6, 4, "-of-") != 0 || tail.compare(15, 5, kSuffix) != 0) return std::nullopt;
    auto digits = [](const std::string& s) { return std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; }); };
    std::string a = tail.substr(1, 5), b = tail.substr(10, 5);
    if (!digits(a) || !digits(b)) return std::nullopt;
    SplitName s{path.substr(0, path.size() - kTail), static_cast<uint32_t>(std::stoul(a)), static_cast<uint32_t>(std::stoul(b))};
    if (s.part == 0 || s.count == 0 || s.part > s.count) return std::nullopt;
    return s;
}

std::string splitPath(const std::string& prefix, uint32_t part, uint32_t count) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "-%05u-of-%05u.gguf", part, count);
    return prefix + buf;
}

}  // namespace verdict::gguf
