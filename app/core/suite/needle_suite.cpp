#include "core/suite/needle_suite.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <random>

namespace verdict::core {

namespace {

constexpr const char* kIntro = "Below is a long document. Read it, then answer the question after it.\n\n";

// The built-in filler: plain sentences drawn from small word lists (no fact in them can answer a
// needle's question). Sentence i depends only on the seed and i.
class Filler {
public:
    Filler(const std::string& text, uint64_t seed) : m_seed(seed) {
        size_t start = 0;
        auto take = [&](size_t end) {
            std::string s = text.substr(start, end - start);
            const size_t a = s.find_first_not_of(" \t\r\n");
            const size_t b = s.find_last_not_of(" \t\r\n");
            if (a != std::string::npos) m_sentences.push_back(s.substr(a, b - a + 1));
            start = end;
        };
        for (size_t i = 0; i < text.size(); ++i) {
            const char c = text[i];
            if (c == '\n' || ((c == '.' || c == '!' || c == '?') && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')))
                take(i + 1);
        }
        take(text.size());
    }
    bool empty(bool builtIn) const { return !builtIn && m_sentences.empty(); }
    std::string sentence(size_t i, bool builtIn) const {
        if (!builtIn) return m_sentences[i % m_sentences.size()];
        static const char* kAdj[] = {"quiet", "old", "narrow", "bright", "wooden", "distant", "green", "small",
                                     "heavy", "patient", "early", "warm"};
        static const char* kNoun[] = {"river", "market", "garden", "bridge", "library", "village", "harbour", "orchard",
                                      "workshop", "meadow", "station", "kitchen"};
        static const char* kVerb[] = {"stayed open", "looked calm", "filled with people", "grew busy", "was repainted",
                                      "smelled of bread", "was quiet", "echoed softly", "felt cold", "shone in the sun"};
        static const char* kWhen[] = {"in the morning", "after the rain", "every spring", "on market days", "at dusk",
                                      "during the festival", "before noon", "all winter", "late at night", "in autumn"};
        std::mt19937_64 r(m_seed * 0x9E3779B97F4A7C15ull + i);
        auto pick = [&r](const auto& list) { return list[r() % (sizeof(list) / sizeof(list[0]))]; };
        std::string s = std::string("The ") + pick(kAdj) + " " + pick(kNoun) + " " + pick(kVerb) + " " + pick(kWhen) + ".";
        return s;
    }
    size_t count() const { return m_sentences.size(); }

private:
    uint64_t m_seed;
    std::vector<std::string> m_sentences;
};

std::string formatLength(int64_t n) { return std::to_string(n); }

std::string formatDepth(double d) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", d);
    return b;
}

// head + filler sentences (with `insert` among them at `depth` percent) + tail, as close to
// `length` tokens as the sentences allow without going over. `fixed`: the tokens of head, insert
// and tail. Sets *count to the prompt's tokens and *wrapped when a haystack had to be repeated.
template <class Tokens>
std::string fillToLength(const std::string& head, const std::string& insert, const std::string& tail, double depth, size_t length,
                         size_t fixed, const Filler& filler, bool builtIn, const Tokens& tokens, size_t* count, bool* wrapped) {
    // Sentences until the budget is spent (their token counts add up closely when each keeps its
    // leading space), then the exact count of the whole prompt trims the rest.
    std::vector<std::string> hay;
    size_t used = fixed;
    for (size_t i = 0;; ++i) {
        if (!builtIn && i == filler.count()) *wrapped = true;
        std::string s = filler.sentence(i, builtIn);
        const size_t t = tokens(" " + s);
        if (used + t > length) break;
        used += t;
        hay.push_back(std::move(s));
        if (hay.size() > length) break;  // sentences of no token: cannot happen, bounded anyway
    }
    auto build = [&] {
        const size_t at = static_cast<size_t>(std::llround(depth / 100.0 * double(hay.size())));
        std::string doc;
        for (size_t i = 0; i <= hay.size(); ++i) {
            if (i == at && !insert.empty()) doc += (doc.empty() ? "" : " ") + insert;
            if (i < hay.size()) doc += (doc.empty() ? "" : " ") + hay[i];
        }
        return head + doc + tail;
    };
    // Then the exact count of the whole prompt: fill up (sentence counts with their own leading
    // space can over-estimate, e.g. SentencePiece's space prefix) and trim.
    std::string prompt = build();
    *count = tokens(prompt);
    for (int round = 0; round < 8; ++round) {
        if (*count > length) {
            const size_t drop = std::max<size_t>(1, (*count - length) / 8);
            hay.resize(hay.size() - std::min(drop, hay.size()));
        } else {
            const double perSentence = hay.empty() ? 8.0 : std::max(1.0, double(*count - std::min(*count, fixed)) / double(hay.size()));
            const size_t add = static_cast<size_t>(0.9 * double(length - *count) / perSentence);
            if (add == 0) break;
            for (size_t j = 0; j < add; ++j) {
                if (!builtIn && hay.size() >= filler.count()) *wrapped = true;
                hay.push_back(filler.sentence(hay.size(), builtIn));
            }
        }
        prompt = build();
        *count = tokens(prompt);
    }
    while (*count > length && !hay.empty()) {
        hay.pop_back();
        prompt = build();
        *count = tokens(prompt);
    }
    return prompt;
}

}  // namespace

Result<std::vector<int64_t>> parseNeedleLengths(std::string_view list) {
    std::vector<int64_t> out;
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        std::string_view e = list.substr(pos, comma - pos);
        int64_t mult = 1;
        if (!e.empty() && (e.back() == 'k' || e.back() == 'K')) {
            mult = 1024;
            e.remove_suffix(1);
        }
        int64_t v = 0;
        auto [end, ec] = std::from_chars(e.data(), e.data() + e.size(), v);
        if (e.empty() || ec != std::errc() || end != e.data() + e.size() || v <= 0 || v > (int64_t(1) << 30) / mult)
            return Error{"--lengths: '" + std::string(list.substr(pos, comma - pos)) + "' is not a length (e.g. 1k,4096,128k)"};
        out.push_back(v * mult);
        pos = comma + 1;
    }
    return out;
}

Result<std::vector<double>> parseNeedleDepths(std::string_view list) {
    std::vector<double> out;
    size_t pos = 0;
    while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        const std::string e(list.substr(pos, comma - pos));
        char* end = nullptr;
        const double v = e.empty() ? -1 : std::strtod(e.c_str(), &end);
        if (e.empty() || end != e.c_str() + e.size() || !(v >= 0 && v <= 100))
            return Error{"--depths: '" + e + "' is not a percentage from 0 to 100"};
        out.push_back(v);
        pos = comma + 1;
    }
    return out;
}

