// Models screen: the workspace's models (GGUF files, folders, models found in LM Studio, Ollama,
// the Hugging Face cache and GPT4All, OpenAI-compatible endpoints) with their cards and a
// fits / tight / won't-fit badge for this machine at the chosen context; choose A and B here.
#pragma once

#include <QWidget>

class QTableView;
class QPlainTextEdit;
class QSpinBox;
class QLabel;
class QSortFilterProxyModel;
class QComboBox;

namespace verdict::ui {

class Workbench;
class Job;

class ModelsView : public QWidget {
    Q_OBJECT
public:
    explicit ModelsView(Workbench& workbench, QWidget* parent = nullptr);

    void addFiles();
    void addFolder();
    void addEndpoint();
    void discover();
    // Adds every GGUF file in `folder` (recursively); returns how many were added.
    int addFolderPath(const QString& folder);
    QTableView* table() const { return m_table; }

signals:
    void showScreenRequested(int screen);

private:
    QString selectedRef() const;
    void showCard();
    void addPaths(const QStringList& paths, const QString& source);

    Workbench& m_wb;
    QTableView* m_table;
    QSortFilterProxyModel* m_proxy;
    QPlainTextEdit* m_card;
    QSpinBox* m_ctx;
    QLabel* m_device;
    QComboBox* m_deviceBox;
    Job* m_discoverJob;
};

}  // namespace verdict::ui
