#include "core/tco/hardware_catalog.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace verdict::core {

// Defined in the file that CMake generates from resources/hardware.json (hardware_catalog_data.cpp).
namespace detail {
extern const unsigned char kHardwareJsonData[];
extern const std::size_t kHardwareJsonSize;
}  // namespace detail

namespace {

using nlohmann::json;

constexpr const char* kBuiltinOrigin = "built-in hardware catalog (resources/hardware.json)";

// The six figures of an entry, by JSON name, in file order.
struct FigureField {
    const char* name;
    HardwareFigure HardwareEntry::*member;
};
constexpr FigureField kFigureFields[] = {
    {"memory_gb", &HardwareEntry::memoryGb},
    {"memory_bandwidth_gbs", &HardwareEntry::memoryBandwidthGbs},
    {"fp16_tflops_dense", &HardwareEntry::fp16TflopsDense},
    {"tdp_w", &HardwareEntry::tdpW},
    {"purchase_usd", &HardwareEntry::purchaseUsd},
    {"cloud_usd_per_hour", &HardwareEntry::cloudUsdPerHour},
};

// How strict parsing is: the built-in catalog (and any complete document) needs every field in
// full form; a user file may give partial entries and bare numbers.
struct ParseMode {
    bool user = false;
    std::string origin;    // file path or kBuiltinOrigin (used in messages and as user source)
    std::string fileDate;  // as_of for bare numbers in a user file
};

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

std::string todayUtc() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

Result<HardwareFigure> parseFigure(const json& j, const std::string& path, const ParseMode& mode) {
    HardwareFigure f;
    if (mode.user && j.is_number()) {
        const double v = j.get<double>();
        if (!std::isfinite(v) || v <= 0) return fieldError(mode, path, "must be a positive number");
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
    if (!j.contains("value")) return fieldError(mode, path + ".value", "missing (use null when unknown)");
    const json& v = j.at("value");
    if (!v.is_null()) {
        if (!v.is_number()) return fieldError(mode, path + ".value", "must be a positive number or null");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d <= 0) return fieldError(mode, path + ".value", "must be a positive number or null");
        f.value = d;
    }
    if (j.contains("source")) {
        if (!j.at("source").is_string() || j.at("source").get<std::string>().empty())
            return fieldError(mode, path + ".source", "must be a non-empty string");
        f.source = j.at("source").get<std::string>();
    } else if (mode.user) {
        f.source = "user file " + mode.origin;
    } else {
        return fieldError(mode, path + ".source", "missing: every figure names its source");
    }
    if (j.contains("as_of")) {
        if (!j.at("as_of").is_string()) return fieldError(mode, path + ".as_of", "must be a date string YYYY[-MM[-DD]]");
        f.asOf = j.at("as_of").get<std::string>();
        // "runtime" marks figures the program fills when the catalog loads (this-machine).
        if (!isDate(f.asOf) && f.asOf != "runtime")
            return fieldError(mode, path + ".as_of", "'" + f.asOf + "' is not a date YYYY[-MM[-DD]]");
    } else if (mode.user) {
        f.asOf = mode.fileDate;
    } else {
        return fieldError(mode, path + ".as_of", "missing: every figure carries the date it is valid for");
    }
    if (j.contains("url")) {
        if (!j.at("url").is_string()) return fieldError(mode, path + ".url", "must be a string");
        f.url = j.at("url").get<std::string>();
        if (f.url.rfind("https://", 0) != 0 && f.url.rfind("http://", 0) != 0)
            return fieldError(mode, path + ".url", "must start with https:// or http://");
    }
    if (j.contains("note")) {
        if (!j.at("note").is_string()) return fieldError(mode, path + ".note", "must be a string");
        f.note = j.at("note").get<std::string>();
    }
    return f;
}

Result<std::string> stringField(const json& e, const char* key, const std::string& path, const ParseMode& mode) {
    if (!e.at(key).is_string()) return fieldError(mode, path + "." + key, "must be a string");
    return e.at(key).get<std::string>();
}

// Applies the fields present in `e` onto `entry`. `complete`: every field must be present.
Result<void> applyEntryFields(const json& e, const std::string& path, const ParseMode& mode, bool complete,
                              HardwareEntry& entry) {
    static const std::set<std::string> kKnown = {"id",        "name",        "kind",      "vendor", "cores", "notes",
                                                 "memory_gb", "memory_bandwidth_gbs", "fp16_tflops_dense",
                                                 "tdp_w",     "purchase_usd", "cloud_usd_per_hour"};
    for (const auto& [key, _] : e.items())
        if (!kKnown.count(key)) return fieldError(mode, path + "." + key, "unknown field");
    if (e.contains("name")) {
        auto s = stringField(e, "name", path, mode);
        if (!s) return s.error();
        if (s->empty()) return fieldError(mode, path + ".name", "must not be empty");
        entry.name = *s;
    } else if (complete) {
        return fieldError(mode, path + ".name", "missing");
    }
    if (e.contains("kind")) {
        auto s = stringField(e, "kind", path, mode);
        if (!s) return s.error();
        if (*s == "gpu") entry.kind = HardwareKind::Gpu;
        else if (*s == "cpu") entry.kind = HardwareKind::Cpu;
        else return fieldError(mode, path + ".kind", "'" + *s + "' is neither \"gpu\" nor \"cpu\"");
    } else if (complete) {
        return fieldError(mode, path + ".kind", "missing (\"gpu\" or \"cpu\")");
    }
    if (e.contains("vendor")) {
        auto s = stringField(e, "vendor", path, mode);
        if (!s) return s.error();
        entry.vendor = *s;
    }
    if (e.contains("notes")) {
        auto s = stringField(e, "notes", path, mode);
        if (!s) return s.error();
        entry.notes = *s;
    }
    if (e.contains("cores")) {
        const json& c = e.at("cores");
        if (!c.is_number_integer() || c.get<int64_t>() <= 0)
            return fieldError(mode, path + ".cores", "must be a positive integer");
        entry.cores = c.get<int64_t>();
    }
    for (const FigureField& field : kFigureFields) {
        const std::string fpath = path + "." + field.name;
        if (!e.contains(field.name)) {
            if (complete && !mode.user) return fieldError(mode, fpath, "missing (use {\"value\": null, ...} when unknown)");
            if (complete)  // a new entry in a user file: the figure is unknown, and says so
                entry.*field.member = HardwareFigure{std::nullopt, "not given in user file " + mode.origin, mode.fileDate, "", ""};
            continue;
        }
        auto f = parseFigure(e.at(field.name), fpath, mode);
        if (!f) return f.error();
        entry.*field.member = std::move(*f);
    }
    return okResult();
}

// Parses the document's top level; returns the "hardware" array.
Result<const json*> documentEntries(const json& doc, const ParseMode& mode) {
    if (!doc.is_object()) return fieldError(mode, "$", "must be an object {\"schema_version\": 1, \"hardware\": [...]}");
    for (const auto& [key, _] : doc.items())
        if (key != "schema_version" && key != "hardware" && key != "description" && key.rfind('$', 0) != 0)
            return fieldError(mode, "$." + key, "unknown field (expected schema_version, hardware, description)");
    if (doc.contains("schema_version")) {
        const json& v = doc.at("schema_version");
        if (!v.is_number_integer() || v.get<int64_t>() != kHardwareSchemaVersion)
            return fieldError(mode, "$.schema_version",
                              "must be " + std::to_string(kHardwareSchemaVersion) + " (this build reads version " +
                                  std::to_string(kHardwareSchemaVersion) + ")");
    } else if (!mode.user) {
        return fieldError(mode, "$.schema_version", "missing");
    }
    if (!doc.contains("hardware") || !doc.at("hardware").is_array())
        return fieldError(mode, "$.hardware", "must be an array of entries");
    return &doc.at("hardware");
}

Result<json> parseJsonText(const std::string& text, const std::string& origin) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        return Error{origin + ": not valid JSON at byte " + std::to_string(e.byte) + ": " + e.what()};
    }
}

