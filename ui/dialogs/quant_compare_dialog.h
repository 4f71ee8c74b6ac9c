// "Quantization…" of the Performance screen: one model in several files (F16 / Q8_0 / Q4_K_M ...)
// measured against a base file — KL-divergence and top-1 agreement on a text, accuracy delta on a
// stored suite, decode throughput and P99 change from a one-point sweep, size and bits per weight —
// by the same service as `verdict quant-compare` (core/services/quant_compare.h), on a background
// job. The table and chart fill in after every stored step; stored comparisons can be reopened.
#pragma once

#include "dialogs/study_dialog.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QListWidget;
class QSpinBox;
class QTableWidget;

namespace verdict::ui {

class ChartPanel;

class QuantCompareDialog : public StudyDialog {
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
    bool start() override;

private:
    Result<std::vector<Entry>> storedEntries(core::Database& db) override;
    Result<std::optional<nlohmann::json>> loadStudy(core::Database& db, qint64 id) override;
    void showStudy(const nlohmann::json& comparison) override;
    QString storedStatus(qint64 id, const nlohmann::json& comparison) override;
    QString noun() const override { return tr("Quant comparison"); }

    QLineEdit* m_base;
    QListWidget* m_files;
    QComboBox* m_suite;
    QLineEdit* m_text;
    QSpinBox* m_ctx;
    QCheckBox* m_sweep;
    QSpinBox* m_prompt;
    QSpinBox* m_gen;
    QSpinBox* m_reps;
    QTableWidget* m_table;
    ChartPanel* m_chart;
};

}  // namespace verdict::ui
