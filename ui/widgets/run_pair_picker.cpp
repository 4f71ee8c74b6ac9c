#include "widgets/run_pair_picker.h"

#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "workbench.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>

#include <map>

namespace verdict::ui {

RunPairPicker::RunPairPicker(Workbench& workbench, QWidget* parent) : QWidget(parent), m_wb(workbench) {
    m_a = new QComboBox;
    m_b = new QComboBox;
    m_a->setObjectName("runA");
    m_b->setObjectName("runB");
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(new QLabel(tr("Run A")));
    l->addWidget(m_a, 1);
    l->addWidget(new QLabel(tr("Run B")));
    l->addWidget(m_b, 1);
    auto chosen = [this] { m_wb.setComparedRuns(m_a->currentData().toLongLong(), m_b->currentData().toLongLong()); };
    connect(m_a, &QComboBox::activated, this, chosen);
    connect(m_b, &QComboBox::activated, this, chosen);
    connect(&m_wb, &Workbench::resultsChanged, this, &RunPairPicker::reload);
    connect(&m_wb, &Workbench::comparedRunsChanged, this, &RunPairPicker::reload);
    reload();
}

void RunPairPicker::reload() {
    auto db = m_wb.openDb();
    if (!db) return;
    auto runs = core::RunRepository(*db).list();
    auto suites = core::SuiteRepository(*db).list();
    if (!runs || !suites) return;
    std::map<int64_t, std::string> suiteNames;
    for (const auto& s : *suites) suiteNames[s.id] = s.name;
    for (QComboBox* c : {m_a, m_b}) {
        const QSignalBlocker block(c);
        c->clear();
        for (auto it = runs->rbegin(); it != runs->rend(); ++it)
            c->addItem(tr("#%1 %2 on %3 (%4)")
                           .arg(it->id)
                           .arg(QFileInfo(QString::fromStdString(it->modelPath)).completeBaseName())
                           .arg(QString::fromStdString(suiteNames[it->suiteId]))
                           .arg(QString::fromStdString(std::string(core::runStatusName(it->status)))),
                       QVariant::fromValue<qlonglong>(it->id));
    }
    const QSignalBlocker ba(m_a), bb(m_b);
    m_a->setCurrentIndex(m_a->findData(QVariant::fromValue<qlonglong>(m_wb.runA())));
    m_b->setCurrentIndex(m_b->findData(QVariant::fromValue<qlonglong>(m_wb.runB())));
}

}  // namespace verdict::ui
