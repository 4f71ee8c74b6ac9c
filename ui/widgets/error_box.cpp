#include "widgets/error_box.h"

#include <QMessageBox>

namespace verdict::ui {

void showError(QWidget* parent, const QString& summary, const QString& detail) {
    auto* box = new QMessageBox(QMessageBox::Warning, QObject::tr("Verdict"), summary, QMessageBox::Ok, parent);
    box->setObjectName("errorBox");
    if (!detail.isEmpty() && detail != summary) box->setDetailedText(detail);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    box->open();
}

}  // namespace verdict::ui
