// "Quantization…" of the Performance screen: one model in several files (F16 / Q8_0 / Q4_K_M ...)
// measured against a base file — KL-divergence and top-1 agreement on a text, accuracy delta on a
// stored suite, decode throughput and P99 change from a one-point sweep, size and bits per weight —
// by the same service as `verdict quant-compare` (core/services/quant_compare.h), on a background
// job. The table and chart fill in after every stored step; stored comparisons can be reopened.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace verdict::ui {

class ChartPanel;
class Job;
class Workbench;

class QuantCompareDialog : public QDialog {
    Q_OBJECT
public:
    // `base`: the file the base field starts with ("" = empty).
    QuantCompareDialog(Workbench& wb, const QString& base, QWidget* parent = nullptr);

    QLineEdit* baseEdit() const { return m_base; }
    QListWidget* filesList() const { return m_files; }
    QLineEdit* textEdit() const { return m_text; }
    QSpinBox* ctxSpin() const { return m_ctx; }
    QCheckBox* sweepCheck() const { return m_sweep; }
    QTableWidget* table() const { return m_table; }
    ChartPanel* chartPanel() const { return m_chart; }
    bool running() const;
    // Starts the comparison with the settings on screen; false (with an error box) when they are
    // invalid or a comparison is already running. comparisonFinished() follows.
    bool start();
    void cancel();
    // Shows stored comparison `id` (the "Open stored" choice); false when it cannot be read.
    bool showStored(qint64 id);

signals:
    // The comparison ended (completed, cancelled or failed): its id, 0 when nothing was stored.
    void comparisonFinished(qint64 id);

private:
    void reloadStored();
    void showComparison(const nlohmann::json& comparison);
    void updateButtons();

    Workbench& m_wb;
    QLineEdit* m_base;
    QListWidget* m_files;
    QComboBox* m_suite;
    QLineEdit* m_text;
    QSpinBox* m_ctx;
    QCheckBox* m_sweep;
    QSpinBox* m_prompt;
    QSpinBox* m_gen;
    QSpinBox* m_reps;
    QLabel* m_device;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_bar;
    QLabel* m_status;
    QComboBox* m_stored;
    QTableWidget* m_table;
    ChartPanel* m_chart;
    Job* m_job;
};

}  // namespace verdict::ui