Result<std::vector<SuiteItem>> makeNeedleSuite(const NeedleOptions& o) {
    if (o.lengths.empty()) return Error{"needle suite: no lengths"};
    if (o.depths.empty()) return Error{"needle suite: no depths"};
    if (o.needlesPerCell < 1 || o.needlesPerCell > 100) return Error{"needle suite: needles per cell must be 1..100"};
    for (double d : o.depths)
        if (!(d >= 0 && d <= 100)) return Error{"needle suite: depth " + formatDepth(d) + " is outside 0..100"};
    const bool builtIn = o.haystack.empty();
    const Filler filler(o.haystack, o.seed);
    if (filler.empty(builtIn)) return Error{"needle suite: the haystack " + o.haystackName + " has no sentence"};
    const bool estimate = !o.countTokens;
    auto tokens = [&](std::string_view s) -> size_t { return estimate ? (s.size() + 3) / 4 : o.countTokens(s); };

    static const char* kColor[] = {"amber", "crimson", "silver", "violet", "emerald", "golden", "indigo", "scarlet"};
    static const char* kAnimal[] = {"heron", "lynx", "otter", "falcon", "badger", "salmon", "marten", "beetle"};
    std::mt19937_64 rng(o.seed);

    std::vector<SuiteItem> items;
    for (int64_t length : o.lengths) {
        if (length < 64) return Error{"needle suite: length " + formatLength(length) + " is under 64 tokens"};
        for (double depth : o.depths) {
            for (int k = 0; k < o.needlesPerCell; ++k) {
                const std::string subject = std::string("the ") + kColor[rng() % 8] + " " + kAnimal[rng() % 8];
                const std::string code = std::to_string(100000 + rng() % 900000);
                const std::string needle = "The secret code of " + subject + " is " + code + ".";
                const std::string question = "\n\nQuestion: What is the secret code of " + subject +
                                             "? Answer with the number only.";
                const size_t fixed = tokens(kIntro) + tokens(" " + needle) + tokens(question);
                if (fixed + 8 > size_t(length))
                    return Error{"needle suite: length " + formatLength(length) + " cannot hold the needle and the question (" +
                                 std::to_string(fixed) + " tokens)"};
                bool wrapped = false;
                size_t count = 0;
                std::string prompt = fillToLength(kIntro, needle, question, depth, size_t(length), fixed, filler, builtIn, tokens,
                                                  &count, &wrapped);
                SuiteItem it;
                it.id = "needle-" + formatLength(length) + "-" + formatDepth(depth) + "-" + std::to_string(k + 1);
                it.category = formatLength(length) + " tokens @ " + formatDepth(depth) + "%";
                it.prompt = std::move(prompt);
                it.references = {code};
                it.scorers = {{"contains", nlohmann::json::object()}};
                it.metadata["needle"] = {{"context_tokens", length},
                                         {"depth_pct", depth},
                                         {"prompt_tokens", count},
                                         {"token_count", estimate ? "estimate" : "tokenizer"},
                                         {"haystack", o.haystackName},
                                         {"haystack_repeated", wrapped}};
                items.push_back(std::move(it));
            }
        }
    }
    return items;
}

