#include "core/net/http_transport.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace verdict::core::net {
namespace {

int msUntil(HttpClock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - HttpClock::now()).count();
    if (left <= 0) return 0;
    return static_cast<int>(std::min<long long>((left + 999) / 1000, 1 << 30));  // rounded up: no busy loop
}

class PlainTransport final : public Transport {
public:
    using Transport::Transport;
    long readSome(char* buf, size_t size, HttpClock::time_point deadline) override {
        for (;;) {
            const ssize_t n = ::recv(m_fd, buf, size, 0);
            if (n >= 0) return static_cast<long>(n);
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
            const int w = waitFor(POLLIN, deadline);
            if (w == 0) return -2;
            if (w < 0) return -1;
        }
    }
    bool writeAll(const char* data, size_t size, HttpClock::time_point deadline) override {
        while (size > 0) {
            const ssize_t n = ::send(m_fd, data, size, MSG_NOSIGNAL);
            if (n > 0) {
                data += n;
                size -= static_cast<size_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (waitFor(POLLOUT, deadline) != 1) return false;
                continue;
            }
            return false;
        }
        return true;
    }
};

// TLS over the non-blocking socket: each SSL call that wants to read or write waits for the
// socket with poll until the deadline, then is called again with the same arguments (OpenSSL's
// rule for a retried SSL_write).
class TlsTransport final : public Transport {
public:
    TlsTransport(int fd, SSL_CTX* ctx) : Transport(fd), m_ssl(SSL_new(ctx)) {
        if (m_ssl) SSL_set_fd(m_ssl, fd);
    }
    ~TlsTransport() override {
        if (m_ssl) SSL_free(m_ssl);
    }
    bool handshake(HttpClock::time_point deadline, std::string* why) override {
        if (!m_ssl) return fail(why, "cannot create a TLS session");
        for (;;) {
            ERR_clear_error();
            const int r = SSL_accept(m_ssl);
            if (r == 1) return true;
            const int w = waitAfter(SSL_get_error(m_ssl, r), deadline);
            if (w == 0) return fail(why, "the TLS handshake did not finish in time");
            if (w < 0) {
                char reason[256] = "the peer closed the connection";
                if (const unsigned long e = ERR_get_error()) ERR_error_string_n(e, reason, sizeof reason);
                return fail(why, std::string("TLS handshake failed: ") + reason);
            }
        }
    }
    long readSome(char* buf, size_t size, HttpClock::time_point deadline) override {
        const int want = static_cast<int>(std::min<size_t>(size, 1 << 30));
        for (;;) {
            ERR_clear_error();
            const int n = SSL_read(m_ssl, buf, want);
            if (n > 0) return n;
            const int e = SSL_get_error(m_ssl, n);
            if (e == SSL_ERROR_ZERO_RETURN) return 0;  // close_notify
            const int w = waitAfter(e, deadline);
            if (w == 0) return -2;
            if (w < 0) return e == SSL_ERROR_SYSCALL && errno == 0 ? 0 : -1;  // a bare TCP close: closed
        }
    }
    bool writeAll(const char* data, size_t size, HttpClock::time_point deadline) override {
        while (size > 0) {
            const int want = static_cast<int>(std::min<size_t>(size, 1 << 30));
            ERR_clear_error();
            const int n = SSL_write(m_ssl, data, want);
            if (n > 0) {
                data += n;
                size -= static_cast<size_t>(n);
                continue;
            }
            if (waitAfter(SSL_get_error(m_ssl, n), deadline) != 1) return false;
        }
        return true;
    }
    bool hasBuffered() const override { return SSL_pending(m_ssl) > 0; }
    void finish() override {
        ERR_clear_error();
        if (!m_finished && SSL_is_init_finished(m_ssl)) SSL_shutdown(m_ssl);  // our close_notify; theirs is not awaited
        m_finished = true;
    }

private:
    // After an SSL call returned `error`: waits for what it wants (1 ready, 0 deadline, -1 failed).
    int waitAfter(int error, HttpClock::time_point deadline) const {
        if (error == SSL_ERROR_WANT_READ) return waitFor(POLLIN, deadline);
        if (error == SSL_ERROR_WANT_WRITE) return waitFor(POLLOUT, deadline);
        return -1;
    }
    static bool fail(std::string* why, const std::string& message) {
        if (why) *why = message;
        return false;
    }
    SSL* m_ssl;
    bool m_finished = false;
};

std::string sslReason() {
    const unsigned long e = ERR_get_error();
    if (!e) return "no detail";
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    return buf;
}

}  // namespace

