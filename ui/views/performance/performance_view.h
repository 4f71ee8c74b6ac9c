// Performance screen: latency sweeps of models A and B (prompt lengths x output lengths x batch
// sizes, warm-ups and repetitions, run on a background job and stored point by point) and the
// charts of any two stored sweeps, A and B in the same chart: TTFT against prompt length,
// tokens/s against batch with the memory-bandwidth roofline, latency percentiles, and the memory
// breakdown (weights / KV cache / scratch). "Quantization…" opens the quantization trade-off of one
// model's files (dialogs/quant_compare_dialog.h), "Soak…" the soak test of an endpoint or a file
// (dialogs/soak_dialog.h).
#pragma once

#include <QWidget>

#include <cstdint>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace verdict::ui {

class Workbench;
class Job;
class ChartPanel;
class QuantCompareDialog;
class SoakDialog;

class PerformanceView : public QWidget {
    Q_OBJECT
public:
    explicit PerformanceView(Workbench& workbench, QWidget* parent = nullptr);

    // Sweeps A then B with the settings on screen. False (reason shown) when they are invalid.
    bool runSweeps();
    void cancel();
    bool running() const;
    // Shows these two stored sweeps (0 = keep the current choice).
    void showSweeps(int64_t sweepA, int64_t sweepB);
    int chartsShown() const;  // how many of the four charts have data
    QString summaryText() const;
    // Opens the "Quantization…" dialog (base: model A when it is a local file).
    QuantCompareDialog* openQuantCompare();
    // Opens the "Soak…" dialog (target: model A, a file or an endpoint).
    SoakDialog* openSoak();

private:
    void reloadSweeps();
    void redraw();
    void updateButtons();

    Workbench& m_wb;
    QLineEdit* m_prompts;
    QLineEdit* m_gens;
    QLineEdit* m_batches;
    QSpinBox* m_reps;
    QSpinBox* m_warmups;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QProgressBar* m_bar;
    QLabel* m_status;
    QComboBox* m_sweepA;
    QComboBox* m_sweepB;
    QLabel* m_summary;
    ChartPanel* m_ttft;
    ChartPanel* m_throughput;
    ChartPanel* m_percentiles;
    ChartPanel* m_memory;
    Job* m_job;
};

}  // namespace verdict::ui
