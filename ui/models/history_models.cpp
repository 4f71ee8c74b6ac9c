#include "models/history_models.h"

#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/suite_repository.h"
#include "core/store/sweep_repository.h"

#include <QFileInfo>

#include <map>

namespace verdict::ui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

RunListModel::RunListModel(QObject* parent) : QAbstractTableModel(parent) {}

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
        Row r;
        r.id = it->id;
        r.modelPath = qs(it->modelPath);
        r.model = QFileInfo(r.modelPath).completeBaseName();
        r.suite = qs(suiteNames[it->suiteId]);
        r.status = qs(std::string(core::runStatusName(it->status)));
        r.started = qs(it->startedAt.substr(0, 16)).replace('T', ' ');
        r.error = qs(it->error);
        r.planned = it->nPlanned;
        auto items = runs.items(it->id);
        if (!items) return items.error();
        const core::RunSummary sum = core::summarizeRun(*items);
        r.stored = sum.nStored;
        if (sum.accuracy.overall.n > 0) {
            r.accuracy = sum.accuracy.overall.accuracy;
            r.lo = sum.accuracy.overall.ci.lo;
            r.hi = sum.accuracy.overall.ci.hi;
        }
        rows.push_back(std::move(r));
    }
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
    return {};
}

int RunListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int RunListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant RunListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == kIdRole) return r.id;
    if (role == Qt::ToolTipRole) return r.error.isEmpty() ? r.modelPath : r.modelPath + "\n" + r.error;
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Id: return r.id;
    case Model: return r.model;
    case Suite: return r.suite;
    case Status: return r.status;
    case Items: return QString("%1/%2").arg(r.stored).arg(r.planned);
    case Accuracy:
        if (r.accuracy < 0) return QString("—");
        return QString("%1 % (%2–%3)").arg(100 * r.accuracy, 0, 'f', 1).arg(100 * r.lo, 0, 'f', 0).arg(100 * r.hi, 0, 'f', 0);
    case Started: return r.started;
    default: return {};
    }
}

QVariant RunListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {QT_TR_NOOP("Run"),   QT_TR_NOOP("Model"),    QT_TR_NOOP("Suite"),  QT_TR_NOOP("Status"),
                                   QT_TR_NOOP("Items"), QT_TR_NOOP("Accuracy (95 % CI)"), QT_TR_NOOP("Started (UTC)")};
    return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

SweepListModel::SweepListModel(QObject* parent) : QAbstractTableModel(parent) {}

Result<void> SweepListModel::reload(core::Database& db) {
    core::SweepRepository repo(db);
    auto list = repo.list();
    if (!list) return list.error();
    std::vector<Row> rows;
    for (auto it = list->rbegin(); it != list->rend(); ++it) {
        Row r;
        r.id = it->id;
        r.name = qs(it->name);
        r.modelPath = qs(it->modelPath);
        r.model = it->backend == "endpoint" ? r.modelPath : QFileInfo(r.modelPath).completeBaseName();
        r.status = qs(it->status);
        r.created = qs(it->createdAt.substr(0, 16)).replace('T', ' ');
        r.error = qs(it->error);
        auto points = repo.points(it->id);
        if (!points) return points.error();
        r.points = qint64(points->size());
        for (const auto& p : *points)
            if (p.metrics.is_object() && p.metrics.contains("output_tok_per_s") && p.metrics["output_tok_per_s"].is_number())
                r.bestTps = std::max(r.bestTps, p.metrics["output_tok_per_s"].get<double>());
        rows.push_back(std::move(r));
    }
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
    return {};
}

int SweepListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }
int SweepListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant SweepListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const Row& r = m_rows[size_t(index.row())];
    if (role == kIdRole) return r.id;
    if (role == Qt::ToolTipRole) return r.error.isEmpty() ? r.modelPath : r.modelPath + "\n" + r.error;
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case Id: return r.id;
    case Name: return r.name;
    case Model: return r.model;
    case Status: return r.status;
    case Points: return r.points;
    case BestTps: return r.bestTps > 0 ? QString::number(r.bestTps, 'f', 1) : QString("—");
    case Created: return r.created;
    default: return {};
    }
}

QVariant SweepListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* kNames[] = {QT_TR_NOOP("Sweep"),  QT_TR_NOOP("Name"),   QT_TR_NOOP("Model"),         QT_TR_NOOP("Status"),
                                   QT_TR_NOOP("Points"), QT_TR_NOOP("Best output tok/s"), QT_TR_NOOP("Created (UTC)")};
    return section >= 0 && section < ColumnCount ? tr(kNames[section]) : QVariant();
}

}  // namespace verdict::ui
