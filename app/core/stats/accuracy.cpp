#include "core/stats/accuracy.h"

namespace verdict::core {
namespace {

void finish(AccuracyCell& c) {
    c.accuracy = c.n > 0 ? static_cast<double>(c.correct) / static_cast<double>(c.n) : 0.0;
    c.ci = wilsonInterval(c.correct, c.n);
}

}  // namespace

AccuracySummary summarizeAccuracy(const std::vector<ItemOutcome>& outcomes) {
    AccuracySummary s;
    s.nItems = static_cast<int64_t>(outcomes.size());
    for (const ItemOutcome& o : outcomes) {
        if (o.error) ++s.nErrors;
        if (!o.correct) {
            ++s.nUnscored;
            continue;
        }
        AccuracyCell& cat = s.byCategory[o.category];
        ++s.overall.n;
        ++cat.n;
        if (*o.correct) {
            ++s.overall.correct;
            ++cat.correct;
        }
    }
    finish(s.overall);
    for (auto& [name, cell] : s.byCategory) finish(cell);
    return s;
}

}  // namespace verdict::core
