// SHA-256 (FIPS 180-4) for content hashes: a suite file's identity, a stored artefact's checksum.
//
// Not for secrets: no constant-time guarantees are needed or made. Two ways to use it:
//   verdict::util::sha256Hex(bytes)               one shot, 64 lower-case hex digits
//   Sha256 h; h.update(p, n); ...; h.finalHex()  streaming, for files read in chunks
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace verdict::util {

class Sha256 {
public:
    Sha256();

    // Feeds `len` bytes. May be called any number of times, with any chunk sizes (0 included).
    void update(const void* data, size_t len);
    void update(std::string_view data) { update(data.data(), data.size()); }

    // Pads, finishes and returns the digest. The object is reset afterwards and can hash again.
    std::array<uint8_t, 32> finalBytes();
    std::string finalHex();  // 64 lower-case hex digits

    void reset();

    // x86 SHA extensions are used when the CPU has them; the portable code otherwise.
    static bool usesShaExtensions();
    // Tests compare both paths on the same machine.
    void setForceScalar(bool on) { m_forceScalar = on; }

private:
    void compress(const uint8_t* block);  // one 64-byte block into m_state (portable)
    void compressBlocks(const uint8_t* data, size_t blocks);

    std::array<uint32_t, 8> m_state{};
    std::array<uint8_t, 64> m_buffer{};
    size_t m_bufferLen = 0;   // bytes waiting in m_buffer (< 64)
    uint64_t m_totalLen = 0;  // bytes fed so far (the message length before padding)
    bool m_forceScalar = false;
};

// SHA-256 of `data` as 64 lower-case hex digits.
std::string sha256Hex(std::string_view data);

}  // namespace verdict::util
