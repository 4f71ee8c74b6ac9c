#include "core/net/http.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace verdict::core::net {
namespace {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

// Connects with a timeout (non-blocking connect + poll).
Result<int> connectTo(const HttpUrl& u, int timeoutMs, const std::string& url) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (const int rc = ::getaddrinfo(u.host.c_str(), std::to_string(u.port).c_str(), &hints, &res); rc != 0)
        return Error{url + ": cannot resolve " + u.host + ": " + gai_strerror(rc)};
    std::string last = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
        if (rc < 0 && errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            rc = ::poll(&p, 1, timeoutMs);
            if (rc == 0) {
                last = "connection timed out after " + std::to_string(timeoutMs) + " ms";
                ::close(fd);
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
            rc = err == 0 ? 0 : -1;
            errno = err;
        }
        if (rc == 0) {
            const int one = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            ::freeaddrinfo(res);
            return fd;
        }
        last = std::strerror(errno);
        ::close(fd);
    }
    ::freeaddrinfo(res);
    return Error{url + ": cannot connect to " + u.host + ":" + std::to_string(u.port) + ": " + last};
}

}  // namespace

Result<HttpUrl> parseHttpUrl(const std::string& url) {
    if (url.rfind("https://", 0) == 0)
        return Error{url + ": https is not supported yet; put a plain-http proxy in front (e.g. on localhost)"};
    if (url.rfind("http://", 0) != 0) return Error{url + ": not an http:// URL"};
    HttpUrl u;
    std::string rest = url.substr(7);
    const size_t slash = rest.find('/');
    std::string hostPort = rest.substr(0, slash);
    u.path = slash == std::string::npos ? "/" : rest.substr(slash);
    if (hostPort.empty()) return Error{url + ": no host"};
    if (hostPort.front() == '[') {  // [::1]:8080
        const size_t close = hostPort.find(']');
        if (close == std::string::npos) return Error{url + ": malformed IPv6 host"};
        u.host = hostPort.substr(1, close - 1);
        hostPort = hostPort.substr(close + 1);
        if (!hostPort.empty() && hostPort.front() != ':') return Error{url + ": malformed host"};
        if (!hostPort.empty()) hostPort = hostPort.substr(1);
        else hostPort = "80";
    } else {
        const size_t colon = hostPort.rfind(':');
        u.host = hostPort.substr(0, colon);
        hostPort = colon == std::string::npos ? "80" : hostPort.substr(colon + 1);
    }
    int port = 0;
    auto [end, ec] = std::from_chars(hostPort.data(), hostPort.data() + hostPort.size(), port);
    if (ec != std::errc() || end != hostPort.data() + hostPort.size() || port <= 0 || port > 65535)
        return Error{url + ": invalid port '" + hostPort + "'"};
    u.port = port;
    return u;
}

