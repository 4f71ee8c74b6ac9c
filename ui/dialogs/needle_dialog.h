// "Needle suite…" of the Suites screen: a needle-in-a-haystack suite (prompt lengths, needle
// depths, needles per cell, an optional haystack text, tokens counted with a model's tokenizer),
// made and stored by the same service as `verdict suite make needle` (core/services/needle.h).
// With a suite to pad ("Long-context variant…"): that suite at several context lengths, as
// `verdict suite make padded` makes it (no depths or needles then).
#pragma once

#include <QDialog>

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace verdict::ui {

class Workbench;

class NeedleDialog : public QDialog {
    Q_OBJECT
public:
    // `tokenizer`: a local model file whose tokenizer counts the tokens ("" = estimate).
    // `padSuite`: the stored suite to pad ("" = a needle suite).
    NeedleDialog(Workbench& wb, const QString& tokenizer, QWidget* parent = nullptr, const QString& padSuite = {});

    QLineEdit* lengthsEdit() const { return m_lengths; }
    QLineEdit* depthsEdit() const { return m_depths; }
    QLineEdit* nameEdit() const { return m_name; }
    QLineEdit* haystackEdit() const { return m_haystack; }
    // Makes and stores the suite; false (with an error box) when the service refuses.
    bool make();

signals:
    void made(const QString& suiteName);

private:
    Workbench& m_wb;
    QString m_tokenizer;
    QString m_padSuite;
    QLineEdit* m_lengths;
    QLineEdit* m_depths;
    QLineEdit* m_name;
    QLineEdit* m_haystack;
    QSpinBox* m_needles;
    QCheckBox* m_count;
};

}  // namespace verdict::ui
