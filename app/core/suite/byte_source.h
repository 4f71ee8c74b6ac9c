// Reads a file as a stream of bytes, decompressing gzip transparently, and hashes the raw file
// bytes (SHA-256) on the way so a suite's content hash costs no second pass.
//
// Memory stays bounded (one raw chunk + one inflated chunk) whatever the file size.
#pragma once

#include <verdict/engine/result.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace verdict::core {

// What a gzip file may inflate to: a decompression bomb is an error naming the limit and the
// flag that raises it, not an exhausted machine or an hour of importing. Either bound 0 = none.
struct GzipLimits {
    uint64_t maxExpandedBytes = uint64_t{2} << 30;  // 2 GiB of text (--max-expanded-mib)
    // Inflated bytes per compressed byte read, judged once kRatioGraceBytes have come out. The
    // bundled datasets inflate 4-15x at gzip -9; zlib's own ceiling is about 1032x. 100 is the
    // bound Apache POI applies to zip entries (ZipSecureFile's default minimum inflate ratio 0.01).
    uint64_t maxRatio = 100;  // --max-expand-ratio
    static constexpr uint64_t kRatioGraceBytes = uint64_t{64} << 20;
};

class ByteSource {
public:
    ~ByteSource();
    ByteSource(const ByteSource&) = delete;
    ByteSource& operator=(const ByteSource&) = delete;

    // Opens `path`. gzip is detected from the magic bytes 1F 8B (not the file name), and
    // concatenated gzip members are read one after the other, like `zcat`.
    // `limits` bound what a gzip file may inflate to (GzipLimits).
    static Result<std::unique_ptr<ByteSource>> open(const std::string& path, const GzipLimits& limits = {});

    // The same over bytes already in memory (they must outlive the source, which reads them in
    // place); `name` stands for the path in error messages. Never fails for plain bytes.
    static Result<std::unique_ptr<ByteSource>> openMemory(std::string_view bytes, const std::string& name,
                                                          const GzipLimits& limits = {});

    // Reads up to `cap` bytes into `dst`; returns 0 at the end. Errors (I/O, corrupt gzip) name
    // the file and the raw byte offset.
    Result<size_t> read(char* dst, size_t cap);

    bool isGzip() const { return m_gzip; }
    uint64_t rawBytesRead() const { return m_rawRead; }  // bytes of the file consumed so far
    uint64_t fileSize() const { return m_fileSize; }
    // SHA-256 of all raw file bytes; reads the rest of the file first if the caller stopped early.
    Result<std::string> contentHash();

private:
    ByteSource() = default;
    Result<void> start();      // reads the first chunk and detects gzip
    Result<size_t> fillRaw();  // reads the next raw chunk into m_raw; 0 at end of file

    struct Impl;
    std::unique_ptr<Impl> m_impl;
    std::string m_path;
    bool m_gzip = false;
    bool m_rawEof = false;
    bool m_streamEnd = false;  // gzip: finished the last member
    uint64_t m_rawRead = 0;
    uint64_t m_fileSize = 0;
    uint64_t m_expanded = 0;
    GzipLimits m_limits;
};

}  // namespace verdict::core
