// The HTTP server on cpp-httplib (core/net/http.h) and the defences kept around the library:
// keep-alive (reuse, pipelining, the idle timeout), the body limit (413, 411, a malformed
// Content-Length), the header limits (431), a deadline for a head that trickles in (408),
// slowloris connections dropped when the server is full, the per-address limit and 503 when every
// worker is busy and the queue is full, a handler told that its client went away (also while it
// streams), streaming (chunked, the connection kept after it), TLS with a self-signed certificate
// made in the test, and the start errors (a port in use, a bad certificate or key file). Each test
// makes its own traffic on loopback: raw sockets where the bytes matter, else our libcurl client.
#include "core/net/http.h"
#include "test_certificate.h"

#include <QtTest/QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

using namespace verdict::core::net;
using Clock = std::chrono::steady_clock;

namespace {

int connectTo(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void sendText(int fd, const std::string& s) { (void)!::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }

// Everything the server sends until it closes the connection (or `ms` pass).
std::string readAll(int fd, int ms = 10000) {
    std::string out;
    char buf[4096];
    const auto end = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

// Reads until `needle` has arrived (or `ms` pass).
std::string readUntil(int fd, const std::string& needle, int ms = 10000) {
    std::string out;
    char buf[4096];
    const auto end = Clock::now() + std::chrono::milliseconds(ms);
    while (out.find(needle) == std::string::npos && Clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

// Whether the server has closed the connection (EOF) within `ms`.
bool closedWithin(int fd, int ms) {
    char buf[4096];
    const auto end = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) return true;
    }
    return false;
}

int count(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

std::string url(const HttpServer& s, const std::string& path) {
    return std::string(s.tls() ? "https" : "http") + "://127.0.0.1:" + std::to_string(s.port()) + path;
}

// Answers "you asked for PATH"; /block waits until `release` is set; /watch waits for its client
// to leave; /stream writes "tick N\n" every 10 ms until the client leaves (or 500 ticks), /stream3
// three ticks; /peer answers the client's address.
struct Fixture {
    std::atomic<bool> release{false};
    std::atomic<bool> sawGone{false};
    std::atomic<int> blocked{0};  // handlers waiting in /block
    std::atomic<int> ticks{0};
    std::atomic<long long> goneAtUs{0};  // when /stream's write failed (steady clock, microseconds)
    std::unique_ptr<HttpServer> server;
    std::string startError;
    bool start(HttpServerOptions o) {
        o.port = 0;
        auto s = HttpServer::start(o, [this](const HttpRequest& req, HttpResponder& r) {
            if (req.path == "/block") {
                ++blocked;
                while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            if (req.path == "/watch") {
                for (int i = 0; i < 500 && !r.clientGone(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                sawGone = r.clientGone();
            }
            if (req.path == "/stream" || req.path == "/stream3") {
                r.startStream(200, "text/event-stream", {{"Cache-Control", "no-cache"}});
                const int n = req.path == "/stream3" ? 3 : 500;
                for (int i = 0; i < n; ++i) {
                    if (!r.write("tick " + std::to_string(i) + "\n")) {
                        goneAtUs = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
                        sawGone = r.clientGone();
                        return;
                    }
                    ++ticks;
                    if (n > 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                }
                return;
            }
            if (req.path == "/peer") return r.send(200, "text/plain", req.peer);
            r.send(200, "text/plain", "you asked for " + req.path + (req.body.empty() ? "" : " with " + req.body));
        });
        if (!s) {
            startError = s.error().message;
            return false;
        }
        server = std::move(*s);
        return true;
    }
    ~Fixture() {
        release = true;
        if (server) server->stop();
    }
};

}  // namespace

class TestHttpServer : public QObject {
    Q_OBJECT
private slots:
    void pipelinedRequestsAreAnsweredInOrder() {
        Fixture f;
        QVERIFY(f.start({}));
        const int fd = connectTo(f.server->port());
        QVERIFY(fd >= 0);
        // three requests in one write, the last closing the connection
        sendText(fd, "GET /one HTTP/1.1\r\nHost: x\r\n\r\n"
                     "POST /two HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
                     "GET /three HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string got = readAll(fd);
        ::close(fd);
        QCOMPARE(count(got, "HTTP/1.1 200 OK"), 3);
        const size_t a = got.find("you asked for /one"), b = got.find("you asked for /two with hello"),
                     c = got.find("you asked for /three");
        QVERIFY2(a != std::string::npos && b != std::string::npos && c != std::string::npos && a < b && b < c, got.c_str());
        QCOMPARE(count(got, "Keep-Alive: timeout=5, max=1000"), 2);
        QCOMPARE(count(got, "Connection: close"), 1);
    }

    void keptAliveConnectionServesTheNextRequest() {
        Fixture f;
        QVERIFY(f.start({}));
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /a HTTP/1.1\r\n\r\n");
        QVERIFY(readUntil(fd, "you asked for /a").find("you asked for /a") != std::string::npos);
        sendText(fd, "GET /b HTTP/1.1\r\nConnection: Close\r\n\r\n");  // any spelling of close
        const std::string second = readAll(fd);
        ::close(fd);
        QVERIFY2(second.find("you asked for /b") != std::string::npos, second.c_str());
        QVERIFY2(second.find("Connection: close") != std::string::npos && second.find("Keep-Alive") == std::string::npos,
                 second.c_str());
        // HTTP/1.0: answered, then closed
        const int old = connectTo(f.server->port());
        sendText(old, "GET /c HTTP/1.0\r\n\r\n");
        const std::string third = readAll(old, 3000);
        ::close(old);
        QVERIFY2(third.find("you asked for /c") != std::string::npos && third.find("Connection: close") != std::string::npos,
                 third.c_str());
    }

    void ourClientReusesOneConnection() {
        Fixture f;
        QVERIFY(f.start({}));
        std::set<std::string> peers;
        for (int i = 0; i < 5; ++i) {
            auto r = httpRequest("GET", url(*f.server, "/peer"), {}, "");
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
            QCOMPARE(r->status, 200);
            peers.insert(r->body);
        }
        QCOMPARE(peers.size(), size_t(1));  // one client port: one connection served all five
    }

    void anIdleKeptAliveConnectionIsClosed() {
        Fixture f;
        HttpServerOptions o;
        o.keepAliveTimeoutMs = 300;
        QVERIFY(f.start(o));
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /a HTTP/1.1\r\n\r\n");
        QVERIFY(readUntil(fd, "you asked for /a").find("you asked for /a") != std::string::npos);
        const auto t0 = Clock::now();
        QVERIFY(closedWithin(fd, 3000));
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
        ::close(fd);
        QVERIFY2(ms >= 250, std::to_string(ms).c_str());
        // and one that sends at most maxRequestsPerConnection requests
        Fixture g;
        HttpServerOptions two;
        two.maxRequestsPerConnection = 2;
        QVERIFY(g.start(two));
        const int c = connectTo(g.server->port());
        sendText(c, "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\nGET /3 HTTP/1.1\r\n\r\n");
        const std::string got = readAll(c, 3000);
        ::close(c);
        QCOMPARE(count(got, "HTTP/1.1 200"), 2);
        QVERIFY2(got.find("you asked for /3") == std::string::npos && count(got, "Connection: close") == 1, got.c_str());
    }

    void bodiesOverTheLimitAndMalformedLengthsAreRefused() {
        Fixture f;
        HttpServerOptions o;
        o.maxBodyBytes = 100;
        QVERIFY(f.start(o));
        struct Case {
            const char* head;
            const char* status;
            const char* says;
        };
        for (const Case& c : {Case{"POST /x HTTP/1.1\r\nContent-Length: 101\r\n\r\n", "HTTP/1.1 413", "exceeds the limit of 100"},
                              Case{"POST /x HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", "HTTP/1.1 400", "Content-Length"},
                              Case{"POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "HTTP/1.1 400", "Content-Length"},
                              Case{"POST /x HTTP/1.1\r\nContent-Length: 1e3\r\n\r\n", "HTTP/1.1 400", "Content-Length"},
                              Case{"POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n", "HTTP/1.1 400", "Content-Length"},
                              Case{"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 411", "chunked"},
                              Case{"GET / HTTP/2\r\n\r\n", "HTTP/1.1 400", "malformed"},
                              Case{"GET /\r\n\r\n", "HTTP/1.1 400", "malformed"}}) {
            const int fd = connectTo(f.server->port());
            sendText(fd, c.head);
            const std::string got = readAll(fd, 3000);  // answered at once, then closed: the body is never read
            ::close(fd);
            QVERIFY2(got.rfind(c.status, 0) == 0 && got.find(c.says) != std::string::npos, (std::string(c.head) + " -> " + got).c_str());
            QVERIFY2(got.find("Connection: close") != std::string::npos, got.c_str());
        }
        // our client's 413; a POST without a length has an empty body
        auto big = httpRequest("POST", url(*f.server, "/x"), {}, std::string(101, 'a'));
        QVERIFY(big.ok());
        QCOMPARE(big->status, 413);
        QVERIFY(big->body.find("\"error\"") != std::string::npos);
        const int fd = connectTo(f.server->port());
        sendText(fd, "POST /empty HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string got = readAll(fd, 3000);
        ::close(fd);
        QVERIFY2(got.find("you asked for /empty") != std::string::npos && got.find(" with ") == std::string::npos, got.c_str());
    }

    void headersOverTheLimitsAre431() {
        Fixture f;
        HttpServerOptions o;
        o.maxHeaderBytes = 4096;
        QVERIFY(f.start(o));
        // many short lines past the head's budget
        std::string head = "GET /h HTTP/1.1\r\n";
        for (int i = 0; i < 200; ++i) head += "X-" + std::to_string(i) + ": " + std::string(40, 'v') + "\r\n";
        const int a = connectTo(f.server->port());
        sendText(a, head + "\r\n");
        const std::string gotA = readAll(a, 3000);
        ::close(a);
        QVERIFY2(gotA.rfind("HTTP/1.1 431", 0) == 0 && gotA.find("larger than 4096 bytes") != std::string::npos, gotA.c_str());
        // one line longer than the library's 8 KiB, under a bigger budget
        Fixture g;
        QVERIFY(g.start({}));
        const int b = connectTo(g.server->port());
        sendText(b, "GET /h HTTP/1.1\r\nX-Long: " + std::string(9000, 'v') + "\r\n\r\n");
        const std::string gotB = readAll(b, 3000);
        ::close(b);
        QVERIFY2(gotB.rfind("HTTP/1.1 431", 0) == 0 && gotB.find("longer than 8192") != std::string::npos, gotB.c_str());
        // a request line that long: 414
        const int c = connectTo(g.server->port());
        sendText(c, "GET /" + std::string(9000, 'p') + " HTTP/1.1\r\n\r\n");
        const std::string gotC = readAll(c, 3000);
        ::close(c);
        QVERIFY2(gotC.rfind("HTTP/1.1 414", 0) == 0, gotC.c_str());
    }

    void aTricklingHeadIsCutOffAtItsDeadline() {
        Fixture f;
        HttpServerOptions o;
        o.headTimeoutMs = 400;
        QVERIFY(f.start(o));
        for (const std::string& head : {"GET /slow HTTP/1.1\r\nX-Padding: " + std::string(200, 'a'),  // in the headers
                                       "GET /" + std::string(200, 's')}) {                             // in the request line
            const int fd = connectTo(f.server->port());
            // one byte every 50 ms: never idle for long, but the head is never complete in time
            const auto t0 = Clock::now();
            for (char c : head) {
                sendText(fd, std::string(1, c));
                pollfd p{fd, POLLIN, 0};
                if (::poll(&p, 1, 50) > 0) break;  // the server answered
            }
            const std::string got = readAll(fd, 5000);
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
            ::close(fd);
            QVERIFY2(got.rfind("HTTP/1.1 408", 0) == 0, got.c_str());
            QVERIFY(got.find("within 400 ms") != std::string::npos);
            QVERIFY2(ms < 3000, std::to_string(ms).c_str());
        }
        // a body that trickles: its own deadline
        HttpServerOptions b;
        b.bodyTimeoutMs = 300;
        Fixture g;
        QVERIFY(g.start(b));
        const int fd = connectTo(g.server->port());
        sendText(fd, "POST /x HTTP/1.1\r\nContent-Length: 50\r\n\r\nabc");
        const std::string got = readAll(fd, 5000);
        ::close(fd);
        QVERIFY2(got.rfind("HTTP/1.1 408", 0) == 0 && got.find("body not received within 300 ms") != std::string::npos, got.c_str());
    }

    void slowlorisConnectionsGiveWayToARealRequest() {
        Fixture f;
        HttpServerOptions o;
        o.maxConnections = 6;
        o.headTimeoutMs = 60000;  // the deadline alone would not save the server here
        QVERIFY(f.start(o));
        std::vector<int> slow;
        for (int i = 0; i < 12; ++i) {  // twice as many as the server serves, all mid-head
            const int fd = connectTo(f.server->port());
            QVERIFY(fd >= 0);
            sendText(fd, "GET / HTTP/1.1\r\nX-A: ");
            slow.push_back(fd);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (int i = 0; i < 5; ++i) {
            auto r = httpRequest("GET", url(*f.server, "/real"), {}, "");
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
            QCOMPARE(r->status, 200);
            QCOMPARE(r->body, std::string("you asked for /real"));
        }
        // the oldest slow connections were closed to make room
        int closed = 0;
        for (int fd : slow) {
            char c;
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 0) > 0 && ::recv(fd, &c, 1, MSG_DONTWAIT) == 0) ++closed;
            ::close(fd);
        }
        QVERIFY2(closed >= 6, std::to_string(closed).c_str());
    }

    void busyConnectionsOfOneAddressAreLimited() {
        Fixture f;
        HttpServerOptions o;
        o.maxConnectionsPerPeer = 2;
        QVERIFY(f.start(o));
        std::vector<int> busy;
        for (int i = 0; i < 2; ++i) {  // two requests the handler holds
            const int fd = connectTo(f.server->port());
            sendText(fd, "GET /block HTTP/1.1\r\nConnection: close\r\n\r\n");
            busy.push_back(fd);
        }
        // Both heads read and their handlers running (a loaded machine may take a while to get there).
        for (int i = 0; i < 3000 && f.blocked < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QCOMPARE(f.blocked.load(), 2);
        auto r = httpRequest("GET", url(*f.server, "/x"), {}, "");
        QVERIFY(r.ok());
        QCOMPARE(r->status, 503);
        QVERIFY2(r->body.find("too many connections from 127.0.0.1") != std::string::npos, r->body.c_str());
        f.release = true;
        for (int fd : busy) {
            QVERIFY(readAll(fd, 3000).find("you asked for /block") != std::string::npos);
            ::close(fd);
        }
    }

    void aFullServerQueuesThenAnswers503() {
        Fixture f;
        HttpServerOptions o;
        o.maxConnections = 2;
        o.maxQueuedConnections = 1;
        QVERIFY(f.start(o));
        std::vector<int> busy;
        for (int i = 0; i < 2; ++i) {
            const int fd = connectTo(f.server->port());
            sendText(fd, "GET /block HTTP/1.1\r\nConnection: close\r\n\r\n");
            busy.push_back(fd);
        }
        for (int i = 0; i < 3000 && f.blocked < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QCOMPARE(f.blocked.load(), 2);
        const int queued = connectTo(f.server->port());  // waits for a worker
        sendText(queued, "GET /queued HTTP/1.1\r\nConnection: close\r\n\r\n");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto r = httpRequest("GET", url(*f.server, "/x"), {}, "");  // every worker busy, the queue full
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->status, 503);
        QVERIFY2(r->body.find("too many connections (2 busy, 1 queued)") != std::string::npos, r->body.c_str());
        f.release = true;
        QVERIFY(readAll(queued, 5000).find("you asked for /queued") != std::string::npos);
        ::close(queued);
        for (int fd : busy) ::close(fd);
    }

    void aHandlerLearnsThatItsClientLeft() {
        Fixture f;
        QVERIFY(f.start({}));
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /watch HTTP/1.1\r\n\r\n");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::close(fd);
        for (int i = 0; i < 300 && !f.sawGone; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QVERIFY(f.sawGone);
    }

    void aStreamingHandlerLearnsThatItsClientLeft() {
        Fixture f;
        QVERIFY(f.start({}));
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /stream HTTP/1.1\r\n\r\n");
        const std::string got = readUntil(fd, "tick 3\n");
        QVERIFY2(got.find("Transfer-Encoding: chunked") != std::string::npos && got.find("tick 3\n") != std::string::npos, got.c_str());
        const long long closedAtUs = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
        ::close(fd);
        for (int i = 0; i < 300 && !f.goneAtUs; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QVERIFY(f.goneAtUs > 0);
        QVERIFY(f.sawGone);
        const double noticedMs = static_cast<double>(f.goneAtUs - closedAtUs) / 1000.0;
        qInfo("a streaming handler's write failed %.1f ms after its client closed", noticedMs);
        QVERIFY2(noticedMs < 500, std::to_string(noticedMs).c_str());  // 0.1 s by design; slack for a loaded machine
        QVERIFY(f.ticks < 500);
    }

    void aStreamIsChunkedAndKeepsTheConnection() {
        Fixture f;
        QVERIFY(f.start({}));
        std::string body;
        int pieces = 0;
        auto r = httpRequest("GET", url(*f.server, "/stream3"), {}, "", {}, [&](std::string_view d) {
            body += d;
            ++pieces;
            return true;
        });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->status, 200);
        QCOMPARE(r->headers["content-type"], std::string("text/event-stream"));
        QCOMPARE(r->headers["cache-control"], std::string("no-cache"));
        QCOMPARE(body, std::string("tick 0\ntick 1\ntick 2\n"));
        // raw: chunks, the last chunk, and the next request on the same connection
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /stream3 HTTP/1.1\r\n\r\nGET /after HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string got = readAll(fd);
        ::close(fd);
        QVERIFY2(got.find("7\r\ntick 2\n\r\n0\r\n\r\nHTTP/1.1 200 OK") != std::string::npos, got.c_str());
        QVERIFY(got.find("you asked for /after") != std::string::npos);
    }

    void tlsWithASelfSignedCertificate() {
        verdict::test::TestCertificate cert;
        QVERIFY2(cert.ok(), cert.error().c_str());
        Fixture f;
        HttpServerOptions o;
        o.tlsCertFile = cert.certFile();
        o.tlsKeyFile = cert.keyFile();
        o.maxBodyBytes = 1000;
        QVERIFY2(f.start(o), f.startError.c_str());
        QVERIFY(f.server->tls());
        HttpClientOptions co;
        co.tls.caFile = cert.certFile();
        std::set<std::string> peers;
        for (int i = 0; i < 3; ++i) {
            auto r = httpRequest("GET", url(*f.server, "/peer"), {}, "", co);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
            QCOMPARE(r->status, 200);
            peers.insert(r->body);
        }
        QCOMPARE(peers.size(), size_t(1));  // kept alive over TLS
        std::string body;
        auto s = httpRequest("POST", url(*f.server, "/stream3"), {}, "{}", co, [&](std::string_view d) {
            body += d;
            return true;
        });
        QVERIFY(s.ok());
        QCOMPARE(body, std::string("tick 0\ntick 1\ntick 2\n"));
        auto big = httpRequest("POST", url(*f.server, "/x"), {}, std::string(100 * 1000, 'a'), co);
        QVERIFY2(big.ok(), big.ok() ? "" : big.error().message.c_str());
        QCOMPARE(big->status, 413);
        // without the CA file the client refuses the server; plain http on the TLS port gets nowhere
        QVERIFY(!httpRequest("GET", url(*f.server, "/peer"), {}, "").ok());
        HttpClientOptions quick;
        quick.readTimeoutMs = 3000;
        auto plain = httpRequest("GET", "http://127.0.0.1:" + std::to_string(f.server->port()) + "/peer", {}, "", quick);
        QVERIFY(!plain.ok() || plain->status != 200);
        // a client that leaves mid-stream over TLS is noticed too
        const long long before = f.goneAtUs;
        auto cut = httpRequest("GET", url(*f.server, "/stream"), {}, "", co, [&](std::string_view d) {
            return d.find("tick 2") == std::string_view::npos;
        });
        QVERIFY(!cut.ok() || cut->status == 200);
        for (int i = 0; i < 300 && f.goneAtUs == before; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        QVERIFY(f.goneAtUs != before);
    }

    void startErrorsNameWhatFailed() {
        verdict::test::TestCertificate cert, other;
        QVERIFY(cert.ok() && other.ok());
        struct Case {
            std::string certFile, keyFile, says;
        };
        QTemporaryDir dir;
        const std::string notPem = dir.filePath("not.pem").toStdString();
        std::ofstream(notPem) << "hello\n";
        for (const Case& c : {Case{"/nonexistent/cert.pem", cert.keyFile(), "cannot read the TLS certificate /nonexistent/cert.pem"},
                              Case{cert.certFile(), "/nonexistent/key.pem", "cannot read the TLS key /nonexistent/key.pem"},
                              Case{notPem, cert.keyFile(), "the TLS certificate " + notPem + " is not a PEM certificate"},
                              Case{cert.certFile(), notPem, "the TLS key " + notPem + " is not a PEM private key"},
                              Case{cert.certFile(), other.keyFile(), "does not belong to the certificate " + cert.certFile()},
                              Case{cert.certFile(), "", "both a TLS certificate and its key"}}) {
            HttpServerOptions o;
            o.port = 0;
            o.tlsCertFile = c.certFile;
            o.tlsKeyFile = c.keyFile;
            auto s = HttpServer::start(o, [](const HttpRequest&, HttpResponder& r) { r.send(200, "text/plain", "x"); });
            QVERIFY(!s.ok());
            QVERIFY2(s.error().message.find(c.says) != std::string::npos, s.error().message.c_str());
        }
        // a port in use is an error (the library's default SO_REUSEPORT would have shared it)
        Fixture f;
        QVERIFY(f.start({}));
        HttpServerOptions same;
        same.port = f.server->port();
        auto second = HttpServer::start(same, [](const HttpRequest&, HttpResponder& r) { r.send(200, "text/plain", "x"); });
        QVERIFY(!second.ok());
        QVERIFY2(second.error().message.find("cannot listen on 127.0.0.1:" + std::to_string(same.port)) != std::string::npos,
                 second.error().message.c_str());
    }

    void stopEndsIdleConnectionsAndLetsBusyOnesFinish() {
        Fixture f;
        QVERIFY(f.start({}));
        const int idle = connectTo(f.server->port());
        sendText(idle, "GET /a HTTP/1.1\r\n\r\n");
        QVERIFY(readUntil(idle, "you asked for /a").find("you asked for /a") != std::string::npos);
        const int busy = connectTo(f.server->port());
        sendText(busy, "GET /block HTTP/1.1\r\n\r\n");
        for (int i = 0; i < 3000 && f.blocked < 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::thread releaser([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            f.release = true;
        });
        const auto t0 = Clock::now();
        f.server->stop();
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
        releaser.join();
        QVERIFY(closedWithin(idle, 100));
        const std::string got = readAll(busy, 2000);
        QVERIFY2(got.find("you asked for /block") != std::string::npos, got.c_str());  // finished, not cut
        QVERIFY2(ms < 5000, std::to_string(ms).c_str());
        ::close(idle);
        ::close(busy);
    }
};

QTEST_GUILESS_MAIN(TestHttpServer)
#include "test_http_server.moc"
