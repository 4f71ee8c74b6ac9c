#include "core/net/http.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace verdict::core::net {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

bool sendAll(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

std::string statusHead(int status, std::string_view contentType, const std::map<std::string, std::string>& headers,
                       const std::string* contentLength) {
    std::string h = "HTTP/1.1 " + std::to_string(status) + " " + httpReason(status) + "\r\n";
    h += "Content-Type: " + std::string(contentType) + "\r\n";
    if (contentLength) h += "Content-Length: " + *contentLength + "\r\n";
    h += "Connection: close\r\n";
    for (const auto& [k, v] : headers) h += k + ": " + v + "\r\n";
    return h + "\r\n";
}

class SocketResponder final : public HttpResponder {
public:
    explicit SocketResponder(int fd) : m_fd(fd) {}
    void send(int status, std::string_view contentType, std::string_view body,
              const std::map<std::string, std::string>& headers) override {
        if (m_sent) return;
        m_sent = true;
        const std::string len = std::to_string(body.size());
        m_ok = sendAll(m_fd, statusHead(status, contentType, headers, &len)) && sendAll(m_fd, body);
    }
    bool startStream(int status, std::string_view contentType, const std::map<std::string, std::string>& headers) override {
        if (m_sent) return false;
        m_sent = true;
        m_ok = sendAll(m_fd, statusHead(status, contentType, headers, nullptr));
        return m_ok;
    }
    bool write(std::string_view data) override {
        if (!m_sent || !m_ok) return false;
        m_ok = sendAll(m_fd, data);
        return m_ok;
    }
    bool sent() const override { return m_sent; }

private:
    int m_fd;
    bool m_sent = false;
    bool m_ok = true;
};

void plainError(int fd, int status, const std::string& message) {
    SocketResponder r(fd);
    const nlohmann::json j = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
    const std::string body = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    r.send(status, "application/json", body, {});
}

// Reads one request. Returns the status to answer with on failure (0 = connection gone).
int readRequest(int fd, const HttpServerOptions& o, HttpRequest& req, std::string& why) {
    std::string buf;
    size_t headerEnd = std::string::npos;
    char chunk[16384];
    auto readSome = [&]() -> int {  // 1 read, 0 closed, -1 timeout
        pollfd p{fd, POLLIN, 0};
        const int pr = ::poll(&p, 1, o.readTimeoutMs);
        if (pr == 0) return -1;
        if (pr < 0) return errno == EINTR ? 1 : 0;
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR) return 1;
        if (n <= 0) return 0;
        buf.append(chunk, static_cast<size_t>(n));
        return 1;
    };
    while (headerEnd == std::string::npos) {
        const int r = readSome();
        if (r == 0) return 0;
        if (r < 0) return why = "request headers not received in time", 408;
        headerEnd = buf.find("\r\n\r\n");
        if (headerEnd == std::string::npos && buf.size() > o.maxHeaderBytes)
            return why = "request headers larger than " + std::to_string(o.maxHeaderBytes) + " bytes", 431;
    }
    if (headerEnd > o.maxHeaderBytes) return why = "request headers too large", 431;
    std::string_view head(buf.data(), headerEnd);
    const size_t lineEnd = head.find("\r\n");
    const std::string_view line = head.substr(0, lineEnd);
    const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    if (sp1 == std::string_view::npos || sp2 == sp1) return why = "malformed request line", 400;
    req.method = std::string(line.substr(0, sp1));
    req.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
    const std::string_view version = line.substr(sp2 + 1);
    if (version.rfind("HTTP/1.", 0) != 0) return why = "unsupported HTTP version", 400;
    req.path = req.target.substr(0, req.target.find('?'));
    std::string_view rest = lineEnd == std::string_view::npos ? std::string_view() : head.substr(lineEnd + 2);
    while (!rest.empty()) {
        const size_t e = rest.find("\r\n");
        const std::string_view h = rest.substr(0, e);
        rest = e == std::string_view::npos ? std::string_view() : rest.substr(e + 2);
        const size_t colon = h.find(':');
        if (colon == std::string_view::npos) return why = "malformed header line", 400;
        req.headers[lower(std::string(trim(h.substr(0, colon))))] = std::string(trim(h.substr(colon + 1)));
    }
    if (!req.header("transfer-encoding").empty()) return why = "chunked request bodies are not supported", 411;
    size_t length = 0;
    if (const std::string cl = req.header("content-length"); !cl.empty()) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(cl.c_str(), &end, 10);
        if (errno != 0 || *end != '\0' || cl[0] == '-') return why = "invalid Content-Length", 400;
        if (v > o.maxBodyBytes)
            return why = "request body of " + cl + " bytes exceeds the limit of " + std::to_string(o.maxBodyBytes), 413;
        length = static_cast<size_t>(v);
    }
    req.body = buf.substr(headerEnd + 4);
    while (req.body.size() < length) {
        buf.clear();
        const int r = readSome();
        if (r == 0) return 0;
        if (r < 0) return why = "request body not received in time", 408;
        req.body += buf;
    }
    req.body.resize(length);
    return 200;
}

}  // namespace

