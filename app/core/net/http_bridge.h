// The push-style handler beside the pull-style library (internal to core/net/http_server.cpp).
//
// cpp-httplib writes an answer after its handler returns, and pulls a stream from a content
// provider once the headers are out; Verdict's HttpHandler pushes (send(), or startStream() then
// write()* until it returns). So the handler runs on a HandlerThread, the companion of the
// connection's worker, and the two meet in an Exchange: send() hands the whole answer over,
// startStream() the status and headers, each write() a chunk into a queue (at most
// kMaxUnsentStreamBytes unsent: a write waits beyond that) that the provider drains on the worker.
// The worker also watches the socket and marks the exchange gone when the client leaves, which
// fails the handler's next write() and turns clientGone() true.
#pragma once

#include "core/net/http.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace verdict::core::net {

inline constexpr size_t kMaxUnsentStreamBytes = 256 * 1024;

// The companion of a connection worker: runs one handler at a time, started on first use.
class HandlerThread {
public:
    ~HandlerThread() {
        {
            std::lock_guard lock(m_mu);
            m_quit = true;
        }
        m_cv.notify_all();
        if (m_thread.joinable()) m_thread.join();
    }
    void run(std::function<void()> job) {
        std::lock_guard lock(m_mu);
        if (!m_thread.joinable()) m_thread = std::thread([this] { loop(); });
        m_job = std::move(job);
        m_cv.notify_all();
    }

private:
    void loop() {
        std::unique_lock lock(m_mu);
        for (;;) {
            m_cv.wait(lock, [&] { return m_job || m_quit; });
            if (!m_job) return;
            std::function<void()> job = std::move(m_job);
            m_job = nullptr;
            lock.unlock();
            job();
            lock.lock();
        }
    }
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::function<void()> m_job;
    bool m_quit = false;
    std::thread m_thread;
};

// One request, shared by the worker (inside the library) and the handler's companion thread.
struct Exchange {
    enum class State { Running, Sent, Streaming };
    std::mutex mu;
    std::condition_variable cv;
    State state = State::Running;
    bool handlerDone = false;
    std::atomic<bool> gone{false};  // the client left (or the answer was abandoned): set under mu
    int status = 0;
    std::string contentType, body;
    std::map<std::string, std::string> headers;
    std::deque<std::string> chunks;
    size_t unsent = 0;  // bytes in chunks

    void markGone() {  // under mu
        gone = true;
        cv.notify_all();
    }
};

class BridgeResponder final : public HttpResponder {
public:
    explicit BridgeResponder(Exchange& x) : m_x(x) {}
    void send(int status, std::string_view contentType, std::string_view body,
              const std::map<std::string, std::string>& headers) override {
        std::lock_guard lock(m_x.mu);
        if (m_x.state != Exchange::State::Running) return;
        fill(status, contentType, headers);
        m_x.body = std::string(body);
        m_x.state = Exchange::State::Sent;
        m_x.cv.notify_all();
    }
    bool startStream(int status, std::string_view contentType, const std::map<std::string, std::string>& headers) override {
        std::lock_guard lock(m_x.mu);
        if (m_x.state != Exchange::State::Running) return false;
        fill(status, contentType, headers);
        m_x.state = Exchange::State::Streaming;
        m_x.cv.notify_all();
        return !m_x.gone;
    }
    bool write(std::string_view data) override {
        std::unique_lock lock(m_x.mu);
        if (m_x.state != Exchange::State::Streaming) return false;
        m_x.cv.wait(lock, [&] { return m_x.gone || m_x.unsent < kMaxUnsentStreamBytes; });
        if (m_x.gone) return false;
        if (data.empty()) return true;  // an empty chunk would end the stream
        m_x.chunks.emplace_back(data);
        m_x.unsent += data.size();
        m_x.cv.notify_all();
        return true;
    }
    bool sent() const override {
        std::lock_guard lock(m_x.mu);
        return m_x.state != Exchange::State::Running;
    }
    bool clientGone() const override { return m_x.gone; }

private:
    void fill(int status, std::string_view contentType, const std::map<std::string, std::string>& headers) {
        m_x.status = status;
        m_x.contentType = std::string(contentType);
        m_x.headers = headers;
    }
    Exchange& m_x;
};

}  // namespace verdict::core::net
