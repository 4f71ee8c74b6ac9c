// Walks every screen of a shown window and saves one PNG per screen (tests/ui/screenshots.sh runs
// the real app under Xvfb with VERDICT_SCREENSHOTS=DIR). On the Compare screen it first sends a
// prompt to both models and waits for the answers, so every picture shows real data. Quits the
// application when done; exit code 0 when every file was written.
#pragma once

#include <QString>

namespace verdict::ui {

class MainWindow;

void startScreenshotTour(MainWindow& window, const QString& dir);

}  // namespace verdict::ui
