#include "core/suite/byte_source.h"

#include "util/sha256.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace verdict::core {

namespace {
constexpr size_t kRawChunk = size_t(1) << 20;  // 1 MiB reads keep syscalls rare and memory flat
}

struct ByteSource::Impl {
    FILE* file = nullptr;             // nullptr: the bytes are in memory (openMemory)
    std::string_view memory;          // openMemory: all the bytes, handed out as one raw chunk
    util::Sha256 hash;
    std::vector<unsigned char> rawBuf;  // files: the chunk read last
    const unsigned char* raw = nullptr;  // current raw chunk: rawBuf, or the memory itself
    size_t rawPos = 0;  // next unread byte of `raw` (plain files: handed out directly)
    size_t rawLen = 0;
    z_stream zs{};
    bool zsInit = false;
    std::string finalHash;
    ~Impl() {
        if (zsInit) inflateEnd(&zs);
        if (file) std::fclose(file);
    }
};

ByteSource::~ByteSource() = default;

Result<std::unique_ptr<ByteSource>> ByteSource::open(const std::string& path, const GzipLimits& limits) {
    std::unique_ptr<ByteSource> src(new ByteSource());
    src->m_path = path;
    src->m_limits = limits;
    src->m_impl = std::make_unique<Impl>();
    auto& im = *src->m_impl;
    im.file = std::fopen(path.c_str(), "rb");
    if (!im.file) return Error{path + ": cannot open: " + std::strerror(errno)};
    if (std::fseek(im.file, 0, SEEK_END) == 0) {
        const long size = std::ftell(im.file);
        if (size > 0) src->m_fileSize = uint64_t(size);
        std::fseek(im.file, 0, SEEK_SET);
    }
    im.rawBuf.resize(kRawChunk);
    auto started = src->start();
    if (!started) return started.error();
    return src;
}

Result<std::unique_ptr<ByteSource>> ByteSource::openMemory(std::string_view bytes, const std::string& name,
                                                           const GzipLimits& limits) {
    std::unique_ptr<ByteSource> src(new ByteSource());
    src->m_path = name;
    src->m_limits = limits;
    src->m_impl = std::make_unique<Impl>();
    src->m_impl->memory = bytes.data() ? bytes : std::string_view("", 0);  // never a null pointer
    src->m_fileSize = bytes.size();
    auto started = src->start();
    if (!started) return started.error();
    return src;
}

Result<void> ByteSource::start() {
    auto& im = *m_impl;
    auto first = fillRaw();
    if (!first) return first.error();
    if (im.rawLen >= 2 && im.raw[0] == 0x1F && im.raw[1] == 0x8B) {
        m_gzip = true;
        // windowBits 15 + 16: gzip wrapper only (RFC 1952), as zlib's manual describes.
        if (inflateInit2(&im.zs, 15 + 16) != Z_OK) return Error{m_path + ": zlib inflateInit2 failed"};
        im.zsInit = true;
    }
    return {};
}

Result<size_t> ByteSource::fillRaw() {
    auto& im = *m_impl;
    im.rawPos = 0;
    im.rawLen = 0;
    if (m_rawEof) return size_t(0);
    size_t n = 0;
    if (!im.file) {  // memory: everything at once, then the end
        im.raw = reinterpret_cast<const unsigned char*>(im.memory.data());
        n = im.memory.size();
        m_rawEof = true;
    } else {
        im.raw = im.rawBuf.data();
        n = std::fread(im.rawBuf.data(), 1, im.rawBuf.size(), im.file);
        if (n < im.rawBuf.size()) {
            if (std::ferror(im.file)) return Error{m_path + ": read error at byte " + std::to_string(m_rawRead) + ": " + std::strerror(errno)};
            m_rawEof = true;
        }
    }
    im.hash.update(im.raw, n);
    im.rawLen = n;
    m_rawRead += n;
    return n;
}