Result<std::string> readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open the hardware file"};
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return Error{path + ": read error"};
    return ss.str();
}

std::string fileDateUtc(const std::string& path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return todayUtc();
    std::tm tm{};
    gmtime_r(&st.st_mtime, &tm);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
}

json figureJson(const HardwareFigure& f) {
    json j = {{"value", f.value ? json(*f.value) : json(nullptr)}, {"source", f.source}, {"as_of", f.asOf}};
    if (!f.url.empty()) j["url"] = f.url;
    if (!f.note.empty()) j["note"] = f.note;
    return j;
}

}  // namespace

const char* hardwareKindName(HardwareKind kind) { return kind == HardwareKind::Gpu ? "gpu" : "cpu"; }

const char* hardwareOriginName(HardwareOrigin origin) {
    switch (origin) {
    case HardwareOrigin::Builtin: return "builtin";
    case HardwareOrigin::Runtime: return "runtime";
    case HardwareOrigin::User: return "user";
    }
    return "builtin";
}

std::string cpuModelFromCpuinfo(const std::string& text) {
    // x86: "model name"; some ARM kernels: "Hardware" or "Processor"; MIPS/others: "cpu model".
    const char* keys[] = {"model name", "cpu model", "Hardware", "Processor"};
    for (const char* wanted : keys) {
        std::istringstream in(text);
        std::string line;
        while (std::getline(in, line)) {
            const auto colon = line.find(':');
            if (colon == std::string::npos) continue;
            if (trim(line.substr(0, colon)) != wanted) continue;
            std::string v = trim(line.substr(colon + 1));
            if (!v.empty()) return v;
        }
    }
    return "";
}

