#include "models/model_list_model.h"

#include "core/models/model_card_json.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>

namespace verdict::ui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
}  // namespace

ModelListModel::ModelListModel(QObject* parent) : QAbstractTableModel(parent) {}

int ModelListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_entries.size());
}

int ModelListModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ModelListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const ModelEntry& e = m_entries[static_cast<size_t>(index.row())];
    if (role == kRefRole) return e.ref;
    if (role == Qt::ToolTipRole) {
        if (index.column() == Fit && !e.fitReason.isEmpty()) return e.fitReason;
        return e.error.isEmpty() ? e.ref : e.ref + "\n" + e.error;
    }
    if (role == Qt::ForegroundRole && index.column() == Fit) {
        if (e.fit == QLatin1String("fits")) return QBrush(QColor(0x2e, 0x7d, 0x32));
        if (e.fit == QLatin1String("tight")) return QBrush(QColor(0xb2, 0x6a, 0x00));
        if (!e.fit.isEmpty()) return QBrush(QColor(0xc6, 0x28, 0x28));
        return {};
    }
    if (role == Qt::TextAlignmentRole && (index.column() == Params || index.column() == Size || index.column() == Context))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    const auto& c = e.card;
    switch (index.column()) {
    case Name: return e.name;
    case Source: return e.source;
    case Arch:
        if (e.isEndpoint()) return tr("endpoint");
        return c ? QString::fromStdString(c->arch) : tr("unreadable");
    case Params:
        if (!c) return {};
        if (c->nParamsActive > 0 && c->nParamsActive < c->nParams)
            return tr("%1 (%2 active)").arg(qs(core::formatCount(c->nParams)), qs(core::formatCount(c->nParamsActive)));
        return qs(core::formatCount(c->nParams));
    case Quant: {
        if (!c) return {};
        std::string main;
        uint64_t best = 0;
        for (const auto& [type, bytes] : c->tensorTypeBytes)
            if (bytes > best) best = bytes, main = type;
        return QString::fromStdString(main) + QString(" · %1 bpw").arg(c->bitsPerWeight, 0, 'f', 2);
    }
    case Size: return c ? QVariant(qs(core::formatBytes(c->fileBytes))) : QVariant();
    case Context: return c ? QVariant(QString::number(c->nCtxTrain)) : QVariant();
    case Fit: return e.fit;
    default: return {};
    }
}

QVariant ModelListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Name: return tr("Model");
    case Source: return tr("Source");
    case Arch: return tr("Architecture");
    case Params: return tr("Parameters");
    case Quant: return tr("Quantization");
    case Size: return tr("File size");
    case Context: return tr("Context");
    case Fit: return tr("Fits?");
    default: return {};
    }
}

const ModelEntry* ModelListModel::find(const QString& ref) const {
    const int row = rowOf(ref);
    return row < 0 ? nullptr : &m_entries[static_cast<size_t>(row)];
}

int ModelListModel::rowOf(const QString& ref) const {
    for (size_t i = 0; i < m_entries.size(); ++i)
        if (m_entries[i].ref == ref) return static_cast<int>(i);
    return -1;
}

void ModelListModel::upsert(ModelEntry entry) {
    const int row = rowOf(entry.ref);
    if (row >= 0) {
        m_entries[static_cast<size_t>(row)] = std::move(entry);
        emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
        return;
    }
    const int n = rowCount();
    beginInsertRows({}, n, n);
    m_entries.push_back(std::move(entry));
    endInsertRows();
}

void ModelListModel::removeRow(int row) {
    if (row < 0 || row >= rowCount()) return;
    beginRemoveRows({}, row, row);
    m_entries.erase(m_entries.begin() + row);
    endRemoveRows();
}

void ModelListModel::updateFit(int row, const QString& fit, const QString& reason) {
    if (row < 0 || row >= rowCount()) return;
    auto& e = m_entries[static_cast<size_t>(row)];
    e.fit = fit;
    e.fitReason = reason;
    emit dataChanged(index(row, Fit), index(row, Fit));
}

}  // namespace verdict::ui
