#include "models/item_comparison_model.h"

#include <QBrush>
#include <QColor>
#include <QSet>

#include <algorithm>

namespace verdict::ui {

namespace {

QString referenceOf(const core::SuiteItem& item) {
    if (item.gold && *item.gold >= 0 && static_cast<size_t>(*item.gold) < item.choices.size())
        return QString("%1) %2").arg(QChar('A' + *item.gold)).arg(QString::fromStdString(item.choices[size_t(*item.gold)]));
    QStringList refs;
    for (const auto& r : item.references) refs << QString::fromStdString(r);
    return refs.join(" | ");
}

QString promptOf(const core::SuiteItem& item) {
    if (!item.prompt.empty()) return QString::fromStdString(item.prompt);
    for (auto it = item.messages.rbegin(); it != item.messages.rend(); ++it)
        if (it->role == "user") return QString::fromStdString(it->content);
    return {};
}

QString mark(const std::optional<bool>& c, const QString& error) {
    if (!error.isEmpty()) return QObject::tr("error");
    if (!c) return QObject::tr("—");
    return *c ? QObject::tr("✔") : QObject::tr("✘");
}

}  // namespace

ItemComparisonModel::ItemComparisonModel(QObject* parent) : QAbstractTableModel(parent) {}

void ItemComparisonModel::setRuns(const std::vector<core::SuiteItem>& suite, const std::vector<core::RunItemRecord>& a,
                                  const std::vector<core::RunItemRecord>& b, const QString& labelA, const QString& labelB) {
    beginResetModel();
    m_rows.clear();
    m_labelA = labelA;
    m_labelB = labelB;
    std::map<int64_t, Row> rows;
    auto rowFor = [&](int64_t idx) -> Row& {
        Row& r = rows[idx];
        r.index = idx;
        if (idx >= 0 && static_cast<size_t>(idx) < suite.size()) {
            const auto& item = suite[static_cast<size_t>(idx)];
            r.category = QString::fromStdString(item.category);
            r.prompt = promptOf(item);
            r.reference = referenceOf(item);
        }
        return r;
    };
    for (const auto& it : a) {
        Row& r = rowFor(it.itemIdx);
        r.answerA = QString::fromStdString(it.output);
        r.correctA = it.correct;
        r.errorA = QString::fromStdString(it.error);
        if (r.category.isEmpty()) r.category = QString::fromStdString(it.category);
    }
    for (const auto& it : b) {
        Row& r = rowFor(it.itemIdx);
        r.answerB = QString::fromStdString(it.output);
        r.correctB = it.correct;
        r.errorB = QString::fromStdString(it.error);
        if (r.category.isEmpty()) r.category = QString::fromStdString(it.category);
    }
    for (auto& [idx, r] : rows) m_rows.push_back(std::move(r));
    endResetModel();
}

void ItemComparisonModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

QStringList ItemComparisonModel::categories() const {
    QSet<QString> set;
    for (const Row& r : m_rows)
        if (!r.category.isEmpty()) set.insert(r.category);
    QStringList list(set.begin(), set.end());
    list.sort();
    return list;
}

int ItemComparisonModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ItemComparisonModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ItemComparisonModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
    const Row& r = m_rows[static_cast<size_t>(index.row())];
    const bool wrongA = !r.errorA.isEmpty() || (r.correctA && !*r.correctA);
    const bool wrongB = !r.errorB.isEmpty() || (r.correctB && !*r.correctB);
    switch (role) {
    case kCategoryRole: return r.category;
    case kDisagreeRole: return r.correctA.has_value() && r.correctB.has_value() && *r.correctA != *r.correctB;
    case kAnyWrongRole: return wrongA || wrongB;
    case Qt::ToolTipRole:
        switch (index.column()) {
        case Prompt: return r.prompt;
        case Reference: return r.reference;
        case AnswerA: return r.errorA.isEmpty() ? r.answerA : r.errorA;
        case AnswerB: return r.errorB.isEmpty() ? r.answerB : r.errorB;
        default: return {};
        }
    case Qt::ForegroundRole:
        if (index.column() == CorrectA && r.correctA) return QBrush(*r.correctA ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
        if (index.column() == CorrectB && r.correctB) return QBrush(*r.correctB ? QColor(0x2e, 0x7d, 0x32) : QColor(0xc6, 0x28, 0x28));
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == Index || index.column() == CorrectA || index.column() == CorrectB)
            return QVariant::fromValue(Qt::AlignCenter);
        return {};
    case Qt::DisplayRole: {
        // One line per cell: long prompts and answers are elided by the view, whole in the tooltip.
        auto oneLine = [](QString s) { return s.replace('\n', QStringLiteral(" ⏎ ")).left(400); };
        switch (index.column()) {
        case Index: return QVariant::fromValue(r.index);
        case Category: return r.category;
        case Prompt: return oneLine(r.prompt);
        case Reference: return oneLine(r.reference);
        case AnswerA: return oneLine(r.errorA.isEmpty() ? r.answerA : r.errorA);
        case CorrectA: return mark(r.correctA, r.errorA);
        case AnswerB: return oneLine(r.errorB.isEmpty() ? r.answerB : r.errorB);
        case CorrectB: return mark(r.correctB, r.errorB);
        default: return {};
        }
    }
    default: return {};
    }
}

QVariant ItemComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case Index: return tr("#");
    case Category: return tr("Category");
    case Prompt: return tr("Prompt");
    case Reference: return tr("Reference");
    case AnswerA: return tr("%1 answered").arg(m_labelA);
    case CorrectA: return m_labelA;
    case AnswerB: return tr("%1 answered").arg(m_labelB);
    case CorrectB: return m_labelB;
    default: return {};
    }
}

void ItemFilterProxy::setCategory(const QString& category) {
    m_category = category;
    invalidateFilter();
}

void ItemFilterProxy::setDisagreementsOnly(bool on) {
    m_disagreements = on;
    invalidateFilter();
}

void ItemFilterProxy::setWrongOnly(bool on) {
    m_wrong = on;
    invalidateFilter();
}

bool ItemFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex i = sourceModel()->index(sourceRow, 0, sourceParent);
    if (!m_category.isEmpty() && i.data(ItemComparisonModel::kCategoryRole).toString() != m_category) return false;
    if (m_disagreements && !i.data(ItemComparisonModel::kDisagreeRole).toBool()) return false;
    if (m_wrong && !i.data(ItemComparisonModel::kAnyWrongRole).toBool()) return false;
    return true;
}

}  // namespace verdict::ui