MachineInfo probeThisMachine() {
    MachineInfo info;
    if (auto text = readFile("/proc/cpuinfo")) info.cpuModel = cpuModelFromCpuinfo(*text);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) info.logicalCores = n;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageSize > 0) info.memoryGb = static_cast<double>(pages) * static_cast<double>(pageSize) / 1e9;
    info.date = todayUtc();
    return info;
}

std::string defaultUserHardwarePath() {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/verdict/hardware.json";
    const char* home = std::getenv("HOME");
    if (home && home[0]) return std::string(home) + "/.config/verdict/hardware.json";
    return "";
}

Result<HardwareCatalog> HardwareCatalog::parse(const std::string& text, const std::string& origin) {
    auto doc = parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{false, origin, ""};
    auto list = documentEntries(*doc, mode);
    if (!list) return list.error();
    HardwareCatalog catalog;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const json& e = (**list)[i];
        const std::string path = "$.hardware[" + std::to_string(i) + "]";
        if (!e.is_object()) return fieldError(mode, path, "must be an object");
        if (!e.contains("id") || !e.at("id").is_string()) return fieldError(mode, path + ".id", "missing or not a string");
        HardwareEntry entry;
        entry.id = e.at("id").get<std::string>();
        if (!isId(entry.id))
            return fieldError(mode, path + ".id", "'" + entry.id + "' must be lower-case letters, digits, '-', '.', '_'");
        if (!seen.insert(entry.id).second) return fieldError(mode, path + ".id", "duplicate id '" + entry.id + "'");
        if (auto r = applyEntryFields(e, path, mode, true, entry); !r) return r.error();
        catalog.m_entries.push_back(std::move(entry));
    }
    return catalog;
}

Result<HardwareCatalog> HardwareCatalog::builtin() {
    const std::string text(reinterpret_cast<const char*>(detail::kHardwareJsonData), detail::kHardwareJsonSize);
    return parse(text, kBuiltinOrigin);
}

void HardwareCatalog::applyMachineInfo(const MachineInfo& info) {
    for (HardwareEntry& e : m_entries) {
        if (e.id != kThisMachineId) continue;
        e.origin = HardwareOrigin::Runtime;
        e.name = info.cpuModel.empty() ? "this machine" : "this machine: " + info.cpuModel;
        if (info.logicalCores > 0) e.cores = info.logicalCores;
        if (info.memoryGb) {
            e.memoryGb.value = info.memoryGb;
            e.memoryGb.source = "physical memory from sysconf(_SC_PHYS_PAGES x _SC_PAGE_SIZE) at run time";
        }
        for (const FigureField& field : kFigureFields) {
            HardwareFigure& f = e.*field.member;
            if (f.asOf == "runtime" || f.asOf.empty()) f.asOf = info.date;
        }
    }
}

