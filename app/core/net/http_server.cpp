// HttpServer on cpp-httplib (Debian's 0.11.4, a compiled library). The library parses each
// request (request line, headers, Content-Length body), routes it and writes the answer (status
// line, headers, body or chunked stream, Keep-Alive). Around it, what it lacks (docs/serve.md):
//
//   accept   the library's accept loop hands each socket to process_and_close_socket(); ours
//            only admits it (admit()): into the queue of the worker pool, or a 503 answered by the
//            refuser thread when every worker is busy with a request and the queue is full, after
//            dropping the connection that has waited longest for a request head (slowloris).
//   serve    a worker runs the connection's keep-alive loop and calls the library's
//            process_request() once per request over a ConnectionStream (http_transport.h):
//            deadlines for the whole head and body, the head's byte budget, write timeouts, TLS.
//   handle   the route runs our push-style handler on the worker's companion thread
//            (http_bridge.h); a send() is handed over whole, a stream chunk by chunk through a small
//            queue that the library's chunked content provider drains. The worker watches the
//            socket meanwhile: a client that leaves is noticed within 50 ms (clientGone(), write()
//            false).
//
// The library's hooks get only (Request, Response); they all run on the connection's worker inside
// process_request(), so they find their connection through a thread_local (t_request).
#include "core/net/http.h"
#include "core/net/http_bridge.h"
#include "core/net/http_transport.h"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <openssl/ssl.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace verdict::core::net {
namespace {

using Clock = HttpClock;
using namespace std::chrono_literals;

constexpr size_t kLibraryLineLimit = 8192;        // CPPHTTPLIB_HEADER_MAX_LENGTH / _REQUEST_URI_MAX_LENGTH, baked into the .so
constexpr auto kClientWatch = 50ms;                // how often a worker looks whether its client left

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string errorBody(const std::string& message) {
    const nlohmann::json j = {{"error", {{"message", message}, {"type", "invalid_request_error"}}}};
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// An answer the server writes itself, where the library never sees the request (503) or gave up
// without answering (a request line that did not arrive in time or within the budget).
std::string ownAnswer(int status, const std::string& message) {
    const std::string body = errorBody(message);
    return "HTTP/1.1 " + std::to_string(status) + " " + httpReason(status) +
           "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

void setError(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content(errorBody(message), "application/json");
}

// The numeric address and port of either end of a socket.
std::pair<std::string, int> endpoint(int fd, bool peer) {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if ((peer ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) : ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
        return {"?", 0};
    char host[NI_MAXHOST] = "?", serv[NI_MAXSERV] = "0";
    ::getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    return {host, std::atoi(serv)};
}

// ---- threads --------------------------------------------------------------------------------

// Answers refused connections (503) one after another, off the accept thread: over TLS that takes
// a handshake. At most 64 wait; beyond that a refused socket is closed unanswered.
class Refuser {
public:
    void start(SSL_CTX* tls) {
        m_tls = tls;
        m_thread = std::thread([this] { loop(); });
    }
    void refuse(int fd, std::string answer) {
        {
            std::lock_guard lock(m_mu);
            if (m_waiting.size() < 64 && !m_quit) {
                m_waiting.emplace_back(fd, std::move(answer));
                m_cv.notify_all();
                return;
            }
        }
        ::close(fd);
    }
    void stop() {
        {
            std::lock_guard lock(m_mu);
            m_quit = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable()) m_thread.join();
    }

private:
    void loop() {
        std::unique_lock lock(m_mu);
        for (;;) {
            m_cv.wait(lock, [&] { return !m_waiting.empty() || m_quit; });
            if (m_waiting.empty()) return;
            auto [fd, answer] = std::move(m_waiting.front());
            m_waiting.pop_front();
            lock.unlock();
            {
                auto t = m_tls ? tlsTransport(fd, m_tls) : plainTransport(fd);
                const auto deadline = Clock::now() + 1s;
                if (t->handshake(deadline, nullptr) && t->writeAll(answer.data(), answer.size(), deadline)) t->finish();
            }
            // Read what the client still sends for a moment, so that it sees the answer, not a reset.
            ::shutdown(fd, SHUT_WR);
            char sink[4096];
            const auto drainEnd = Clock::now() + 100ms;
            const auto probe = plainTransport(fd);
            while (probe->waitFor(POLLIN, drainEnd) == 1 && ::recv(fd, sink, sizeof sink, 0) > 0) {}
            ::close(fd);
            lock.lock();
        }
    }
    SSL_CTX* m_tls = nullptr;
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<std::pair<int, std::string>> m_waiting;
    bool m_quit = false;
    std::thread m_thread;
};

// The library's accept loop hands each task (a call of process_and_close_socket) to its task
// queue; ours runs it at once on the accept thread, where it only admits the socket.
class AdmitAtOnce final : public httplib::TaskQueue {
public:
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override {}
};

// ---- the server -------------------------------------------------------------------------------

class ServerCore;

// What the hooks of one request share with the worker that runs it.
struct RequestScope {
    ServerCore* core = nullptr;
    ConnectionStream* stream = nullptr;
    Transport* transport = nullptr;
    HandlerThread* companion = nullptr;
    uint64_t conn = 0;
    std::string peer;
    bool answered = false;   // our route or a refusal made the answer (not the library)
    bool closeAfter = false; // the connection ends after this answer
    bool keepAlive = true;
    std::vector<std::pair<std::string, std::string>> headers = {};  // as received, names lower-cased
};
thread_local RequestScope* t_request = nullptr;

// httplib::Server or httplib::SSLServer with the accepted socket taken over by ServerCore.
template <class Base>
class Library final : public Base {
public:
    template <class... Args>
    explicit Library(ServerCore* core, Args&&... args) : Base(std::forward<Args>(args)...), m_core(core) {}
    bool runRequest(httplib::Stream& s, bool close, bool& closed, const std::function<void(httplib::Request&)>& setup) {
        return this->process_request(s, close, closed, setup);
    }
    // The library's backlog (CPPHTTPLIB_LISTEN_BACKLOG) is 5: a burst of clients would wait a
    // second for a SYN retry. listen() again on the bound socket only widens the queue.
    void widenBacklog() { ::listen(this->svr_sock_, 512); }

private:
    bool process_and_close_socket(socket_t sock) override;
    ServerCore* m_core;
};

class ServerCore {
public:
    HttpServerOptions options;
    HttpHandler handler;
    std::unique_ptr<httplib::Server> http;
    std::function<bool(httplib::Stream&, bool, bool&, const std::function<void(httplib::Request&)>&)> runRequest;
    SSL_CTX* tls = nullptr;
    int port = 0;
    std::thread listenThread;
    Refuser refuser;

    ~ServerCore() { stop(); }

    void configure();
    void stop();
    void admit(int fd);

private:
    struct Conn {
        int fd = -1;
        std::string host;         // the client's address without the port
        bool queued = true;       // waiting for a worker
        bool waitingHead = true;  // served, between requests: may be dropped when the server is full
        bool dropped = false;     // shut down to make room; its worker is leaving
        Clock::time_point since;  // when it started waiting
    };

    void workerLoop();
    void serve(uint64_t id, int fd, HandlerThread& companion);
    bool dropLongestWaiting(const std::string* host);
    bool setWaiting(uint64_t id, bool waiting);
    void onHead(httplib::Request& req, RequestScope& s);
    std::optional<std::pair<int, std::string>> refusal(const httplib::Request& req) const;
    void route(const httplib::Request& req, httplib::Response& res);
    httplib::Server::HandlerResponse libraryError(httplib::Response& res);

    std::mutex m_mu;
    std::condition_variable m_wake, m_idle;
    std::map<uint64_t, Conn> m_conns;
    std::deque<uint64_t> m_queue;
    uint64_t m_nextId = 0;
    std::vector<std::thread> m_workers;
    int m_idleWorkers = 0;
    std::atomic<bool> m_stopping{false};  // written under m_mu
    bool m_poolStop = false, m_stopped = false;
};

template <class Base>
bool Library<Base>::process_and_close_socket(socket_t sock) {
    m_core->admit(sock);
    return true;
}

// The library's hooks; each runs inside runRequest() on the connection's worker.
void ServerCore::configure() {
    httplib::Server& s = *http;
    s.new_task_queue = [] { return new AdmitAtOnce; };
    // Only SO_REUSEADDR: the library's default adds SO_REUSEPORT, which would let a second server
    // bind the same port silently.
    s.set_socket_options([](socket_t fd) {
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    });
    s.set_payload_max_length(options.maxBodyBytes);
    s.set_keep_alive_max_count(static_cast<size_t>(std::max(1, options.maxRequestsPerConnection)));
    s.set_keep_alive_timeout(std::max<time_t>(1, (options.keepAliveTimeoutMs + 999) / 1000));  // what Keep-Alive: says
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (auto r = refusal(req)) {
            setError(res, r->first, r->second);
            t_request->answered = t_request->closeAfter = true;  // the body is not read: the connection cannot go on
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    s.set_expect_100_continue_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (auto r = refusal(req)) {  // refuse before the client sends the body
            setError(res, r->first, r->second);
            t_request->answered = t_request->closeAfter = true;
            return r->first;
        }
        return 100;
    });
    s.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request&, httplib::Response& res) { return libraryError(res); }));
    s.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
        if (!t_request || !t_request->closeAfter) return;
        res.headers.erase("Keep-Alive");
        if (!res.has_header("Connection")) res.set_header("Connection", "close");
    });
    const httplib::Server::Handler route = [this](const httplib::Request& req, httplib::Response& res) { this->route(req, res); };
    const std::string any = "[\\s\\S]*";  // every path, line breaks (decoded %0A) included
    s.Get(any, route).Post(any, route).Put(any, route).Patch(any, route).Delete(any, route).Options(any, route);
}

