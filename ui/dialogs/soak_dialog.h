// "Soak…" of the Performance screen: an endpoint, or a GGUF file served by this process, under
// open-loop load for minutes or hours, cut into windows — the drift per hour of memory (RSS),
// TTFT / E2E percentiles, throughput and error rate with its 95 % interval, and with bursts the
// P99 spread across the high- and the low-rate windows — by the same service as `verdict soak`
// (core/services/soak.h), on a background job. The drift table and the chart over time fill in
// after every stored window; stored soaks can be reopened.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace verdict::ui {

class ChartPanel;
class Job;
class Workbench;

class SoakDialog : public QDialog {
    Q_OBJECT
public:
    // `target`: what the target field starts with (an endpoint reference or a GGUF file; "" = empty).
    SoakDialog(Workbench& wb, const QString& target, QWidget* parent = nullptr);

    QLineEdit* targetEdit() const { return m_target; }
    QLineEdit* modelEdit() const { return m_model; }
    QDoubleSpinBox* durationSpin() const { return m_duration; }  // minutes, fractions allowed (0.05 = 3 s)
    QDoubleSpinBox* windowSpin() const { return m_window; }      // seconds
    QDoubleSpinBox* rateSpin() const { return m_rate; }          // requests/s
    QDoubleSpinBox* burstSpin() const { return m_burst; }        // requests/s, 0 = no bursts
    QSpinBox* promptWordsSpin() const { return m_promptWords; }
    QSpinBox* maxTokensSpin() const { return m_maxTokens; }
    QSpinBox* warmupSpin() const { return m_warmup; }
    QTableWidget* driftTable() const { return m_drift; }
    ChartPanel* chartPanel() const { return m_chart; }
    bool running() const;
    // Starts the soak with the settings on screen; false (with an error box) when they are invalid,
    // the endpoint's key cannot be read, or a soak is already running. soakFinished() follows.
    bool start();
    void cancel();
    // Shows stored soak `id` (the "Open stored" choice); false when it cannot be read.
    bool showStored(qint64 id);

signals:
    // The soak ended (completed, cancelled or failed): its id, 0 when nothing was stored.
    void soakFinished(qint64 id);

private:
    void reloadStored();
    void showSoak(const nlohmann::json& soak);
    void updateButtons();

    Workbench& m_wb;
    QLineEdit* m_target;
    QLineEdit* m_model;
    QDoubleSpinBox* m_duration;
    QDoubleSpinBox* m_window;
    QDoubleSpinBox* m_rate;
    QDoubleSpinBox* m_burst;
    QSpinBox* m_promptWords;
    QSpinBox* m_maxTokens;
    QSpinBox* m_warmup;
    QSpinBox* m_pid;
    QLabel* m_device;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_bar;
    QLabel* m_status;
    QComboBox* m_stored;
    QTableWidget* m_drift;
    QLabel* m_summary;
    ChartPanel* m_chart;
    Job* m_job;
};

}  // namespace verdict::ui
