#include "core/services/needle.h"

#include "core/store/store.h"
#include "core/suite/needle_suite.h"
#include "util/quote.h"

#include <verdict/engine/text_tokenizer.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace verdict::core {

ServiceResult<NeedleMade> makeNeedleSuiteInStore(Database& db, const NeedleRequest& r) {
    auto bad = [](std::string m) { return ServiceError{ServiceFailure::BadInput, std::move(m)}; };
    if (r.lengths.empty()) return bad("--lengths is required (e.g. --lengths 1k,4k,16k)");
    NeedleOptions o;
    auto lengths = parseNeedleLengths(r.lengths);
    if (!lengths) return bad(lengths.error().message);
    o.lengths = *lengths;
    auto depths = parseNeedleDepths(r.depths);
    if (!depths) return bad(depths.error().message);
    o.depths = *depths;
    if (r.needlesPerCell < 1 || r.needlesPerCell > 100) return bad("--needles must be 1..100");
    o.needlesPerCell = r.needlesPerCell;
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
    std::unique_ptr<TextTokenizer> tok;
    if (!r.tokenizerPath.empty()) {
        auto t = TextTokenizer::open(r.tokenizerPath);
        if (!t) return bad("--tokenizer: " + t.error().message);
        tok = std::move(*t);
        o.countTokens = [&tok](std::string_view s) { return tok->encode(s, false, false).size(); };
    }
    auto items = makeNeedleSuite(o);
    if (!items) return bad(items.error().message);
    SuiteRecord meta;
    meta.name = r.name.empty() ? "needle" : r.name;
    meta.shape = "needle";
    meta.sourcePath = o.haystackName;
    auto saved = SuiteRepository(db).save(meta, *items);
    if (!saved) return ServiceError{ServiceFailure::Storage, saved.error().message};
    NeedleMade m;
    m.saved = std::move(*saved);
    m.nItems = items->size();
    m.lengths = o.lengths;
    m.depths = o.depths;
    m.counted = tok != nullptr;
    m.haystack = o.haystackName;
    m.minPromptTokens = SIZE_MAX;
    for (const auto& it : *items) {
        const size_t t = it.metadata["needle"]["prompt_tokens"].get<size_t>();
        m.minPromptTokens = std::min(m.minPromptTokens, t);
        m.maxPromptTokens = std::max(m.maxPromptTokens, t);
    }
    return m;
}

}  // namespace verdict::core
