// The stored runs and sweeps as tables (History screen), read from the database on reload().
#pragma once

#include "core/store/database.h"

#include <QAbstractTableModel>

#include <vector>

namespace verdict::ui {

class RunListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Model, Suite, Status, Items, Accuracy, Started, ColumnCount };
    static constexpr int kIdRole = Qt::UserRole + 1;
    explicit RunListModel(QObject* parent = nullptr);
    // Newest first. Errors name the database.
    Result<void> reload(core::Database& db);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        qint64 id = 0;
        QString model, modelPath, suite, status, started, error;
        qint64 stored = 0, planned = 0;
        double accuracy = -1, lo = 0, hi = 0;
    };
    std::vector<Row> m_rows;
};

class SweepListModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Id, Name, Model, Status, Points, BestTps, Created, ColumnCount };
    static constexpr int kIdRole = Qt::UserRole + 1;
    explicit SweepListModel(QObject* parent = nullptr);
    Result<void> reload(core::Database& db);
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        qint64 id = 0;
        QString name, model, modelPath, status, created, error;
        qint64 points = 0;
        double bestTps = 0;
    };
    std::vector<Row> m_rows;
};

}  // namespace verdict::ui