Result<void> HardwareCatalog::mergeUser(const std::string& text, const std::string& origin, const std::string& fileDate) {
    auto doc = parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{true, origin, fileDate};
    auto list = documentEntries(*doc, mode);
    if (!list) return list.error();
    std::vector<HardwareEntry> merged = m_entries;  // work on a copy: all or nothing
    std::set<std::string> seen;
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
        const json& e = (**list)[i];
        const std::string path = "$.hardware[" + std::to_string(i) + "]";
        if (!e.is_object()) return fieldError(mode, path, "must be an object");
        if (!e.contains("id") || !e.at("id").is_string()) return fieldError(mode, path + ".id", "missing or not a string");
        const std::string id = e.at("id").get<std::string>();
        if (!isId(id)) return fieldError(mode, path + ".id", "'" + id + "' must be lower-case letters, digits, '-', '.', '_'");
        if (!seen.insert(id).second) return fieldError(mode, path + ".id", "duplicate id '" + id + "' in this file");
        auto it = std::find_if(merged.begin(), merged.end(), [&](const HardwareEntry& h) { return h.id == id; });
        if (it != merged.end()) {
            if (auto r = applyEntryFields(e, path, mode, false, *it); !r) return r.error();
            it->origin = HardwareOrigin::User;
        } else {
            HardwareEntry entry;
            entry.id = id;
            entry.origin = HardwareOrigin::User;
            if (auto r = applyEntryFields(e, path, mode, true, entry); !r) return r.error();
            merged.push_back(std::move(entry));
        }
    }
    m_entries = std::move(merged);
    return okResult();
}

Result<void> HardwareCatalog::mergeUserFile(const std::string& path) {
    auto text = readFile(path);
    if (!text) return text.error();
    return mergeUser(*text, path, fileDateUtc(path));
}

const HardwareEntry* HardwareCatalog::find(const std::string& id) const {
    for (const HardwareEntry& e : m_entries)
        if (e.id == id) return &e;
    return nullptr;
}

Result<const HardwareEntry*> HardwareCatalog::lookup(const std::string& id) const {
    if (const HardwareEntry* e = find(id)) return e;
    std::string known;
    for (const std::string& k : ids()) known += (known.empty() ? "" : ", ") + k;
    return Error{"unknown hardware id '" + id + "'; known ids: " + known};
}

std::vector<std::string> HardwareCatalog::ids() const {
    std::vector<std::string> out;
    out.reserve(m_entries.size());
    for (const HardwareEntry& e : m_entries) out.push_back(e.id);
    return out;
}

Result<HardwareCatalog> loadHardwareCatalog(const std::optional<std::string>& userFile, std::string* usedUserFile) {
    auto catalog = HardwareCatalog::builtin();
    if (!catalog) return catalog.error();
    catalog->applyMachineInfo(probeThisMachine());
    std::string path;
    if (userFile && !userFile->empty()) {
        path = *userFile;
    } else {
        const std::string def = defaultUserHardwarePath();
        struct stat st {};
        if (!def.empty() && stat(def.c_str(), &st) == 0) path = def;
    }
    if (!path.empty())
        if (auto r = catalog->mergeUserFile(path); !r) return r.error();
    if (usedUserFile) *usedUserFile = path;
    return catalog;
}

json hardwareEntryJson(const HardwareEntry& e) {
    json j = {{"id", e.id}, {"name", e.name}, {"kind", hardwareKindName(e.kind)}, {"vendor", e.vendor}};
    j["cores"] = e.cores ? json(*e.cores) : json(nullptr);
    for (const FigureField& field : kFigureFields) j[field.name] = figureJson(e.*field.member);
    j["notes"] = e.notes;
    j["origin"] = hardwareOriginName(e.origin);
    return j;
}

}  // namespace verdict::core