Result<HttpResponse> httpRequest(const std::string& method, const std::string& url,
                                 const std::map<std::string, std::string>& headers, std::string_view body,
                                 const HttpClientOptions& o, const std::function<bool(std::string_view)>& onData) {
    auto u = parseHttpUrl(url);
    if (!u) return u.error();
    auto fdr = connectTo(*u, o.connectTimeoutMs, url);
    if (!fdr) return fdr.error();
    Fd fd{*fdr};

    std::string req = method + " " + u->path + " HTTP/1.1\r\nHost: " + u->host + ":" + std::to_string(u->port) +
                      "\r\nConnection: close\r\n";
    for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
    if (!body.empty() || method == "POST") req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n";
    req += body;
    std::string_view out = req;
    while (!out.empty()) {
        pollfd p{fd.fd, POLLOUT, 0};
        if (::poll(&p, 1, o.readTimeoutMs) <= 0) return Error{url + ": timed out sending the request"};
        const ssize_t n = ::send(fd.fd, out.data(), out.size(), MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) return Error{url + ": connection lost while sending: " + std::strerror(errno)};
        out.remove_prefix(static_cast<size_t>(n));
    }

    std::string buf;
    bool eof = false;
    char chunk[16384];
    int waited = 0;  // ms without data, counted in 200 ms slices so that cancel is seen promptly
    auto readMore = [&]() -> Result<void> {
        for (;;) {
            if (o.cancel && o.cancel->load()) return Error{url + ": cancelled"};
            pollfd p{fd.fd, POLLIN, 0};
            const int pr = ::poll(&p, 1, std::min(o.readTimeoutMs, 200));
            if (pr == 0) {
                waited += 200;
                if (waited >= o.readTimeoutMs)
                    return Error{url + ": no data for " + std::to_string(o.readTimeoutMs) + " ms (read timeout)"};
                continue;
            }
            waited = 0;
            if (pr < 0 && errno == EINTR) continue;
            const ssize_t n = ::recv(fd.fd, chunk, sizeof chunk, 0);
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (n < 0) return Error{url + ": connection lost: " + std::strerror(errno)};
            if (n == 0) eof = true;
            else buf.append(chunk, static_cast<size_t>(n));
            return {};
        }
    };

    HttpResponse resp;
    size_t headerEnd = std::string::npos;
    while ((headerEnd = buf.find("\r\n\r\n")) == std::string::npos) {
        if (eof) return Error{url + ": the server closed the connection before answering"};
        if (buf.size() > 256 * 1024) return Error{url + ": response headers too large"};
        if (auto r = readMore(); !r) return r.error();
    }
    {
        std::string_view head(buf.data(), headerEnd);
        const size_t le = head.find("\r\n");
        const std::string_view status = head.substr(0, le);
        if (status.rfind("HTTP/1.", 0) != 0 || status.size() < 12) return Error{url + ": malformed status line"};
        auto [e, ec] = std::from_chars(status.data() + 9, status.data() + 12, resp.status);
        if (ec != std::errc()) return Error{url + ": malformed status code"};
        std::string_view rest = le == std::string_view::npos ? std::string_view() : head.substr(le + 2);
        while (!rest.empty()) {
            const size_t e2 = rest.find("\r\n");
            std::string_view h = rest.substr(0, e2);
            rest = e2 == std::string_view::npos ? std::string_view() : rest.substr(e2 + 2);
            const size_t colon = h.find(':');
            if (colon == std::string_view::npos) continue;
            std::string_view v = h.substr(colon + 1);
            while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            resp.headers[lower(std::string(h.substr(0, colon)))] = std::string(v);
        }
    }
    buf.erase(0, headerEnd + 4);

    size_t total = 0;
    bool stopped = false;
    auto deliver = [&](std::string_view data) -> Result<void> {
        total += data.size();
        if (total > o.maxBodyBytes) return Error{url + ": response body larger than " + std::to_string(o.maxBodyBytes) + " bytes"};
        if (onData) {
            if (!onData(data)) stopped = true;
        } else {
            resp.body.append(data);
        }
        return {};
    };

    const bool chunked = lower(resp.headers["transfer-encoding"]).find("chunked") != std::string::npos;
    const auto cl = resp.headers.find("content-length");
    if (chunked) {
        for (;;) {
            size_t le;
            while ((le = buf.find("\r\n")) == std::string::npos) {
                if (eof) return Error{url + ": truncated chunked body"};
                if (auto r = readMore(); !r) return r.error();
            }
            size_t size = 0;
            auto [e, ec] = std::from_chars(buf.data(), buf.data() + le, size, 16);
            if (ec != std::errc()) return Error{url + ": malformed chunk size"};
            (void)e;
            buf.erase(0, le + 2);
            if (size == 0) break;
            // Before waiting for it: a chunk past the body limit (or near SIZE_MAX, where size + 2
            // wraps and the chunk would be read beyond the buffer) is refused here.
            if (size > o.maxBodyBytes - std::min(total, o.maxBodyBytes))
                return Error{url + ": response body larger than " + std::to_string(o.maxBodyBytes) + " bytes"};
            while (buf.size() < size + 2) {
                if (eof) return Error{url + ": truncated chunk"};
                if (auto r = readMore(); !r) return r.error();
            }
            if (auto r = deliver(std::string_view(buf.data(), size)); !r) return r.error();
            buf.erase(0, size + 2);
            if (stopped) break;
        }
    } else if (cl != resp.headers.end()) {
        size_t want = 0;
        auto [e, ec] = std::from_chars(cl->second.data(), cl->second.data() + cl->second.size(), want);
        if (ec != std::errc()) return Error{url + ": malformed Content-Length"};
        (void)e;
        if (want > o.maxBodyBytes) return Error{url + ": response body larger than " + std::to_string(o.maxBodyBytes) + " bytes"};
        size_t got = 0;
        for (;;) {
            const size_t take = std::min(buf.size(), want - got);
            if (take > 0) {
                if (auto r = deliver(std::string_view(buf.data(), take)); !r) return r.error();
                got += take;
                buf.erase(0, take);
            }
            if (got >= want || stopped) break;
            if (eof) return Error{url + ": the body ended after " + std::to_string(got) + " of " + std::to_string(want) + " bytes"};
            if (auto r = readMore(); !r) return r.error();
        }
    } else {  // until the connection closes
        for (;;) {
            if (!buf.empty()) {
                if (auto r = deliver(buf); !r) return r.error();
                buf.clear();
            }
            if (eof || stopped) break;
            if (auto r = readMore(); !r) return r.error();
        }
    }
    return resp;
}

void SseParser::feed(std::string_view bytes, const std::function<void(const std::string& data)>& onEvent) {
    for (char c : bytes) {
        if (c != '\n') {
            m_line.push_back(c);
            continue;
        }
        if (!m_line.empty() && m_line.back() == '\r') m_line.pop_back();
        if (m_line.empty()) {
            if (m_hasData) onEvent(m_data);
            m_data.clear();
            m_hasData = false;
        } else if (m_line.rfind("data:", 0) == 0) {
            std::string_view v(m_line);
            v.remove_prefix(5);
            if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            if (m_hasData) m_data.push_back('\n');
            m_data.append(v);
            m_hasData = true;
        }  // other fields (event:, id:, retry:, comments) are not needed here
        m_line.clear();
    }
}

}  // namespace verdict::core::net
