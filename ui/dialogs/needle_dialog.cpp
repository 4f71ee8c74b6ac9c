#include "dialogs/needle_dialog.h"

#include "core/services/needle.h"
#include "widgets/error_box.h"
#include "workbench.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace verdict::ui {

NeedleDialog::NeedleDialog(Workbench& wb, const QString& tokenizer, QWidget* parent, const QString& padSuite)
    : QDialog(parent), m_wb(wb), m_tokenizer(tokenizer), m_padSuite(padSuite) {
    const bool padded = !m_padSuite.isEmpty();
    setWindowTitle(padded ? tr("Long-context variant of '%1'").arg(m_padSuite) : tr("Needle-in-a-haystack suite"));
    setObjectName("needleDialog");
    const core::NeedleRequest defaults;  // the same defaults as `verdict suite make needle`
    // The CLI requires --lengths; the dialog suggests a first grid.
    m_lengths = new QLineEdit("1k,4k,16k");
    m_lengths->setObjectName("needleLengths");
    m_lengths->setToolTip(tr("Prompt lengths in tokens, k = 1024 (e.g. 1k,4k,16k,64k,128k)"));
    m_depths = new QLineEdit(QString::fromStdString(defaults.depths));
    m_depths->setObjectName("needleDepths");
    m_depths->setToolTip(tr("Where the needle sits, in percent of the text: 0 = first sentence, 100 = last"));
    m_needles = new QSpinBox;
    m_needles->setRange(1, 100);
    m_needles->setValue(defaults.needlesPerCell);
    m_name = new QLineEdit(padded ? QString() : QString::fromStdString(defaults.name));
    if (padded) m_name->setPlaceholderText(tr("%1@LENGTHS").arg(m_padSuite));
    m_name->setObjectName("needleName");
    m_haystack = new QLineEdit;
    m_haystack->setObjectName("needleHaystack");
    m_haystack->setPlaceholderText(tr("built-in filler sentences"));
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Haystack text"), QString(), tr("Text (*.txt *.md);;All files (*)"));
        if (!f.isEmpty()) m_haystack->setText(f);
    });
    auto* hay = new QHBoxLayout;
    hay->addWidget(m_haystack, 1);
    hay->addWidget(browse);
    m_count = new QCheckBox(m_tokenizer.isEmpty() ? tr("estimate tokens as bytes / 4 (model A is no local file)")
                                                  : tr("count tokens with %1's tokenizer").arg(QFileInfo(m_tokenizer).fileName()));
    m_count->setChecked(!m_tokenizer.isEmpty());
    m_count->setEnabled(!m_tokenizer.isEmpty());
    auto* form = new QFormLayout;
    if (padded) {
        auto* what = new QLabel(tr("Every item of '%1' again at each length, its prompt after filler text that pads it "
                                   "to about that many tokens: the accuracy by context length, with the KV cache each "
                                   "length needs.")
                                    .arg(m_padSuite));
        what->setWordWrap(true);
        form->addRow(what);
    }
    form->addRow(tr("Lengths (tokens)"), m_lengths);
    if (!padded) {
        form->addRow(tr("Depths (%)"), m_depths);
        form->addRow(tr("Needles per cell"), m_needles);
    }
    form->addRow(tr("Haystack"), hay);
    form->addRow(QString(), m_count);
    form->addRow(tr("Suite name"), m_name);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    auto* makeBtn = buttons->addButton(tr("Make suite"), QDialogButtonBox::AcceptRole);
    makeBtn->setObjectName("needleMake");
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(makeBtn, &QPushButton::clicked, this, [this] { make(); });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

bool NeedleDialog::make() {
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The results database cannot be opened."), QString::fromStdString(db.error().message));
        return false;
    }
    core::NeedleRequest r;
    r.lengths = m_lengths->text().trimmed().toStdString();
    r.haystackPath = m_haystack->text().trimmed().toStdString();
    r.tokenizerPath = m_count->isChecked() ? m_tokenizer.toStdString() : std::string();
    core::ServiceResult<core::NeedleMade> made = core::ServiceError{};
    if (!m_padSuite.isEmpty()) {
        core::PaddedRequest p;
        p.suite = m_padSuite.toStdString();
        p.fill = r;
        p.name = m_name->text().trimmed().toStdString();
        made = core::makePaddedSuiteInStore(*db, p);
    } else {
        r.depths = m_depths->text().trimmed().toStdString();
        r.needlesPerCell = m_needles->value();
        r.name = m_name->text().trimmed().toStdString();
        made = core::makeNeedleSuiteInStore(*db, r);
    }
    if (!made) {
        showError(this, m_padSuite.isEmpty() ? tr("The needle suite could not be made.") : tr("The long-context variant could not be made."),
                  QString::fromStdString(made.error().message));
        return false;
    }
    m_wb.notifyResultsChanged();
    emit this->made(QString::fromStdString(made->saved.suite.name));
    accept();
    return true;
}

}  // namespace verdict::ui
