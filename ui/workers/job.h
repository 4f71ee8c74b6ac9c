// One piece of long work (a model load and generation, a suite run, a sweep, an import) on its
// own thread, so the window never waits for it. The task gets a JobControl to report progress
// and to check for cancellation; everything it reports reaches the job's signals through queued
// connections on the UI thread. States: Idle -> Running -> (Cancelling ->) Idle, with the
// outcome in finished(). Destroying a running job cancels it and waits for the thread.
//
//   auto* job = new Job(this);
//   connect(job, &Job::progress, bar, ...);
//   job->start([path](JobControl& c) -> JobResult { ... c.report(0.5, "half"); ... return {}; });
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>

namespace verdict::ui {

// What a task returns: empty error = success; `message` is shown to the user either way.
struct JobResult {
    QString error;    // one sentence a user understands ("" = success)
    QString detail;   // the technical detail (file, offset, engine message), shown on request
    QString message;  // success summary ("run 12 completed: 40 items")
    bool ok() const { return error.isEmpty(); }
};

class Job;

// The task's side of the job. Callable from the task's thread only.
class JobControl {
public:
    // fraction in [0, 1], or < 0 when unknown; text e.g. "item 12/40"; etaSeconds < 0 unknown.
    void report(double fraction, const QString& text, double etaSeconds = -1);
    // Sends any value to the UI thread in order with the progress reports (tokens, rows).
    void post(std::function<void()> onUiThread);
    bool cancelled() const { return m_stop.stop_requested(); }
    std::stop_token stopToken() const { return m_stop; }
    const std::atomic<bool>* cancelFlag() const { return &m_cancelFlag; }

private:
    friend class Job;
    JobControl(Job* job, std::stop_token stop, const std::atomic<bool>& flag)
        : m_job(job), m_stop(stop), m_cancelFlag(flag) {}
    Job* m_job;
    std::stop_token m_stop;
    const std::atomic<bool>& m_cancelFlag;
};

class Job : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Cancelling };
    using Task = std::function<JobResult(JobControl&)>;

    explicit Job(QObject* parent = nullptr);
    ~Job() override;

    // Starts the task; false when one is already running.
    bool start(Task task);
    // Asks the running task to stop (it finishes with whatever it had stored).
    void cancel();
    // Blocks until the thread has finished (shutdown only).
    void wait();
    State state() const { return m_state; }
    bool busy() const { return m_state != State::Idle; }

signals:
    void stateChanged(verdict::ui::Job::State state);
    void progress(double fraction, const QString& text, double etaSeconds);
    void finished(const verdict::ui::JobResult& result, bool cancelled);

private:
    friend class JobControl;
    void setState(State s);

    State m_state = State::Idle;
    std::jthread m_thread;
    std::atomic<bool> m_cancelFlag{false};
    std::shared_ptr<std::atomic<bool>> m_alive;  // cleared in the destructor: late posts are dropped
};

}  // namespace verdict::ui

Q_DECLARE_METATYPE(verdict::ui::JobResult)
