// Two runs of one suite, item by item: the prompt, the reference, each model's answer and
// whether it was right. ItemFilterProxy narrows it to a category, to the items where the two
// disagree, or to the items either got wrong.
#pragma once

#include "core/store/run_record.h"
#include "core/suite/suite_item.h"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

#include <map>
#include <vector>

namespace verdict::ui {

class ItemComparisonModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Index, Category, Prompt, Reference, AnswerA, CorrectA, AnswerB, CorrectB, ColumnCount };
    static constexpr int kCategoryRole = Qt::UserRole + 1;
    static constexpr int kDisagreeRole = Qt::UserRole + 2;  // one right, the other wrong
    static constexpr int kAnyWrongRole = Qt::UserRole + 3;  // at least one wrong (or failed)

    explicit ItemComparisonModel(QObject* parent = nullptr);

    // Rows are the suite's items stored in either run, by item index.
    void setRuns(const std::vector<core::SuiteItem>& suite, const std::vector<core::RunItemRecord>& a,
                 const std::vector<core::RunItemRecord>& b, const QString& labelA, const QString& labelB);
    void clear();
    QStringList categories() const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        int64_t index = 0;
        QString category, prompt, reference;
        QString answerA, answerB;
        std::optional<bool> correctA, correctB;  // nullopt: not stored / unscored
        QString errorA, errorB;
    };
    std::vector<Row> m_rows;
    QString m_labelA = "A", m_labelB = "B";
};

class ItemFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setCategory(const QString& category);  // "" = all
    void setDisagreementsOnly(bool on);
    void setWrongOnly(bool on);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_category;
    bool m_disagreements = false;
    bool m_wrong = false;
};

}  // namespace verdict::ui
