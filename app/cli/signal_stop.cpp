#include "cli/signal_stop.h"

#include <pthread.h>
#include <unistd.h>

namespace verdict::cli {

SignalStop::SignalStop(std::string command)
    : m_message("\nverdict " + command + ": stopping (Ctrl-C again to quit at once)\n") {
    sigemptyset(&m_set);
    sigaddset(&m_set, SIGINT);
    sigaddset(&m_set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &m_set, &m_old);
    m_thread = std::jthread([this](std::stop_token self) {
        while (!self.stop_requested()) {
            timespec wait{0, 200'000'000};
            if (sigtimedwait(&m_set, nullptr, &wait) <= 0) continue;
            if (m_source.stop_requested()) _exit(130);  // second signal: leave now
            m_cancel = true;
            m_source.request_stop();
            (void)!write(STDERR_FILENO, m_message.data(), m_message.size());
        }
    });
}

SignalStop::~SignalStop() {
    m_thread.request_stop();
    m_thread.join();
    pthread_sigmask(SIG_SETMASK, &m_old, nullptr);
}

}  // namespace verdict::cli
