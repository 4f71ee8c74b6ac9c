// Turns SIGINT/SIGTERM into a stop request for long commands (run, sweep). The signals are
// blocked in every thread (so a SignalStop must be constructed before any other thread starts)
// and collected by one watcher thread with sigtimedwait, so no code runs in a signal handler.
// A second signal exits at once (status 130).
#pragma once

#include <atomic>
#include <csignal>
#include <string>
#include <stop_token>
#include <thread>

namespace verdict::cli {

class SignalStop {
public:
    explicit SignalStop(std::string command);
    ~SignalStop();
    SignalStop(const SignalStop&) = delete;
    SignalStop& operator=(const SignalStop&) = delete;

    std::stop_token token() const { return m_source.get_token(); }
    const std::atomic<bool>* cancelFlag() const { return &m_cancel; }

private:
    sigset_t m_set{}, m_old{};
    std::string m_message;
    std::stop_source m_source;
    std::atomic<bool> m_cancel{false};
    std::jthread m_thread;
};

}  // namespace verdict::cli
