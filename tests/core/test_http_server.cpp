// The HTTP server's defences and connection handling (issue 24, findings 5, 6 and 8): the head
// parser's answers, keep-alive and pipelined requests answered in order, a deadline for a head
// that trickles in, slowloris connections dropped when the server is full, the per-address limit,
// and a handler told that its client went away. Each test makes its own traffic on loopback.
#include "core/net/http.h"

#include <QtTest/QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace verdict::core::net;

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
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

int count(const std::string& hay, const std::string& needle) {
    int n = 0;
    for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
    return n;
}

// Answers "you asked for PATH"; /block waits until `release` is set.
struct Fixture {
    std::atomic<bool> release{false};
    std::atomic<bool> sawGone{false};
    std::atomic<int> blocked{0};  // handlers waiting in /block
    std::unique_ptr<HttpServer> server;
    bool start(HttpServerOptions o) {
        o.port = 0;
        auto s = HttpServer::start(o, [this](const HttpRequest& req, HttpResponder& r) {
            if (req.path == "/block") {
                ++blocked;
                while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            if (req.path == "/watch") {  // waits for the client to leave
                for (int i = 0; i < 500 && !r.clientGone(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
                sawGone = r.clientGone();
            }
            r.send(200, "text/plain", "you asked for " + req.path);
        });
        if (!s) return false;
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
    void parsesHeadsAndRefusesBadOnes() {
        HttpRequest r;
        size_t len = 0;
        std::string why;
        QCOMPARE(parseHttpRequestHead("\r\nPOST /v1/x?a=1 HTTP/1.1\r\nContent-Length: 12\r\nHost: h", 100, r, len, why), 200);
        QCOMPARE(r.method, std::string("POST"));
        QCOMPARE(r.path, std::string("/v1/x"));
        QCOMPARE(len, size_t{12});
        QVERIFY(r.keepAlive);
        QCOMPARE(parseHttpRequestHead("GET / HTTP/1.1\r\nConnection: Close", 100, r, len, why), 200);
        QVERIFY(!r.keepAlive);
        QCOMPARE(parseHttpRequestHead("GET / HTTP/1.0", 100, r, len, why), 200);
        QVERIFY(!r.keepAlive);
        for (const char* cl : {"-1", "1e3", " ", "99999999999999999999999", "+5", "0x10"}) {
            const std::string head = std::string("POST / HTTP/1.1\r\nContent-Length: ") + cl;
            QCOMPARE(parseHttpRequestHead(head, 100, r, len, why), 400);
        }
        QCOMPARE(parseHttpRequestHead("POST / HTTP/1.1\r\nContent-Length: 101", 100, r, len, why), 413);
        QCOMPARE(parseHttpRequestHead("POST / HTTP/1.1\r\nTransfer-Encoding: chunked", 100, r, len, why), 411);
        QCOMPARE(parseHttpRequestHead("GET / HTTP/2", 100, r, len, why), 400);
        QCOMPARE(parseHttpRequestHead("GET /", 100, r, len, why), 400);
        QCOMPARE(parseHttpRequestHead(" / HTTP/1.1", 100, r, len, why), 400);
        QCOMPARE(parseHttpRequestHead("GET / HTTP/1.1\r\nno colon here", 100, r, len, why), 400);
        QCOMPARE(parseHttpRequestHead("GET / HTTP/1.1\r\n: empty name", 100, r, len, why), 400);
        QCOMPARE(parseHttpRequestHead("", 100, r, len, why), 400);
    }

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
        const size_t a = got.find("you asked for /one"), b = got.find("you asked for /two"), c = got.find("you asked for /three");
        QVERIFY2(a != std::string::npos && b != std::string::npos && c != std::string::npos && a < b && b < c, got.c_str());
        QCOMPARE(count(got, "Connection: keep-alive"), 2);
        QCOMPARE(count(got, "Connection: close"), 1);
    }

    void keptAliveConnectionServesTheNextRequest() {
        Fixture f;
        QVERIFY(f.start({}));
        const int fd = connectTo(f.server->port());
        sendText(fd, "GET /a HTTP/1.1\r\n\r\n");
        std::string first;
        char buf[4096];
        while (first.find("you asked for /a") == std::string::npos) {
            const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
            QVERIFY(n > 0);
            first.append(buf, static_cast<size_t>(n));
        }
        sendText(fd, "GET /b HTTP/1.1\r\nConnection: close\r\n\r\n");
        const std::string second = readAll(fd);
        ::close(fd);
        QVERIFY2(second.find("you asked for /b") != std::string::npos, second.c_str());
    }

    void aTricklingHeadIsCutOffAtItsDeadline() {
        Fixture f;
        HttpServerOptions o;
        o.headTimeoutMs = 400;
        QVERIFY(f.start(o));
        const int fd = connectTo(f.server->port());
        // one byte every 50 ms: never idle for long, but the head is never complete in time
        const std::string head = "GET /slow HTTP/1.1\r\nX-Padding: " + std::string(200, 'a');
        std::string got;
        for (char c : head) {
            sendText(fd, std::string(1, c));
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 50) > 0) break;  // the server answered
        }
        got = readAll(fd, 5000);
        ::close(fd);
        QVERIFY2(got.rfind("HTTP/1.1 408", 0) == 0, got.c_str());
        QVERIFY(got.find("within 400 ms") != std::string::npos);
    }

    void slowlorisConnectionsGiveWayToARealRequest() {
        Fixture f;
        HttpServerOptions o;
        o.maxConnections = 6;
        o.headTimeoutMs = 60000;  // the deadline alone would not save the server here
        QVERIFY(f.start(o));
        std::vector<int> slow;
        for (int i = 0; i < 12; ++i) {  // twice as many as the server holds, all mid-head
            const int fd = connectTo(f.server->port());
            QVERIFY(fd >= 0);
            sendText(fd, "GET / HTTP/1.1\r\nX-A: ");
            slow.push_back(fd);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        for (int i = 0; i < 5; ++i) {
            auto r = httpRequest("GET", "http://127.0.0.1:" + std::to_string(f.server->port()) + "/real", {}, "");
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
        auto r = httpRequest("GET", "http://127.0.0.1:" + std::to_string(f.server->port()) + "/x", {}, "");
        QVERIFY(r.ok());
        QCOMPARE(r->status, 503);
        QVERIFY2(r->body.find("too many connections from 127.0.0.1") != std::string::npos, r->body.c_str());
        f.release = true;
        for (int fd : busy) {
            QVERIFY(readAll(fd, 3000).find("you asked for /block") != std::string::npos);
            ::close(fd);
        }
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
};

QTEST_GUILESS_MAIN(TestHttpServer)
#include "test_http_server.moc"
