// Import a test suite (JSONL, JSON, CSV/TSV, .gz): the file is read on a background job, then
// the dialog shows what was understood — format, detected shape, the field mapping in use, a
// preview of the items, and every rejected line with its reason — before anything is stored.
// The shape can be forced and the fields mapped by hand, which re-reads the file.
#pragma once

#include "core/suite/suite_importer.h"

#include <QDialog>

#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace verdict::ui {

class Workbench;
class Job;

class ImportSuiteDialog : public QDialog {
    Q_OBJECT
public:
    ImportSuiteDialog(Workbench& workbench, QString path, QWidget* parent = nullptr);

    // Reads the file with the current shape/mapping choices (on a job).
    void reread();
    bool loaded() const { return m_result.has_value(); }
    const core::ImportResult* result() const { return m_result ? &*m_result : nullptr; }
    int previewRows() const;
    int rejectedRows() const;
    // Stores the suite; emits saved(name) and closes. False (and the reason shown) on failure.
    bool save();

signals:
    void loadedChanged();
    void saved(const QString& suiteName);

private:
    void showResult();

    Workbench& m_wb;
    QString m_path;
    Job* m_job;
    std::optional<core::ImportResult> m_result;  // the preview: first rows, exact counts
    core::ImportOptions m_options;               // how the preview was read; save() reads the same way
    QLabel* m_summary;
    QComboBox* m_shape;
    QLineEdit* m_mapping;
    QLineEdit* m_answers;  // BFCL's possible_answer file
    QLineEdit* m_name;
    QTableWidget* m_preview;
    QTableWidget* m_rejected;
    QPushButton* m_save;
};

}  // namespace verdict::ui
