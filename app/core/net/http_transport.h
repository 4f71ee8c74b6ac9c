// One server connection's bytes, beneath cpp-httplib (internal to core/net/http_server.cpp).
//
// Transport: a plain or TLS (OpenSSL) socket, non-blocking, every read and write bounded by a
// deadline (poll), so no call on a connection can wait for ever on a peer.
// ConnectionStream: the httplib::Stream the library reads a request from and writes its answer
// to. It buffers reads (the library reads a request head one byte at a time) and enforces what the
// library does not: one deadline for the whole head and one for the whole body (a read-timeout
// per read lets a client that trickles a byte a second hold a connection for ever) and a byte
// budget for the whole head (the library bounds each line, not their number). When one runs out,
// reads fail and failure() says which, so the answer can be 408 or 431 rather than the library's
// 400.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace verdict::core::net {

using HttpClock = std::chrono::steady_clock;

class Transport {
public:
    explicit Transport(int fd) : m_fd(fd) {}
    virtual ~Transport() = default;
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;

    int fd() const { return m_fd; }
    // TLS: the handshake, before the deadline (`why` says what failed). Plain: nothing to do.
    virtual bool handshake(HttpClock::time_point /*deadline*/, std::string* /*why*/) { return true; }
    // Up to `size` bytes: > 0 read, 0 the peer closed, -1 an error, -2 the deadline passed first.
    virtual long readSome(char* buf, size_t size, HttpClock::time_point deadline) = 0;
    // All of it before the deadline; false when the peer went away, an error, or too slow a reader.
    virtual bool writeAll(const char* data, size_t size, HttpClock::time_point deadline) = 0;
    // Bytes already received and decoded below this layer (TLS records read ahead).
    virtual bool hasBuffered() const { return false; }
    // Ends the session politely (TLS close_notify). The socket stays open: the caller closes it.
    virtual void finish() {}

    // The peer closed the connection or shut down its sending side (POLLRDHUP), or it failed.
    bool peerClosed() const;
    // 1 ready, 0 the deadline passed, -1 an error. A hang-up counts as ready: the next read says so.
    int waitFor(short events, HttpClock::time_point deadline) const;

protected:
    int m_fd;
};

// The socket must be non-blocking. TLS: `ctx` is the server's (SSL_CTX*), shared by connections.
std::unique_ptr<Transport> plainTransport(int fd);
std::unique_ptr<Transport> tlsTransport(int fd, void* ctx);

// Loads a PEM certificate (chain) and its PEM private key into `sslCtx` (an SSL_CTX*), TLS 1.2 or
// newer. False with `why` naming the file: unreadable, not PEM, or a key of another certificate.
bool loadServerCertificate(void* sslCtx, const std::string& cert, const std::string& key, std::string* why);

class ConnectionStream final : public httplib::Stream {
public:
    enum class Failure { None, HeadTimeout, HeadTooLarge, BodyTimeout };

    ConnectionStream(Transport& transport, std::string remoteIp, int remotePort, std::string localIp, int localPort,
                     int writeTimeoutMs);

    // The next request starts: its head must be complete before `deadline` within `maxBytes`.
    void beginHead(HttpClock::time_point deadline, size_t maxBytes);
    // The head is in (the library's setup hook); the body must be complete before `deadline`.
    void beginBody(HttpClock::time_point deadline);
    // Whether a byte of another request arrives before `deadline` (kept-alive idle wait).
    bool waitForRequest(HttpClock::time_point deadline);

    Failure failure() const { return m_failure; }
    size_t longestHeadLine() const { return m_longestLine; }  // bytes, the line feed included
    size_t bytesWritten() const { return m_written; }         // since beginHead()

    // httplib::Stream
    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    socket_t socket() const override { return m_transport.fd(); }

private:
    Transport& m_transport;
    std::string m_remoteIp, m_localIp;
    int m_remotePort, m_localPort;
    std::chrono::milliseconds m_writeTimeout;
    char m_buf[16384];
    size_t m_off = 0, m_len = 0;  // unread bytes: m_buf[m_off, m_len)
    bool m_inHead = true;
    HttpClock::time_point m_deadline;
    size_t m_headBudget = 0, m_headBytes = 0, m_line = 0, m_longestLine = 0, m_written = 0;
    Failure m_failure = Failure::None;
};

}  // namespace verdict::core::net
