// verdict: the workbench window when started with no subcommand, the CLI otherwise.
#include "cli/commands.h"
#include "core/store/store.h"
#include "core/version.h"
#include "main_window.h"
#include "screenshot_tour.h"
#include "widgets/error_box.h"
#include "workbench.h"

#include <QApplication>
#include <QSettings>
#include <QTimer>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

void printUsage() {
    std::cout << "Verdict " << verdict::core::versionNumber()
              << " - choose between two language models on your own hardware\n\n"
                 "usage: verdict                 open the workbench window\n"
                 "       verdict COMMAND [ARGS]  run a command (verdict COMMAND --help for its options)\n\n"
                 "commands:\n";
    for (const auto& c : verdict::cli::commands()) {
        std::string name = c.name;
        name.resize(std::max<size_t>(name.size(), 14), ' ');
        std::cout << "  " << name << c.summary << "\n";
    }
}

int runGui(int argc, char** argv) {
    // Without a display Qt would abort in QApplication's constructor: say what to do instead.
    if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) {
        std::cerr << "verdict: no display (DISPLAY / WAYLAND_DISPLAY unset) for the window; run a command instead "
                     "(verdict demo, verdict --help), or set QT_QPA_PLATFORM=offscreen\n";
        return verdict::cli::kExitUsage;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName("Verdict");
    QApplication::setApplicationName("Verdict");
    QApplication::setApplicationVersion(QString::fromLatin1(verdict::core::versionNumber()));
    // The same database as the CLI: $VERDICT_DB, else the XDG data directory.
    verdict::ui::Workbench workbench(QString::fromStdString(verdict::core::resolveDatabasePath(std::nullopt)));
    QString demoError;
    const bool firstStart = !QSettings().value("workspace/initialized", false).toBool();
    if (!firstStart) workbench.restoreState();
    // First start (or an emptied workspace): the bundled demo models are A and B and the demo
    // suites are imported, so Compare works at once.
    if (firstStart || workbench.models()->rowCount() == 0) workbench.prepareDemoWorkspace(&demoError);
    workbench.pickLatestRuns();
    verdict::ui::MainWindow window(workbench);
    window.show();
    if (!demoError.isEmpty())
        verdict::ui::showError(&window, QObject::tr("The demo models could not be set up; add your own GGUF files on the "
                                                    "Models screen."),
                               demoError);
    if (const QByteArray dir = qgetenv("VERDICT_SCREENSHOTS"); !dir.isEmpty())
        verdict::ui::startScreenshotTour(window, QString::fromLocal8Bit(dir));
    return QApplication::exec();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return runGui(argc, argv);
    const std::string first = argv[1];
    if (first == "--version" || first == "version") {
        std::cout << verdict::core::toolVersion() << "\n";
        return 0;
    }
    if (first == "--help" || first == "-h" || first == "help") {
        printUsage();
        return 0;
    }
    if (first == "gui") return runGui(1, argv);
    const auto* cmd = verdict::cli::findCommand(first);
    if (!cmd) {
        std::cerr << "verdict: unknown command '" << first << "' (see verdict --help)\n";
        return verdict::cli::kExitUsage;
    }
    std::vector<std::string> args(argv + 2, argv + argc);
    return cmd->run(args);
}
