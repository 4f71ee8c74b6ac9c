// "Conversation suite…" of the Suites screen: long conversations (a fact told first, small tasks,
// the fact asked for last) of several lengths, made and stored by the same service as `verdict
// suite make conversation` (core/services/needle.h). Runs of it show the accuracy by turn.
#pragma once

#include <QDialog>

class QLineEdit;
class QSpinBox;

namespace verdict::ui {

class Workbench;

class ConversationDialog : public QDialog {
    Q_OBJECT
public:
    explicit ConversationDialog(Workbench& wb, QWidget* parent = nullptr);

    QLineEdit* turnsEdit() const { return m_turns; }
    QSpinBox* conversationsSpin() const { return m_conversations; }
    QLineEdit* nameEdit() const { return m_name; }
    // Makes and stores the suite; false (with an error box) when the service refuses.
    bool make();

signals:
    void made(const QString& suiteName);

private:
    Workbench& m_wb;
    QLineEdit* m_turns;
    QSpinBox* m_conversations;
    QLineEdit* m_name;
};

}  // namespace verdict::ui
