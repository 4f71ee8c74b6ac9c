// Compare screen (the first screen): one prompt — or a whole chat — goes to models A and B; the
// answers stream side by side with live time-to-first-token, tokens/s, token count and memory.
// Settings are shared or per side. Blind mode hides the names and shuffles the sides; the user
// picks the better answer, the vote is stored, and the win rate is shown with its interval.
#pragma once

#include "core/services/compare.h"
#include "core/suite/suite_item.h"

#include <QWidget>

#include <memory>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QGroupBox;

namespace verdict::ui {

class Workbench;
class Job;
struct LoadedBackend;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(Workbench& workbench, QWidget* parent = nullptr);
    ~CompareView() override;

    // Sends `prompt` (the text box's content when empty) to both models. False when a side is
    // still busy or no model is chosen (the reason is shown).
    bool send(const QString& prompt = {});
    void stop();
    void newChat();
    bool busy() const;
    // Stores a vote: -1 left better, 0 tie, 1 right better. False when there is nothing to vote on.
    bool vote(int side);

    QString answerText(int side) const;  // 0 left, 1 right
    QString statsText(int side) const;
    QString winRateText() const;

signals:
    void bothFinished();

private:
    struct Side {
        int index = 0;
        Job* job = nullptr;
        std::shared_ptr<LoadedBackend> backend;
        std::vector<core::ChatTurn> history;
        QLabel* title = nullptr;
        QLabel* stats = nullptr;
        QPlainTextEdit* output = nullptr;
        QString ref;          // model this side shows for the current prompt
        QString answer;
        bool done = false;
        bool failed = false;
    };
    struct Settings {
        QDoubleSpinBox* temperature;
        QSpinBox* maxTokens;
        QSpinBox* seed;
        QCheckBox* chatTemplate;
    };

    QWidget* buildSettings(Settings& s, const QString& title);
    // The compare service's settings for these controls and the system message.
    core::CompareSettings compareSettingsOf(const Settings& w) const;
    void buildSide(Side& side);
    void startSide(Side& side, const QString& ref, const Settings& settings, const QString& prompt);
    void refreshModels();
    void refreshWinRate();
    void updateButtons();
    void sideFinished();

    Workbench& m_wb;
    QComboBox* m_modelA;
    QComboBox* m_modelB;
    QCheckBox* m_blind;
    QCheckBox* m_perSide;
    QLineEdit* m_system;
    Settings m_shared{};
    Settings m_sideB{};
    QGroupBox* m_sideBBox;
    QPlainTextEdit* m_prompt;
    QPushButton* m_send;
    QPushButton* m_stop;
    QPushButton* m_voteLeft;
    QPushButton* m_voteTie;
    QPushButton* m_voteRight;
    QLabel* m_winRate;
    QLabel* m_asked;
    Side m_left, m_right;
    bool m_swapped = false;    // blind mode: the left side shows model B
    bool m_voted = true;       // nothing to vote on yet
    QString m_lastPrompt;
};

}  // namespace verdict::ui
