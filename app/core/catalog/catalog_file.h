// What the JSON catalogs (the hardware catalog, app/core/tco/hardware_catalog.h, and the provider
// presets, app/core/endpoints/provider_catalog.h) share: reading the file, the document's top level,
// entry ids, figures with source and as_of, and merging a user file onto the built-in entries by id.
// Every error is "ORIGIN: JSON-PATH: what is wrong"; each catalog passes the words that differ.
#pragma once

#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace verdict::core::catalog {

// How strict parsing is: the built-in catalog needs every field in full form; a user file may give
// partial entries and bare numbers.
struct ParseMode {
    bool user = false;
    std::string origin;    // file path or the built-in catalog's name (in messages, and as user source)
    std::string fileDate;  // as_of of bare numbers in a user file
};

// "ORIGIN: PATH: WHAT".
Error fieldError(const ParseMode& mode, const std::string& path, const std::string& what);

bool isDate(const std::string& s);     // "YYYY", "YYYY-MM" or "YYYY-MM-DD"
bool isId(const std::string& s);       // lower-case letters, digits, '-', '.', '_'; not starting with a sign
bool isHttpUrl(const std::string& s);  // starts with https:// or http://

std::string todayUtc();                            // "YYYY-MM-DD"
std::string fileDateUtc(const std::string& path);  // the file's modification date; today when stat fails

// The whole file. Errors: "PATH: cannot open the KIND file", "PATH: read error".
Result<std::string> readFile(const std::string& path, const std::string& kind);
// Errors: "ORIGIN: not valid JSON at byte N: ...".
Result<nlohmann::json> parseJsonText(const std::string& text, const std::string& origin);

// "$XDG_CONFIG_HOME/verdict/FILE" or "$HOME/.config/verdict/FILE"; "" when neither is set.
std::string defaultUserConfigPath(const std::string& fileName);
// The user file to merge: `userFile` when given, else `defaultPath` when that file exists, else "".
std::string chooseUserFile(const std::optional<std::string>& userFile, const std::string& defaultPath);

// Checks {"schema_version": N, "LISTKEY": [...], "description": ...} ("$..." keys allowed) and
// returns the LISTKEY array. `arrayOf` names its items in the error ("entries", "presets").
Result<const nlohmann::json*> documentEntries(const nlohmann::json& doc, const ParseMode& mode,
                                              const std::string& listKey, int schemaVersion,
                                              const std::string& arrayOf);

// The "id" of an entry object at `path`, checked with isId.
Result<std::string> entryId(const nlohmann::json& e, const std::string& path, const ParseMode& mode);
// e[key] as a string (the key must be present).
Result<std::string> stringAt(const nlohmann::json& e, const char* key, const std::string& path, const ParseMode& mode);

// A number with where it came from (HardwareFigure and PriceFigure have this shape).
struct SourcedFigure {
    std::optional<double> value;
    std::string source;
    std::string asOf;
    std::string url;
    std::string note;
};

// The words and limits that differ between the catalogs' figures.
struct FigureRules {
    bool allowZero = false;         // value >= 0 (prices) rather than > 0
    bool allowRuntimeDate = false;  // as_of may be "runtime" (filled when the catalog loads)
    const char* bareNumberError;    // a bad bare number in a user file
    const char* valueError;         // a bad "value"
    const char* missingValue;       // no "value"
    const char* missingSource;      // no "source" in the built-in catalog
    const char* missingAsOf;        // no "as_of" in the built-in catalog
    const char* urlNotString;       // "url" is not a string
    const char* urlNotHttp;         // "url" does not start with https:// or http://
};

// FIGURE = {"value": number | null, "source", "as_of", "url"?, "note"?}, or in a user file a bare
// number (source "user file ORIGIN", as_of the file date).
Result<SourcedFigure> parseSourcedFigure(const nlohmann::json& j, const std::string& path, const ParseMode& mode,
                                         const FigureRules& rules);

template <class Figure>
Result<Figure> parseFigureAs(const nlohmann::json& j, const std::string& path, const ParseMode& mode,
                             const FigureRules& rules) {
    auto f = parseSourcedFigure(j, path, mode, rules);
    if (!f) return f.error();
    return Figure{f->value, std::move(f->source), std::move(f->asOf), std::move(f->url), std::move(f->note)};
}

// {"value": number | null, "source", "as_of", "url"? , "note"?} (the empty url and note left out).
template <class Figure>
nlohmann::json figureJson(const Figure& f) {
    using nlohmann::json;
    json j = {{"value", f.value ? json(*f.value) : json(nullptr)}, {"source", f.source}, {"as_of", f.asOf}};
    if (!f.url.empty()) j["url"] = f.url;
    if (!f.note.empty()) j["note"] = f.note;
    return j;
}

// Applies the entries of `list` ("$.LISTKEY[i]") onto `entries` by id: a known id gets
// apply(e, path, /*complete=*/false, entry), a new one apply(..., true, entry) and is appended. In a
// user file both get `userOrigin`. Duplicate ids in the list are an error. Stops at the first error,
// leaving `entries` part-done: callers work on a copy.
template <class Entry, class Origin, class Apply>
Result<void> mergeEntries(const nlohmann::json& list, const std::string& listKey, const ParseMode& mode,
                          Origin userOrigin, std::vector<Entry>& entries, Apply apply) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json& e = list[i];
        const std::string path = "$." + listKey + "[" + std::to_string(i) + "]";
        auto id = entryId(e, path, mode);
        if (!id) return id.error();
        if (!seen.insert(*id).second)
            return fieldError(mode, path + ".id", "duplicate id '" + *id + "'" + (mode.user ? " in this file" : ""));
        Entry* known = nullptr;
        for (Entry& k : entries)
            if (k.id == *id) {
                known = &k;
                break;
            }
        if (known) {
            if (auto r = apply(e, path, false, *known); !r) return r.error();
            if (mode.user) known->origin = userOrigin;
        } else {
            Entry entry;
            entry.id = *id;
            if (mode.user) entry.origin = userOrigin;
            if (auto r = apply(e, path, true, entry); !r) return r.error();
            entries.push_back(std::move(entry));
        }
    }
    return okResult();
}

template <class Entry>
const Entry* findById(const std::vector<Entry>& entries, const std::string& id) {
    for (const Entry& e : entries)
        if (e.id == id) return &e;
    return nullptr;
}

template <class Entry>
std::vector<std::string> idsOf(const std::vector<Entry>& entries) {
    std::vector<std::string> out;
    out.reserve(entries.size());
    for (const Entry& e : entries) out.push_back(e.id);
    return out;
}

// "a, b, c".
std::string joinIds(const std::vector<std::string>& ids);

}  // namespace verdict::core::catalog
