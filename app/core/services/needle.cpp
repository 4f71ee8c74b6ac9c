#include "core/services/needle.h"

#include "core/store/store.h"
#include "core/suite/conversation_suite.h"
#include "core/suite/needle_suite.h"
#include "util/quote.h"

#include <verdict/engine/text_tokenizer.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace verdict::core {

namespace {

ServiceError bad(std::string m) { return ServiceError{ServiceFailure::BadInput, std::move(m)}; }

// The filler text and the token counter a request names, into `o` (the tokenizer is kept in *tok).
std::optional<ServiceError> loadFill(const NeedleRequest& r, NeedleOptions& o, std::unique_ptr<TextTokenizer>* tok) {
    if (r.lengths.empty()) return bad("--lengths is required (e.g. --lengths 1k,4k,16k)");
    auto lengths = parseNeedleLengths(r.lengths);
    if (!lengths) return bad(lengths.error().message);
    o.lengths = *lengths;
    o.seed = r.seed;
    if (!r.haystackPath.empty()) {
        std::ifstream f(r.haystackPath, std::ios::binary);
        if (!f) return bad("--haystack " + util::quoteFileText(r.haystackPath) + ": cannot open");
        f.seekg(0, std::ios::end);
        if (f.tellg() > std::streamoff(64) << 20) return bad("--haystack " + util::quoteFileText(r.haystackPath) + ": larger than 64 MiB");
        f.seekg(0);
        std::stringstream ss;
        ss << f.rdbuf();
        o.haystack = ss.str();
        o.haystackName = r.haystackPath;
    }
    if (!r.tokenizerPath.empty()) {
        auto t = TextTokenizer::open(r.tokenizerPath);
        if (!t) return bad("--tokenizer: " + t.error().message);
        *tok = std::move(*t);
        TextTokenizer* raw = tok->get();
        o.countTokens = [raw](std::string_view s) { return raw->encode(s, false, false).size(); };
    }
    return std::nullopt;
}

ServiceResult<NeedleMade> store(Database& db, SuiteRecord meta, const std::vector<SuiteItem>& items, const NeedleOptions& o,
                                bool counted) {
    auto saved = SuiteRepository(db).save(meta, items);
    if (!saved) return ServiceError{ServiceFailure::Storage, saved.error().message};
    NeedleMade m;
    m.saved = std::move(*saved);
    m.nItems = items.size();
    m.lengths = o.lengths;
    m.depths = o.depths;
    m.counted = counted;
    m.haystack = o.haystackName;
    m.minPromptTokens = SIZE_MAX;
    for (const auto& it : items) {
        const size_t t = it.metadata["needle"]["prompt_tokens"].get<size_t>();
        m.minPromptTokens = std::min(m.minPromptTokens, t);
        m.maxPromptTokens = std::max(m.maxPromptTokens, t);
    }
    return m;
}

}  // namespace

ServiceResult<NeedleMade> makeNeedleSuiteInStore(Database& db, const NeedleRequest& r) {
    NeedleOptions o;
    std::unique_ptr<TextTokenizer> tok;
    if (auto e = loadFill(r, o, &tok)) return *e;
    auto depths = parseNeedleDepths(r.depths);
    if (!depths) return bad(depths.error().message);
    o.depths = *depths;
    if (r.needlesPerCell < 1 || r.needlesPerCell > 100) return bad("--needles must be 1..100");
    o.needlesPerCell = r.needlesPerCell;
    auto items = makeNeedleSuite(o);
    if (!items) return bad(items.error().message);
    SuiteRecord meta;
    meta.name = r.name.empty() ? "needle" : r.name;
    meta.shape = "needle";
    meta.sourcePath = o.haystackName;
    return store(db, meta, *items, o, tok != nullptr);
}

ServiceResult<NeedleMade> makePaddedSuiteInStore(Database& db, const PaddedRequest& r) {
    if (r.suite.empty()) return bad("--suite is required: the stored suite to pad");
    NeedleOptions o;
    std::unique_ptr<TextTokenizer> tok;
    if (auto e = loadFill(r.fill, o, &tok)) return *e;
    SuiteRepository suites(db);
    auto found = suites.find(r.suite);
    if (!found) return ServiceError{ServiceFailure::Storage, found.error().message};
    if (!*found) return bad("no suite '" + r.suite + "' (see verdict suite list)");
    auto items = suites.items((*found)->id, r.limit ? *r.limit : -1);
    if (!items) return ServiceError{ServiceFailure::Storage, items.error().message};
    auto padded = makePaddedSuite(*items, o);
    if (!padded) return bad(padded.error().message);
    SuiteRecord meta;
    meta.name = !r.name.empty() ? r.name : (*found)->name + "@" + r.fill.lengths;
    meta.shape = (*found)->shape;  // the prompts keep their layout (gsm8k, mmlu ...)
    meta.sourcePath = o.haystackName;
    o.depths = {100};
    return store(db, meta, *padded, o, tok != nullptr);
}

ServiceResult<ConversationMade> makeConversationSuiteInStore(Database& db, const ConversationRequest& r) {
    auto lengths = parseConversationLengths(r.lengths);
    if (!lengths) return bad(lengths.error().message);
    ConversationOptions o;
    o.lengths = *lengths;
    o.conversations = r.conversations;
    o.seed = r.seed;
    auto items = makeConversationSuite(o);
    if (!items) return bad(items.error().message);
    SuiteRecord meta;
    meta.name = r.name.empty() ? "conversations" : r.name;
    meta.shape = "conversation";
    meta.sourcePath = "generated";
    auto saved = SuiteRepository(db).save(meta, *items);
    if (!saved) return ServiceError{ServiceFailure::Storage, saved.error().message};
    return ConversationMade{std::move(*saved), items->size(), o.lengths};
}

}  // namespace verdict::core
