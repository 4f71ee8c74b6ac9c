#include "models/history_models.h"

#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "core/store/sweep_repository.h"

#include <QFileInfo>

#include <algorithm>
#include <map>

namespace verdict::ui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
QString when(const std::string& utc) { return qs(utc.substr(0, 16)).replace('T', ' '); }
}  // namespace

RecordTableModel::RecordTableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), m_headers(std::move(headers)) {}

void RecordTableModel::setRows(std::vector<Row> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int RecordTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int RecordTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_headers.size()); }

QVariant RecordTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= columnCount()) return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == kIdRole) return r.id;
    if (role == Qt::ToolTipRole) return r.toolTip;
    if (role == Qt::DisplayRole && index.column() < r.cells.size()) return r.cells[index.column()];
    return {};
}

QVariant RecordTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= m_headers.size()) return {};
    return m_headers[section];
}

RunListModel::RunListModel(QObject* parent)
    : RecordTableModel({tr("Run"), tr("Model"), tr("Suite"), tr("Status"), tr("Items"), tr("Accuracy (95 % CI)"),
                        tr("Started (UTC)")},
                       parent) {}

Result<void> RunListModel::reload(core::Database& db) {
    core::RunRepository runs(db);
    auto list = runs.list();
    if (!list) return list.error();
    auto suites = core::SuiteRepository(db).list();
    if (!suites) return suites.error();
    std::map<int64_t, std::string> suiteNames;
    for (const auto& s : *suites) suiteNames[s.id] = s.name;
    std::vector<Row> rows;
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
        auto items = runs.items(it->id);
        if (!items) return items.error();
        const core::RunSummary sum = core::summarizeRun(*items);
        const auto& acc = sum.accuracy.overall;
        const QString accuracy = acc.n == 0 ? QString("—")
                                            : QString("%1 % (%2–%3)")
                                                  .arg(100 * acc.accuracy, 0, 'f', 1)
                                                  .arg(100 * acc.ci.lo, 0, 'f', 0)
                                                  .arg(100 * acc.ci.hi, 0, 'f', 0);
        const QString path = qs(it->modelPath);
        rows.push_back({it->id,
                        {QVariant::fromValue<qint64>(it->id), QFileInfo(path).completeBaseName(), qs(suiteNames[it->suiteId]),
                         qs(std::string(core::runStatusName(it->status))),
                         QString("%1/%2").arg(sum.nStored).arg(it->nPlanned), accuracy, when(it->startedAt)},
                        it->error.empty() ? path : path + "\n" + qs(it->error)});
    }
    setRows(std::move(rows));
    return {};
}

SweepListModel::SweepListModel(QObject* parent)
    : RecordTableModel({tr("Sweep"), tr("Name"), tr("Model"), tr("Status"), tr("Points"), tr("Best output tok/s"),
                        tr("Created (UTC)")},
                       parent) {}

Result<void> SweepListModel::reload(core::Database& db) {
    core::SweepRepository repo(db);
    auto list = repo.list();
    if (!list) return list.error();
    std::vector<Row> rows;
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
        auto points = repo.points(it->id);
        if (!points) return points.error();
        double best = 0;
        for (const auto& p : *points) {
            const nlohmann::json m = core::pointMetrics(p);
            if (m.is_object() && m.contains("output_tok_per_s") && m["output_tok_per_s"].is_number())
                best = std::max(best, m["output_tok_per_s"].get<double>());
        }
        const QString path = qs(it->modelPath);
        rows.push_back({it->id,
                        {QVariant::fromValue<qint64>(it->id), qs(it->name),
                         it->backend == "endpoint" ? path : QFileInfo(path).completeBaseName(), qs(it->status),
                         QVariant::fromValue<qint64>(qint64(points->size())),
                         best > 0 ? QString::number(best, 'f', 1) : QString("—"), when(it->createdAt)},
                        it->error.empty() ? path : path + "\n" + qs(it->error)});
    }
    setRows(std::move(rows));
    return {};
}

}  // namespace verdict::ui
