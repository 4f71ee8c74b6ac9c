// "Soak…" of the Performance screen: an endpoint, or a GGUF file served by this process, under
// open-loop load for minutes or hours, cut into windows — the drift per hour of memory (RSS),
// TTFT / E2E percentiles, throughput and error rate with its 95 % interval, and with bursts the
// P99 spread across the high- and the low-rate windows — by the same service as `verdict soak`
// (core/services/soak.h), on a background job. The drift table and the chart over time fill in
// after every stored window; stored soaks can be reopened.
#pragma once

#include "dialogs/study_dialog.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableWidget;

namespace verdict::ui {

class ChartPanel;

class SoakDialog : public StudyDialog {
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
    // Also false when the endpoint's key cannot be read.
    bool start() override;

private:
    Result<std::vector<Entry>> storedEntries(core::Database& db) override;
    Result<std::optional<nlohmann::json>> loadStudy(core::Database& db, qint64 id) override;
    void showStudy(const nlohmann::json& soak) override;
    QString storedStatus(qint64 id, const nlohmann::json& soak) override;
    QString noun() const override { return tr("Soak test"); }

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
    QTableWidget* m_drift;
    QLabel* m_summary;
    ChartPanel* m_chart;
};

}  // namespace verdict::ui
