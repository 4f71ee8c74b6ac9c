#include "core/catalog/catalog_file.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>

namespace verdict::core::catalog {

using nlohmann::json;

namespace {

std::string dateOf(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

}  // namespace

Error fieldError(const ParseMode& mode, const std::string& path, const std::string& what) {
    return Error{mode.origin + ": " + path + ": " + what};
}

bool isDate(const std::string& s) {
    static const std::regex kDate(R"(^\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?$)");
    return std::regex_match(s, kDate);
}

bool isId(const std::string& s) {
    static const std::regex kId(R"(^[a-z0-9][a-z0-9._-]*$)");
    return std::regex_match(s, kId);
}

bool isHttpUrl(const std::string& s) {
    return s.rfind("https://", 0) == 0 || s.rfind("http://", 0) == 0;
}

std::string todayUtc() {
    return dateOf(std::time(nullptr));
}

std::string fileDateUtc(const std::string& path) {
    struct stat st {};
    return dateOf(stat(path.c_str(), &st) == 0 ? st.st_mtime : std::time(nullptr));
}

Result<std::string> readFile(const std::string& path, const std::string& kind) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open the " + kind + " file"};
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return Error{path + ": read error"};
    return ss.str();
}

Result<json> parseJsonText(const std::string& text, const std::string& origin) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        return Error{origin + ": not valid JSON at byte " + std::to_string(e.byte) + ": " + e.what()};
    }
}

std::string defaultUserConfigPath(const std::string& fileName) {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/verdict/" + fileName;
    const char* home = std::getenv("HOME");
    if (home && home[0]) return std::string(home) + "/.config/verdict/" + fileName;
    return "";
}

std::string chooseUserFile(const std::optional<std::string>& userFile, const std::string& defaultPath) {
    if (userFile && !userFile->empty()) return *userFile;
    struct stat st {};
    if (!defaultPath.empty() && stat(defaultPath.c_str(), &st) == 0) return defaultPath;
    return "";
}

Result<const json*> documentEntries(const json& doc, const ParseMode& mode, const std::string& listKey,
                                    int schemaVersion, const std::string& arrayOf) {
    if (!doc.is_object())
        return fieldError(mode, "$", "must be an object {\"schema_version\": 1, \"" + listKey + "\": [...]}");
    for (const auto& [key, _] : doc.items())
        if (key != "schema_version" && key != listKey && key != "description" && key.rfind('$', 0) != 0)
            return fieldError(mode, "$." + key,
                              "unknown field (expected schema_version, " + listKey + ", description)");
    if (doc.contains("schema_version")) {
        const json& v = doc.at("schema_version");
        if (!v.is_number_integer() || v.get<int64_t>() != schemaVersion)
            return fieldError(mode, "$.schema_version",
                              "must be " + std::to_string(schemaVersion) + " (this build reads version " +
                                  std::to_string(schemaVersion) + ")");
    } else if (!mode.user) {
        return fieldError(mode, "$.schema_version", "missing");
    }
    if (!doc.contains(listKey) || !doc.at(listKey).is_array())
        return fieldError(mode, "$." + listKey, "must be an array of " + arrayOf);
    return &doc.at(listKey);
}

Result<std::string> entryId(const json& e, const std::string& path, const ParseMode& mode) {
    if (!e.is_object()) return fieldError(mode, path, "must be an object");
    if (!e.contains("id") || !e.at("id").is_string()) return fieldError(mode, path + ".id", "missing or not a string");
    const std::string id = e.at("id").get<std::string>();
    if (!isId(id))
        return fieldError(mode, path + ".id", "'" + id + "' must be lower-case letters, digits, '-', '.', '_'");
    return id;
}

Result<std::string> stringAt(const json& e, const char* key, const std::string& path, const ParseMode& mode) {
    if (!e.at(key).is_string()) return fieldError(mode, path + "." + key, "must be a string");
    return e.at(key).get<std::string>();
}

Result<SourcedFigure> parseSourcedFigure(const json& j, const std::string& path, const ParseMode& mode,
                                         const FigureRules& rules) {
    const auto inRange = [&](double v) { return std::isfinite(v) && (rules.allowZero ? v >= 0 : v > 0); };
    SourcedFigure f;
    if (mode.user && j.is_number()) {
        const double v = j.get<double>();
        if (!inRange(v)) return fieldError(mode, path, rules.bareNumberError);
        f.value = v;
        f.source = "user file " + mode.origin;
        f.asOf = mode.fileDate;
        return f;
    }
    if (!j.is_object())
        return fieldError(mode, path,
                          mode.user ? "must be a number or an object {value, source, as_of}"
                                    : "must be an object {value, source, as_of}");
    for (const auto& [key, _] : j.items())
        if (key != "value" && key != "source" && key != "as_of" && key != "url" && key != "note")
            return fieldError(mode, path + "." + key, "unknown field (expected value, source, as_of, url, note)");
    if (!j.contains("value")) return fieldError(mode, path + ".value", rules.missingValue);
    const json& v = j.at("value");
    if (!v.is_null()) {
        if (!v.is_number() || !inRange(v.get<double>())) return fieldError(mode, path + ".value", rules.valueError);
        f.value = v.get<double>();
    }
    if (j.contains("source")) {
        if (!j.at("source").is_string() || j.at("source").get<std::string>().empty())
            return fieldError(mode, path + ".source", "must be a non-empty string");
        f.source = j.at("source").get<std::string>();
    } else if (mode.user) {
        f.source = "user file " + mode.origin;
    } else {
        return fieldError(mode, path + ".source", rules.missingSource);
    }
    if (j.contains("as_of")) {
        if (!j.at("as_of").is_string())
            return fieldError(mode, path + ".as_of", "must be a date string YYYY[-MM[-DD]]");
        f.asOf = j.at("as_of").get<std::string>();
        if (!isDate(f.asOf) && !(rules.allowRuntimeDate && f.asOf == "runtime"))
            return fieldError(mode, path + ".as_of", "'" + f.asOf + "' is not a date YYYY[-MM[-DD]]");
    } else if (mode.user) {
        f.asOf = mode.fileDate;
    } else {
        return fieldError(mode, path + ".as_of", rules.missingAsOf);
    }
    if (j.contains("url")) {
        if (!j.at("url").is_string()) return fieldError(mode, path + ".url", rules.urlNotString);
        f.url = j.at("url").get<std::string>();
        if (!isHttpUrl(f.url)) return fieldError(mode, path + ".url", rules.urlNotHttp);
    }
    if (j.contains("note")) {
        if (!j.at("note").is_string()) return fieldError(mode, path + ".note", "must be a string");
        f.note = j.at("note").get<std::string>();
    }
    return f;
}

std::string joinIds(const std::vector<std::string>& ids) {
    std::string out;
    for (const std::string& k : ids) out += (out.empty() ? "" : ", ") + k;
    return out;
}

}  // namespace verdict::core::catalog
