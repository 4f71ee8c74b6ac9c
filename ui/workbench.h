// The window's shared state, constructed in main and passed to every screen: where the results
// database is, the models of the workspace, which two are compared (models A and B, and the runs
// the Cost and Decision screens read), and every background job (so closing the window cancels
// them all). Screens talk to each other only through its signals.
#pragma once

#include "core/run/backend_factory.h"
#include "core/store/database.h"
#include "models/model_list_model.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <cstdint>
#include <vector>

namespace verdict::ui {

class Job;

class Workbench : public QObject {
    Q_OBJECT
public:
    explicit Workbench(QString dbPath, QObject* parent = nullptr);

    const QString& dbPath() const { return m_dbPath; }
    // A new connection (migrated) for the calling thread: SQLite connections are not shared
    // between threads. Errors name the database path.
    Result<core::Database> openDb() const;

    ModelListModel* models() const { return m_models; }
    // Adds a GGUF file; false with the reason (file, key) when it cannot be read.
    bool addModelFile(const QString& path, const QString& source, QString* error);
    // Adds an OpenAI-compatible endpoint ("http://host:port" or "https://…", optional served model
    // name) and how to reach it; false with the reason for a URL that is none, a CA file that
    // cannot be read, or a CA file together with insecure.
    bool addEndpoint(const QString& url, const QString& model, QString* error) { return addEndpoint(url, model, {}, error); }
    bool addEndpoint(const QString& url, const QString& model, const EndpointAccess& access, QString* error);
    // Fills the key and TLS fields of `o` for an endpoint ref (a file ref is left alone). Reads the
    // keyring, so call it on the GUI thread, before a job starts. False with the reason when the
    // key cannot be had (a variable that is not set, a keyring that does not answer).
    bool applyEndpointAccess(const QString& ref, core::BackendOpenOptions& o, QString* error) const;
    void removeModel(const QString& ref);
    QString displayName(const QString& ref) const;

    // Models A and B (refs), the pair the Compare, Suites and Performance screens use.
    QString modelA() const { return m_modelA; }
    QString modelB() const { return m_modelB; }
    void setModels(const QString& a, const QString& b);

    // Runs the Cost and Decision screens compare (0 = none chosen).
    int64_t runA() const { return m_runA; }
    int64_t runB() const { return m_runB; }
    void setComparedRuns(int64_t a, int64_t b);
    // The newest pair of completed runs of models A and B on the same suite; false when none.
    bool pickLatestRuns();

    // Context length and device (an id from listDevices(): "cpu", "cuda:0") the fit badges are
    // computed for. The default device is the first GPU, else the CPU.
    uint64_t fitContext() const { return m_fitCtx; }
    void setFitContext(uint64_t ctx);
    QString fitDevice() const;  // the chosen id, else the default
    void setFitDevice(const QString& id);

    // Where local models run on the Compare, Suites and Performance screens (ModelOptions::device:
    // "cpu", "cuda:0"; core's BackendOpenOptions / EngineSweepTargetOptions::device). Default "cpu".
    QString runDevice() const { return m_runDevice; }
    void setRunDevice(const QString& id);
    // Partial offload with a GPU run device (ModelOptions::gpuLayers; core's ...Options::gpuLayers):
    // the first N transformer blocks on the GPU, the rest on the CPU. -1 (default): all of them.
    int runGpuLayers() const { return m_runGpuLayers; }
    void setRunGpuLayers(int n);

    // Called after anything was written to the database (runs, sweeps, suites, votes).
    void notifyResultsChanged() { emit resultsChanged(); }

    // Every job registers itself; closing the window cancels and waits for them.
    void registerJob(Job* job);
    bool anyJobRunning() const;
    void cancelAllJobs();
    void waitAllJobs();

    // First start: the bundled demo models become A and B, and the demo suites are imported.
    // Runs once per settings file; false (with the reason) when the resources are missing.
    bool prepareDemoWorkspace(QString* error);

    // Workspace models and choices, in QSettings.
    void saveState() const;
    void restoreState();

signals:
    void modelsChanged();
    void selectionChanged();
    void comparedRunsChanged();
    void resultsChanged();
    void runDeviceChanged();
    void runGpuLayersChanged();

private:
    void refreshFit(int row);

    QString m_dbPath;
    ModelListModel* m_models;
    QString m_modelA, m_modelB;
    int64_t m_runA = 0, m_runB = 0;
    uint64_t m_fitCtx = 4096;
    QString m_fitDevice;
    QString m_runDevice = "cpu";
    int m_runGpuLayers = -1;
    std::vector<QPointer<Job>> m_jobs;
};

}  // namespace verdict::ui