Result<size_t> ByteSource::read(char* dst, size_t cap) {
    auto& im = *m_impl;
    if (cap == 0) return size_t(0);
    if (!m_gzip) {
        if (im.rawPos == im.rawLen) {
            auto r = fillRaw();
            if (!r) return r.error();
            if (*r == 0) return size_t(0);
        }
        const size_t n = std::min(cap, im.rawLen - im.rawPos);
        std::memcpy(dst, im.raw + im.rawPos, n);
        im.rawPos += n;
        return n;
    }
    size_t produced = 0;
    while (produced == 0 && !m_streamEnd) {
        if (im.rawPos == im.rawLen) {
            auto r = fillRaw();
            if (!r) return r.error();
            if (*r == 0) return Error{m_path + ": gzip stream truncated at byte " + std::to_string(m_rawRead)};
        }
        im.zs.next_in = const_cast<unsigned char*>(im.raw + im.rawPos);  // zlib only reads it
        im.zs.avail_in = unsigned(im.rawLen - im.rawPos);
        im.zs.next_out = reinterpret_cast<unsigned char*>(dst);
        im.zs.avail_out = unsigned(std::min<size_t>(cap, 1u << 30));
        const int rc = inflate(&im.zs, Z_NO_FLUSH);
        const size_t consumed = (im.rawLen - im.rawPos) - im.zs.avail_in;
        im.rawPos += consumed;
        produced = std::min<size_t>(cap, 1u << 30) - im.zs.avail_out;
        m_expanded += produced;
        if (m_limits.maxExpandedBytes > 0 && m_expanded > m_limits.maxExpandedBytes)
            return Error{m_path + ": gzip data expands past " + std::to_string(m_limits.maxExpandedBytes >> 20) +
                         " MiB (from " + std::to_string(m_rawRead >> 20) + " MiB read of a " +
                         std::to_string(m_fileSize >> 20) +
                         " MiB file): refused as a possible decompression bomb; raise the limit with "
                         "--max-expanded-mib N (0 = none) if the file is genuine"};
        // m_rawRead counts whole chunks read, a little more than zlib consumed: the ratio is
        // judged on the lenient side.
        if (m_limits.maxRatio > 0 && m_expanded > GzipLimits::kRatioGraceBytes &&
            m_expanded / std::max<uint64_t>(m_rawRead, 1) > m_limits.maxRatio)
            return Error{m_path + ": gzip data expands more than " + std::to_string(m_limits.maxRatio) + ":1 (" +
                         std::to_string(m_expanded >> 20) + " MiB from the first " + std::to_string(m_rawRead >> 10) +
                         " KiB of a " + std::to_string(m_fileSize >> 20) +
                         " MiB file): refused as a possible decompression bomb; raise the limit with "
                         "--max-expand-ratio N (0 = none) if the file is genuine"};
        if (rc == Z_STREAM_END) {
            // Another gzip member may follow (files made with `cat a.gz b.gz`).
            if (im.rawPos == im.rawLen) {
                auto r = fillRaw();
                if (!r) return r.error();
            }
            if (im.rawLen - im.rawPos == 0) m_streamEnd = true;
            else inflateReset(&im.zs);
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            const uint64_t at = m_rawRead - (im.rawLen - im.rawPos);
            return Error{m_path + ": corrupt gzip data near byte " + std::to_string(at) + ": " +
                         (im.zs.msg ? im.zs.msg : "inflate error " + std::to_string(rc))};
        }
    }
    return produced;
}

Result<std::string> ByteSource::contentHash() {
    auto& im = *m_impl;
    if (!im.finalHash.empty()) return im.finalHash;
    while (!m_rawEof) {
        auto r = fillRaw();
        if (!r) return r.error();
    }
    im.rawPos = im.rawLen;  // nothing further is handed out after the hash is final
    m_streamEnd = true;
    im.finalHash = im.hash.finalHex();
    return im.finalHash;
}

}  // namespace verdict::core
