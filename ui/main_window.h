// The workbench window. Screens are added as the core services behind them land.
#pragma once

#include <QMainWindow>

class QListWidget;
class QPlainTextEdit;

namespace verdict::ui {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    // Adds a GGUF file to the model list and shows its card; returns false (and shows the
    // reason in the status bar) when the file cannot be read.
    bool addModel(const QString& path);

private:
    void openModels();
    void showSelected();

    QListWidget* m_models = nullptr;
    QPlainTextEdit* m_card = nullptr;
};

}  // namespace verdict::ui
