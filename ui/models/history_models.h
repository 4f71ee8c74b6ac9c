// The stored runs and sweeps as tables (History screen), read from the database on reload().
// Both are a RecordTableModel: rows of display values with an id, filled by their reload().
#pragma once

#include "core/store/database.h"

#include <QAbstractTableModel>
#include <QStringList>
#include <QVariantList>

#include <vector>

namespace verdict::ui {

class RecordTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kIdRole = Qt::UserRole + 1;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

protected:
    struct Row {
        qint64 id = 0;
        QVariantList cells;  // one display value per column (numbers stay numbers: they sort as numbers)
        QString toolTip;
    };
    RecordTableModel(QStringList headers, QObject* parent);
    void setRows(std::vector<Row> rows);

private:
    QStringList m_headers;
    std::vector<Row> m_rows;
};

class RunListModel : public RecordTableModel {
    Q_OBJECT
public:
    enum Column { Id, Model, Suite, Status, Items, Accuracy, Started, ColumnCount };
    explicit RunListModel(QObject* parent = nullptr);
    // Newest first; deleted runs are not listed. Errors name the database.
    Result<void> reload(core::Database& db);
};

class SweepListModel : public RecordTableModel {
    Q_OBJECT
public:
    enum Column { Id, Name, Model, Status, Points, BestTps, Created, ColumnCount };
    explicit SweepListModel(QObject* parent = nullptr);
    Result<void> reload(core::Database& db);
};

}  // namespace verdict::ui