bool loadServerCertificate(void* sslCtx, const std::string& cert, const std::string& key, std::string* why) {
    SSL_CTX& ctx = *static_cast<SSL_CTX*>(sslCtx);
    for (const auto& [file, what] : {std::pair{cert, "certificate"}, std::pair{key, "key"}}) {
        std::ifstream probe(file);
        if (!probe) {
            *why = std::string("cannot read the TLS ") + what + " " + file + ": " + std::strerror(errno);
            return false;
        }
    }
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(&ctx, cert.c_str()) != 1) {
        *why = "the TLS certificate " + cert + " is not a PEM certificate (" + sslReason() + ")";
        return false;
    }
    ERR_clear_error();
    if (SSL_CTX_use_PrivateKey_file(&ctx, key.c_str(), SSL_FILETYPE_PEM) != 1) {
        // OpenSSL compares the key with the certificate as it loads it.
        bool mismatch = false;
        std::string reason;
        for (unsigned long e; (e = ERR_get_error()) != 0;) {
            mismatch = mismatch || (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH);
            if (reason.empty()) {
                char buf[256];
                ERR_error_string_n(e, buf, sizeof buf);
                reason = buf;
            }
        }
        *why = mismatch ? "the TLS key " + key + " does not belong to the certificate " + cert
                        : "the TLS key " + key + " is not a PEM private key without a passphrase (" + reason + ")";
        return false;
    }
    ERR_clear_error();
    if (SSL_CTX_check_private_key(&ctx) != 1) {
        *why = "the TLS key " + key + " does not belong to the certificate " + cert;
        return false;
    }
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF);
    return true;
}

bool Transport::peerClosed() const {
    pollfd p{m_fd, POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

int Transport::waitFor(short events, HttpClock::time_point deadline) const {
    for (;;) {
        pollfd p{m_fd, events, 0};
        const int r = ::poll(&p, 1, msUntil(deadline));
        if (r > 0) return (p.revents & POLLNVAL) ? -1 : 1;
        if (r < 0 && errno != EINTR) return -1;
        if (r == 0 && HttpClock::now() >= deadline) return 0;
    }
}

std::unique_ptr<Transport> plainTransport(int fd) { return std::make_unique<PlainTransport>(fd); }

std::unique_ptr<Transport> tlsTransport(int fd, void* ctx) {
    return std::make_unique<TlsTransport>(fd, static_cast<SSL_CTX*>(ctx));
}

ConnectionStream::ConnectionStream(Transport& transport, std::string remoteIp, int remotePort, std::string localIp,
                                   int localPort, int writeTimeoutMs)
    : m_transport(transport),
      m_remoteIp(std::move(remoteIp)),
      m_localIp(std::move(localIp)),
      m_remotePort(remotePort),
      m_localPort(localPort),
      m_writeTimeout(writeTimeoutMs) {}

void ConnectionStream::beginHead(HttpClock::time_point deadline, size_t maxBytes) {
    m_inHead = true;
    m_deadline = deadline;
    m_headBudget = maxBytes;
    m_headBytes = m_line = m_longestLine = m_written = 0;
    m_failure = Failure::None;
}

void ConnectionStream::beginBody(HttpClock::time_point deadline) {
    m_inHead = false;
    m_deadline = deadline;
}

bool ConnectionStream::waitForRequest(HttpClock::time_point deadline) {
    return m_off < m_len || m_transport.hasBuffered() || m_transport.waitFor(POLLIN, deadline) == 1;
}

bool ConnectionStream::is_readable() const {
    return m_off < m_len || m_transport.hasBuffered() || m_transport.waitFor(POLLIN, m_deadline) == 1;
}

bool ConnectionStream::is_writable() const {
    return !m_transport.peerClosed() && m_transport.waitFor(POLLOUT, HttpClock::now() + m_writeTimeout) == 1;
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
    if (m_failure != Failure::None) return -1;
    if (m_off == m_len) {
        const long n = m_transport.readSome(m_buf, sizeof m_buf, m_deadline);
        if (n == -2) {
            m_failure = m_inHead ? Failure::HeadTimeout : Failure::BodyTimeout;
            return -1;
        }
        if (n <= 0) return n == 0 ? 0 : -1;
        m_off = 0;
        m_len = static_cast<size_t>(n);
    }
    size_t k = std::min(size, m_len - m_off);
    if (m_inHead) {
        if (m_headBytes >= m_headBudget) {
            m_failure = Failure::HeadTooLarge;
            return -1;
        }
        k = std::min(k, m_headBudget - m_headBytes);
        for (size_t i = 0; i < k; ++i) {
            ++m_line;
            m_longestLine = std::max(m_longestLine, m_line);
            if (m_buf[m_off + i] == '\n') m_line = 0;
        }
        m_headBytes += k;
    }
    std::memcpy(ptr, m_buf + m_off, k);
    m_off += k;
    return static_cast<ssize_t>(k);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
    if (!m_transport.writeAll(ptr, size, HttpClock::now() + m_writeTimeout)) return -1;
    m_written += size;
    return static_cast<ssize_t>(size);
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
    ip = m_remoteIp;
    port = m_remotePort;
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
    ip = m_localIp;
    port = m_localPort;
}

}  // namespace verdict::core::net
