#include "screenshot_tour.h"

#include "main_window.h"
#include "views/compare/compare_view.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QPixmap>
#include <QTextStream>
#include <QTimer>

#include <memory>

namespace verdict::ui {

namespace {

struct Tour {
    MainWindow* window;
    QString dir;
    int screen = 0;
    int failures = 0;
};

void shoot(std::shared_ptr<Tour> t);

void next(std::shared_ptr<Tour> t) {
    if (t->screen >= MainWindow::ScreenCount) {
        QApplication::exit(t->failures == 0 ? 0 : 1);
        return;
    }
    t->window->showScreen(MainWindow::Screen(t->screen));
    if (t->screen == MainWindow::Compare) {
        CompareView* cv = t->window->compareView();
        QObject::connect(cv, &CompareView::bothFinished, t->window, [t] { QTimer::singleShot(300, t->window, [t] { shoot(t); }); },
                         Qt::SingleShotConnection);
        if (!cv->send(QStringLiteral("Q: What is 51 + 15?\nA:"))) QTimer::singleShot(300, t->window, [t] { shoot(t); });
        return;
    }
    // Let the screen load its data and lay out its charts.
    QTimer::singleShot(700, t->window, [t] { shoot(t); });
}

void shoot(std::shared_ptr<Tour> t) {
    const QString file = QDir(t->dir).filePath(QString("%1-%2.png").arg(t->screen + 1, 2, 10, QChar('0')).arg(
        MainWindow::screenName(MainWindow::Screen(t->screen))));
    const bool ok = t->window->grab().save(file);
    QTextStream(stdout) << (ok ? "saved " : "FAILED ") << file << "\n";
    if (!ok) ++t->failures;
    ++t->screen;
    next(t);
}

}  // namespace

void startScreenshotTour(MainWindow& window, const QString& dir) {
    QDir().mkpath(dir);
    auto t = std::make_shared<Tour>(Tour{&window, dir});
    QTimer::singleShot(1000, &window, [t] { next(t); });
}

}  // namespace verdict::ui
