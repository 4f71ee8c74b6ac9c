#include "dialogs/conversation_dialog.h"

#include "core/services/needle.h"
#include "widgets/error_box.h"
#include "workbench.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace verdict::ui {

ConversationDialog::ConversationDialog(Workbench& wb, QWidget* parent) : QDialog(parent), m_wb(wb) {
    setWindowTitle(tr("Long-conversation suite"));
    setObjectName("conversationDialog");
    const core::ConversationRequest defaults;  // the same defaults as `verdict suite make conversation`
    m_turns = new QLineEdit(QString::fromStdString(defaults.lengths));
    m_turns->setObjectName("conversationTurns");
    m_turns->setToolTip(tr("Turns per conversation, 3..1000 (e.g. 10,50,120)"));
    m_conversations = new QSpinBox;
    m_conversations->setRange(1, 1000);
    m_conversations->setValue(defaults.conversations);
    m_name = new QLineEdit(QString::fromStdString(defaults.name));
    m_name->setObjectName("conversationName");
    auto* what = new QLabel(tr("Each conversation tells a fact in its first turn, asks small sums in every turn after it, "
                               "and asks for the fact in its last turn: the accuracy by turn shows whether a model still "
                               "follows late in a long conversation and still knows what it was told at the start."));
    what->setWordWrap(true);
    auto* form = new QFormLayout;
    form->addRow(what);
    form->addRow(tr("Turns"), m_turns);
    form->addRow(tr("Conversations per length"), m_conversations);
    form->addRow(tr("Suite name"), m_name);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    auto* makeBtn = buttons->addButton(tr("Make suite"), QDialogButtonBox::AcceptRole);
    makeBtn->setObjectName("conversationMake");
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(makeBtn, &QPushButton::clicked, this, [this] { make(); });
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(buttons);
}

bool ConversationDialog::make() {
    auto db = m_wb.openDb();
    if (!db) {
        showError(this, tr("The results database cannot be opened."), QString::fromStdString(db.error().message));
        return false;
    }
    core::ConversationRequest r;
    r.lengths = m_turns->text().trimmed().toStdString();
    r.conversations = m_conversations->value();
    r.name = m_name->text().trimmed().toStdString();
    auto made = core::makeConversationSuiteInStore(*db, r);
    if (!made) {
        showError(this, tr("The conversation suite could not be made."), QString::fromStdString(made.error().message));
        return false;
    }
    m_wb.notifyResultsChanged();
    emit this->made(QString::fromStdString(made->saved.suite.name));
    accept();
    return true;
}

}  // namespace verdict::ui