// An answer the library made (a malformed request, a head or body that did not arrive in time or
// fit): our JSON error, the status made precise, and the connection closed after it.
httplib::Server::HandlerResponse ServerCore::libraryError(httplib::Response& res) {
    RequestScope* s = t_request;
    if (!s || s->answered) return httplib::Server::HandlerResponse::Unhandled;
    s->closeAfter = true;
    int status = res.status;
    std::string message = "malformed request";
    switch (s->stream->failure()) {
        case ConnectionStream::Failure::HeadTimeout:
            status = 408, message = "request head not received within " + std::to_string(options.headTimeoutMs) + " ms";
            break;
        case ConnectionStream::Failure::HeadTooLarge:
            status = 431, message = "request headers larger than " + std::to_string(options.maxHeaderBytes) + " bytes";
            break;
        case ConnectionStream::Failure::BodyTimeout:
            status = 408, message = "request body not received within " + std::to_string(options.bodyTimeoutMs) + " ms";
            break;
        case ConnectionStream::Failure::None:
            if (status == 414) message = "request target longer than " + std::to_string(kLibraryLineLimit) + " bytes";
            else if (status == 413) message = "request body exceeds the limit of " + std::to_string(options.maxBodyBytes) + " bytes";
            else if (status == 400 && s->stream->longestHeadLine() > kLibraryLineLimit)
                status = 431, message = "a request header line longer than " + std::to_string(kLibraryLineLimit) + " bytes";
            else if (status == 404) message = "method not supported";
            break;
    }
    setError(res, status, message);
    return httplib::Server::HandlerResponse::Handled;
}