std::string HttpRequest::header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
}

struct HttpServer::Impl {
    HttpServerOptions options;
    HttpHandler handler;
    int listenFd = -1;
    int port = 0;
    std::atomic<bool> stopping{false};
    std::thread acceptThread;
    std::mutex mu;
    std::condition_variable idle;
    int active = 0;

    void serve(int fd, std::string peer) {
        HttpRequest req;
        req.peer = std::move(peer);
        std::string why;
        const int status = readRequest(fd, options, req, why);
        if (status != 200) {
            if (status != 0) plainError(fd, status, why);
        } else {
            SocketResponder r(fd);
            handler(req, r);
            if (!r.sent()) r.send(500, "application/json", "{\"error\":{\"message\":\"no response\"}}", {});
        }
        ::shutdown(fd, SHUT_WR);
        // Drain briefly so the client sees our answer instead of a reset.
        char sink[1024];
        pollfd p{fd, POLLIN, 0};
        while (::poll(&p, 1, 50) > 0 && ::recv(fd, sink, sizeof sink, 0) > 0) {}
        ::close(fd);
        std::lock_guard lock(mu);
        --active;
        idle.notify_all();
    }

    void acceptLoop() {
        while (!stopping) {
            pollfd p{listenFd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            sockaddr_storage addr{};
            socklen_t len = sizeof addr;
            const int fd = ::accept(listenFd, reinterpret_cast<sockaddr*>(&addr), &len);
            if (fd < 0) continue;
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // stream tokens at once
            char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "?";
            ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, serv, sizeof serv,
                          NI_NUMERICHOST | NI_NUMERICSERV);
            {
                std::lock_guard lock(mu);
                if (active >= options.maxConnections) {
                    plainError(fd, 503, "too many connections");
                    ::close(fd);
                    continue;
                }
                ++active;
            }
            std::thread([this, fd, peer = std::string(host) + ":" + serv] { serve(fd, peer); }).detach();
        }
    }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::stop() {
    if (!m_impl || m_impl->stopping.exchange(true)) return;
    if (m_impl->acceptThread.joinable()) m_impl->acceptThread.join();
    if (m_impl->listenFd >= 0) ::close(m_impl->listenFd);
    std::unique_lock lock(m_impl->mu);
    m_impl->idle.wait(lock, [&] { return m_impl->active == 0; });
}

int HttpServer::port() const { return m_impl->port; }

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, HttpHandler handler) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->handler = std::move(handler);
    const std::string where = options.host + ":" + std::to_string(options.port);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (const int rc = ::getaddrinfo(options.host.c_str(), std::to_string(options.port).c_str(), &hints, &res); rc != 0)
        return Error{"cannot listen on " + where + ": " + gai_strerror(rc)};
    int fd = -1;
    std::string lastError = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
        lastError = std::strerror(errno);
        ::close(fd);
        fd = -1;
    }
    ::freeaddrinfo(res);
    if (fd < 0) return Error{"cannot listen on " + where + ": " + lastError};
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    impl->port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                             : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    impl->listenFd = fd;
    Impl* raw = impl.get();
    impl->acceptThread = std::thread([raw] { raw->acceptLoop(); });
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

const char* httpReason(int status) {
    switch (status) {
        case 200: return "OK";
        case 400: return "Bad Request";
        case 401: return "Unauthorized";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 411: return "Length Required";
        case 413: return "Payload Too Large";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return status < 400 ? "OK" : "Error";
    }
}

}  // namespace verdict::core::net
