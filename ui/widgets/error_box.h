// Errors in the window: one sentence a user understands, the technical detail (file, line,
// engine message) a click away under "Show Details…". Never blocks: the box is window-modal and
// opened with open(), so running jobs, timers and the GUI tests go on.
#pragma once

#include <QString>

class QWidget;

namespace verdict::ui {

void showError(QWidget* parent, const QString& summary, const QString& detail = {});

}  // namespace verdict::ui