// What the head alone refuses (before any body byte is read): a body that is chunked, of a
// malformed or disagreeing Content-Length (request smuggling), or over the limit.
std::optional<std::pair<int, std::string>> ServerCore::refusal(const httplib::Request& req) const {
    if (req.has_header("Transfer-Encoding")) return std::pair{411, std::string("chunked request bodies are not supported")};
    const size_t n = req.get_header_value_count("Content-Length");
    if (n == 0) return std::nullopt;
    const std::string cl = req.get_header_value("Content-Length");
    for (size_t i = 0; i < n; ++i) {
        const std::string v = req.get_header_value("Content-Length", i);
        if (v != cl || v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
            return std::pair{400, std::string("invalid Content-Length")};
    }
    if (std::stoull(cl) > options.maxBodyBytes)
        return std::pair{413, "request body of " + cl + " bytes exceeds the limit of " + std::to_string(options.maxBodyBytes)};
    return std::nullopt;
}

// The head is in: the connection is busy, the body's clock starts, and the request is normalised
// for the library: no Range (our answers are never partial), a close the library's exact match
// would miss, and no body without a Content-Length (the library would read until the client closes).
void ServerCore::onHead(httplib::Request& req, RequestScope& s) {
    setWaiting(s.conn, false);
    s.stream->beginBody(Clock::now() + std::chrono::milliseconds(options.bodyTimeoutMs));
    for (const auto& [k, v] : req.headers)
        if (k != "REMOTE_ADDR" && k != "REMOTE_PORT" && k != "LOCAL_ADDR" && k != "LOCAL_PORT") s.headers.emplace_back(lower(k), v);
    s.keepAlive = req.version == "HTTP/1.1" && lower(req.get_header_value("Connection")).find("close") == std::string::npos;
    if (!s.keepAlive) {
        s.closeAfter = true;
        req.headers.erase("Connection");
        req.set_header("Connection", "close");
    }
    req.ranges.clear();
    if (!req.has_header("Content-Length") && !req.has_header("Transfer-Encoding")) req.set_header("Content-Length", "0");
}

// Runs the handler on the companion thread and turns what it does into the library's response.
void ServerCore::route(const httplib::Request& req, httplib::Response& res) {
    RequestScope& s = *t_request;
    s.answered = true;
    auto request = std::make_shared<HttpRequest>();
    request->method = req.method;
    request->target = req.target;
    request->path = req.target.substr(0, req.target.find('?'));
    for (const auto& [k, v] : s.headers) request->headers[k] = v;
    request->body = req.body;
    request->peer = s.peer;
    request->keepAlive = s.keepAlive;
    auto x = std::make_shared<Exchange>();
    s.companion->run([this, x, request] {
        BridgeResponder r(*x);
        try {
            handler(*request, r);
        } catch (const std::exception& e) {
            r.send(500, "application/json", errorBody(std::string("the handler failed: ") + e.what()), {});
        }
        std::lock_guard lock(x->mu);
        x->handlerDone = true;
        x->cv.notify_all();
    });
    Transport* transport = s.transport;
    // Waits for `done`, marking the client gone as soon as it leaves.
    auto watch = [x, transport](std::unique_lock<std::mutex>& lock, const std::function<bool()>& done) {
        while (!x->cv.wait_for(lock, kClientWatch, done))
            if (!x->gone && transport->peerClosed()) x->markGone();
    };
    std::unique_lock lock(x->mu);
    watch(lock, [&] { return x->state != Exchange::State::Running || x->handlerDone; });
    for (const auto& [k, v] : x->headers) res.set_header(k, v);
    if (x->state == Exchange::State::Streaming) {
        res.status = x->status;
        const std::string type = x->contentType;
        lock.unlock();
        // Pull side: every queued chunk goes out; the stream ends (with its last chunk) when the
        // handler has returned, or fails when the client leaves.
        res.set_chunked_content_provider(
            type,
            [x, transport](size_t, httplib::DataSink& sink) {
                std::unique_lock l(x->mu);
                for (;;) {
                    if (!x->chunks.empty()) {
                        if (transport->peerClosed()) {  // a send to a closed peer may still succeed once
                            x->markGone();
                            return false;
                        }
                        std::deque<std::string> out;
                        out.swap(x->chunks);
                        x->unsent = 0;
                        x->cv.notify_all();
                        l.unlock();
                        for (const std::string& c : out)
                            if (!sink.write(c.data(), c.size())) {
                                l.lock();
                                x->markGone();
                                return false;
                            }
                        return true;
                    }
                    if (x->handlerDone) {
                        l.unlock();
                        sink.done();
                        return true;
                    }
                    if (x->gone) return false;
                    if (!x->cv.wait_for(l, kClientWatch, [&] { return !x->chunks.empty() || x->handlerDone || x->gone; }) &&
                        transport->peerClosed()) {
                        x->markGone();
                        return false;
                    }
                }
            },
            // When the library is done with the answer (sent, failed, or a HEAD request): the
            // handler is told to stop if it has not, and the worker waits for it to return.
            [x](bool) {
                std::unique_lock l(x->mu);
                if (!x->handlerDone) x->markGone();
                x->cv.wait(l, [&] { return x->handlerDone; });
            });
        return;
    }
    if (x->state == Exchange::State::Sent) {
        res.status = x->status;
        res.set_content(x->body, x->contentType);
    } else {
        setError(res, 500, "the handler sent no response");
    }
    watch(lock, [&] { return x->handlerDone; });
}

void ServerCore::admit(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // stream tokens at once
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    const std::string host = endpoint(fd, true).first;
    std::string refused;
    {
        std::lock_guard lock(m_mu);
        int live = 0, fromHost = 0;
        for (const auto& [id, c] : m_conns) {
            if (c.dropped) continue;
            ++live;
            if (c.host == host) ++fromHost;
        }
        const int maxConns = std::max(1, options.maxConnections);
        if (m_stopping) {
            refused = "the server is shutting down";
        } else if (fd >= FD_SETSIZE) {  // the library's select() cannot watch it (it would answer 500)
            refused = "too many open files";
        } else if (fromHost >= options.maxConnectionsPerPeer && !dropLongestWaiting(&host)) {
            refused = "too many connections from " + host + " (" + std::to_string(options.maxConnectionsPerPeer) + ")";
        } else if (fromHost >= options.maxConnectionsPerPeer) {
            --live;  // one of its own made room
        }
        if (refused.empty() && live >= maxConns && !dropLongestWaiting(nullptr) &&
            live >= maxConns + std::max(0, options.maxQueuedConnections))
            refused = "too many connections (" + std::to_string(maxConns) + " busy, " +
                      std::to_string(std::max(0, options.maxQueuedConnections)) + " queued)";
        // Dropped connections hold their worker for a moment; never more than twice the limit.
        if (refused.empty() && static_cast<int>(m_conns.size()) >= 2 * maxConns + options.maxQueuedConnections)
            refused = "too many connections";
        if (refused.empty()) {
            const uint64_t id = m_nextId++;
            m_conns[id] = Conn{fd, host, true, true, false, Clock::now()};
            m_queue.push_back(id);
            if (m_idleWorkers < static_cast<int>(m_queue.size()) && static_cast<int>(m_workers.size()) < maxConns)
                m_workers.emplace_back([this] { workerLoop(); });
            m_wake.notify_one();
        }
    }
    if (!refused.empty()) refuser.refuse(fd, ownAnswer(503, refused));
}

// Under m_mu: makes room by dropping the served connection (of `host`, when given) that has waited
// longest for a request head; false when every one is busy with a request.
bool ServerCore::dropLongestWaiting(const std::string* host) {
    Conn* oldest = nullptr;
    for (auto& [id, c] : m_conns)
        if (!c.queued && c.waitingHead && !c.dropped && (!host || c.host == *host) && (!oldest || c.since < oldest->since))
            oldest = &c;
    if (!oldest) return false;
    ::shutdown(oldest->fd, SHUT_RDWR);  // its worker sees the close and leaves
    oldest->dropped = true;
    oldest->waitingHead = false;
    return true;
}

// Whether the connection may go on; marks it waiting for a head (droppable) or busy.
bool ServerCore::setWaiting(uint64_t id, bool waiting) {
    std::lock_guard lock(m_mu);
    Conn& c = m_conns.at(id);
    if (c.dropped || (waiting && m_stopping)) return false;
    c.waitingHead = waiting;
    c.since = Clock::now();
    return true;
}

void ServerCore::workerLoop() {
    HandlerThread companion;
    std::unique_lock lock(m_mu);
    for (;;) {
        ++m_idleWorkers;
        m_wake.wait(lock, [&] { return !m_queue.empty() || m_poolStop; });
        --m_idleWorkers;
        if (m_queue.empty()) return;
        const uint64_t id = m_queue.front();
        m_queue.pop_front();
        Conn& c = m_conns.at(id);
        c.queued = false;
        c.since = Clock::now();
        const int fd = c.fd;
        const bool go = !m_stopping && !c.dropped;
        lock.unlock();
        if (go) serve(id, fd, companion);
        ::shutdown(fd, SHUT_WR);
        // Read what the client still sends for a moment, so that it sees our answer, not a reset.
        char sink[4096];
        const auto drainEnd = Clock::now() + 50ms;
        const auto probe = plainTransport(fd);
        while (probe->waitFor(POLLIN, drainEnd) == 1 && ::recv(fd, sink, sizeof sink, 0) > 0) {}
        lock.lock();
        m_conns.erase(id);
        ::close(fd);  // only once out of the table: a drop never hits a reused descriptor
        m_idle.notify_all();
    }
}

// One connection: the TLS handshake, then requests until the client or a limit ends it.
void ServerCore::serve(uint64_t id, int fd, HandlerThread& companion) {
    const auto [peerHost, peerPort] = endpoint(fd, true);
    const auto [localHost, localPort] = endpoint(fd, false);
    const std::string peer = peerHost + ":" + std::to_string(peerPort);
    const auto headTimeout = std::chrono::milliseconds(options.headTimeoutMs);
    const int maxRequests = std::max(1, options.maxRequestsPerConnection);
    auto transport = tls ? tlsTransport(fd, tls) : plainTransport(fd);
    // The head's clock starts with the connection (the handshake included), or on a kept-alive
    // one with the first byte of the next request.
    auto headDeadline = Clock::now() + headTimeout;
    if (!transport->handshake(headDeadline, nullptr)) return;
    ConnectionStream stream(*transport, peerHost, peerPort, localHost, localPort, options.writeTimeoutMs);
    for (int served = 0; served < maxRequests; ++served) {
        if (served > 0) {
            if (!setWaiting(id, true) || !stream.waitForRequest(Clock::now() + std::chrono::milliseconds(options.keepAliveTimeoutMs)))
                break;
            headDeadline = Clock::now() + headTimeout;
        }
        stream.beginHead(headDeadline, options.maxHeaderBytes);
        RequestScope scope{.core = this, .stream = &stream, .transport = transport.get(), .companion = &companion, .conn = id, .peer = peer};
        const bool last = served + 1 >= maxRequests || m_stopping;
        bool clientClosed = false;
        t_request = &scope;
        const bool ok = runRequest(stream, last, clientClosed, [this, &scope](httplib::Request& req) { onHead(req, scope); });
        t_request = nullptr;
        const ConnectionStream::Failure f = stream.failure();
        if (stream.bytesWritten() == 0 &&
            (f == ConnectionStream::Failure::HeadTimeout || f == ConnectionStream::Failure::HeadTooLarge)) {
            // The library gives up on a request line silently; the client is told why.
            const std::string answer =
                f == ConnectionStream::Failure::HeadTimeout
                    ? ownAnswer(408, "request head not received within " + std::to_string(options.headTimeoutMs) + " ms")
                    : ownAnswer(431, "request headers larger than " + std::to_string(options.maxHeaderBytes) + " bytes");
            transport->writeAll(answer.data(), answer.size(), Clock::now() + std::chrono::milliseconds(options.writeTimeoutMs));
        }
        if (!ok || clientClosed || scope.closeAfter || last || f != ConnectionStream::Failure::None) break;
    }
    transport->finish();
}

void ServerCore::stop() {
    {
        std::unique_lock lock(m_mu);
        if (m_stopped) return;
        m_stopped = true;
        m_stopping = true;
        for (auto& [id, c] : m_conns)  // idle kept-alive connections end now; busy ones finish
            if (!c.queued && c.waitingHead && !c.dropped) ::shutdown(c.fd, SHUT_RD);
        m_idle.wait(lock, [&] { return m_conns.empty(); });
    }
    if (http) http->stop();
    if (listenThread.joinable()) listenThread.join();
    {
        std::lock_guard lock(m_mu);
        m_poolStop = true;
    }
    m_wake.notify_all();
    for (auto& t : m_workers) t.join();
    refuser.stop();
}

// Binds `lib`, hooks it up and starts its accept loop.
template <class Lib>
Result<void> listenOn(ServerCore& core, std::unique_ptr<Lib> lib) {
    Lib* raw = lib.get();
    core.runRequest = [raw](httplib::Stream& s, bool close, bool& closed, const std::function<void(httplib::Request&)>& setup) {
        return raw->runRequest(s, close, closed, setup);
    };
    core.http = std::move(lib);
    core.configure();
    const HttpServerOptions& o = core.options;
    const std::string where = o.host + ":" + std::to_string(o.port);
    errno = 0;
    if (o.port == 0) core.port = raw->bind_to_any_port(o.host);
    else core.port = raw->bind_to_port(o.host, o.port) ? o.port : -1;
    if (core.port <= 0) {
        const int err = errno;
        core.http.reset();
        return Error{"cannot listen on " + where + (err ? std::string(": ") + std::strerror(err) : std::string())};
    }
    raw->widenBacklog();
    core.refuser.start(core.tls);
    core.listenThread = std::thread([raw] { raw->listen_after_bind(); });
    // stop() is a no-op until the accept loop runs: wait for it.
    for (int i = 0; i < 5000 && !raw->is_running(); ++i) std::this_thread::sleep_for(1ms);
    return {};
}

}  // namespace