Result<std::vector<SuiteItem>> makePaddedSuite(const std::vector<SuiteItem>& items, const NeedleOptions& o) {
    static const std::string kPadIntro =
        "Below is a long document unrelated to the task after it. Do not use it; do the task.\n\n";
    if (o.lengths.empty()) return Error{"padded suite: no lengths"};
    if (items.empty()) return Error{"padded suite: the suite has no items"};
    const bool builtIn = o.haystack.empty();
    const Filler filler(o.haystack, o.seed);
    if (filler.empty(builtIn)) return Error{"padded suite: the haystack " + o.haystackName + " has no sentence"};
    const bool estimate = !o.countTokens;
    auto tokens = [&](std::string_view s) -> size_t { return estimate ? (s.size() + 3) / 4 : o.countTokens(s); };
    for (const SuiteItem& it : items)
        if (!it.messages.empty() || it.prompt.empty())
            return Error{"padded suite: item '" + it.id + "' is a conversation (messages), which cannot be padded; "
                         "only single-turn items can"};

    std::vector<SuiteItem> out;
    for (int64_t length : o.lengths) {
        if (length < 64) return Error{"padded suite: length " + formatLength(length) + " is under 64 tokens"};
        for (const SuiteItem& item : items) {
            const std::string tail = "\n\n" + item.prompt;
            const size_t fixed = tokens(kPadIntro) + tokens(tail);
            if (fixed + 8 > size_t(length))
                return Error{"padded suite: length " + formatLength(length) + " cannot hold item '" + item.id + "' (" +
                             std::to_string(fixed) + " tokens without any filler)"};
            bool wrapped = false;
            size_t count = 0;
            SuiteItem it = item;
            it.prompt = fillToLength(kPadIntro, "", tail, 100, size_t(length), fixed, filler, builtIn, tokens, &count, &wrapped);
            it.id = item.id + "@" + formatLength(length);
            it.category = formatLength(length) + " tokens";
            it.metadata["padded"] = {{"item", item.id}, {"category", item.category}};
            it.metadata["needle"] = {{"context_tokens", length},
                                     {"depth_pct", 100.0},
                                     {"prompt_tokens", count},
                                     {"token_count", estimate ? "estimate" : "tokenizer"},
                                     {"haystack", o.haystackName},
                                     {"haystack_repeated", wrapped}};
            out.push_back(std::move(it));
        }
    }
    return out;
}

}  // namespace verdict::core
