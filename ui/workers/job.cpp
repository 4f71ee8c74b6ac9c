#include "workers/job.h"

#include <QMetaObject>
#include <QPointer>

namespace verdict::ui {

void JobControl::report(double fraction, const QString& text, double etaSeconds) {
    Job* job = m_job;
    post([job, fraction, text, etaSeconds] { emit job->progress(fraction, text, etaSeconds); });
}

void JobControl::post(std::function<void()> onUiThread) {
    // The job outlives its thread (the destructor joins it), so the pointer is valid when the
    // queued call runs unless the job was destroyed in between; `alive` covers that window.
    std::shared_ptr<std::atomic<bool>> alive = m_job->m_alive;
    QMetaObject::invokeMethod(
        m_job, [alive, fn = std::move(onUiThread)] {
            if (alive->load()) fn();
        },
        Qt::QueuedConnection);
}

Job::Job(QObject* parent) : QObject(parent), m_alive(std::make_shared<std::atomic<bool>>(true)) {
    qRegisterMetaType<verdict::ui::JobResult>();
    qRegisterMetaType<verdict::ui::Job::State>();
}

Job::~Job() {
    m_alive->store(false);  // no signal reaches anyone from here on
    m_cancelFlag = true;
    if (m_thread.joinable()) {
        m_thread.request_stop();
        m_thread.join();
    }
}

bool Job::start(Task task) {
    if (busy()) return false;
    if (m_thread.joinable()) m_thread.join();  // the previous task's thread has already returned
    m_cancelFlag = false;
    setState(State::Running);
    std::shared_ptr<std::atomic<bool>> alive = m_alive;
    m_thread = std::jthread([this, alive, task = std::move(task)](std::stop_token stop) {
        JobControl control(this, stop, m_cancelFlag);
        JobResult result;
        try {
            result = task(control);
        } catch (const std::exception& e) {  // a bug, not an input error: still never a crash
            result.error = tr("The task stopped with an internal error.");
            result.detail = QString::fromStdString(e.what());
        }
        const bool cancelled = stop.stop_requested();
        QMetaObject::invokeMethod(
            this, [this, alive, result, cancelled] {
                if (!alive->load()) return;
                setState(State::Idle);
                emit finished(result, cancelled);
            },
            Qt::QueuedConnection);
    });
    return true;
}

void Job::cancel() {
    if (m_state == State::Running) setState(State::Cancelling);
    m_cancelFlag = true;
    if (m_thread.joinable()) m_thread.request_stop();
}

void Job::wait() {
    if (m_thread.joinable()) m_thread.join();
}

void Job::setState(State s) {
    if (m_state == s) return;
    m_state = s;
    emit stateChanged(s);
}

}  // namespace verdict::ui