struct HttpServer::Impl {
    ServerCore core;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::stop() {
    if (m_impl) m_impl->core.stop();
}

int HttpServer::port() const { return m_impl->core.port; }

bool HttpServer::tls() const { return m_impl->core.tls != nullptr; }

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, HttpHandler handler) {
    auto impl = std::make_unique<Impl>();
    ServerCore& core = impl->core;
    core.options = options;
    core.handler = std::move(handler);
    const std::string& cert = options.tlsCertFile;
    const std::string& key = options.tlsKeyFile;
    Result<void> listening;
    if (!cert.empty() || !key.empty()) {
        if (cert.empty() || key.empty()) return Error{"https needs both a TLS certificate and its key"};
        std::string why;
        auto lib = std::make_unique<Library<httplib::SSLServer>>(
            &core, [&](SSL_CTX& ctx) { return loadServerCertificate(&ctx, cert, key, &why); });
        if (!lib->is_valid()) return Error{why.empty() ? "cannot set up TLS with " + cert + " and " + key : why};
        core.tls = lib->ssl_context();
        listening = listenOn(core, std::move(lib));
    } else {
        listening = listenOn(core, std::make_unique<Library<httplib::Server>>(&core));
    }
    if (!listening) return listening.error();
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

std::string HttpRequest::header(const std::string& lowerName) const {
    auto it = headers.find(lowerName);
    return it == headers.end() ? std::string() : it->second;
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
        case 414: return "URI Too Long";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 503: return "Service Unavailable";
        default: return status < 400 ? "OK" : "Error";
    }
}

}  // namespace verdict::core::net
