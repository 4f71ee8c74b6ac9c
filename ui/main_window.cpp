#include "main_window.h"

#include "core/models/model_card_json.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QListWidget>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStatusBar>

namespace verdict::ui {

namespace {
constexpr int kCardRole = Qt::UserRole + 1;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle("Verdict");
    resize(1100, 700);

    auto* split = new QSplitter(this);
    m_models = new QListWidget(split);
    m_card = new QPlainTextEdit(split);
    m_card->setReadOnly(true);
    m_card->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_card->setPlaceholderText("File → Add models… to inspect a GGUF file: architecture, parameters, "
                               "quantization and the memory it needs.");
    split->setStretchFactor(1, 3);
    setCentralWidget(split);

    auto* file = menuBar()->addMenu("&File");
    QAction* add = file->addAction("&Add models…");
    add->setShortcut(QKeySequence::Open);
    connect(add, &QAction::triggered, this, &MainWindow::openModels);
    file->addSeparator();
    QAction* quit = file->addAction("&Quit");
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    connect(m_models, &QListWidget::currentRowChanged, this, &MainWindow::showSelected);
    statusBar()->showMessage("Ready");
}

bool MainWindow::addModel(const QString& path) {
    auto card = describeModelFile(path.toStdString());
    if (!card) {
        statusBar()->showMessage(QString::fromStdString(card.error().message));
        return false;
    }
    auto* item = new QListWidgetItem(QString::fromStdString(card->name) + "  (" + QFileInfo(path).fileName() + ")");
    item->setData(kCardRole, QString::fromStdString(core::modelCardToText(*card)));
    item->setToolTip(path);
    m_models->addItem(item);
    m_models->setCurrentItem(item);
    return true;
}

void MainWindow::openModels() {
    const QStringList paths = QFileDialog::getOpenFileNames(this, "Add GGUF models", QString(), "GGUF models (*.gguf)");
    for (const QString& p : paths) addModel(p);
}

void MainWindow::showSelected() {
    QListWidgetItem* item = m_models->currentItem();
    m_card->setPlainText(item ? item->data(kCardRole).toString() : QString());
}

}  // namespace verdict::ui
