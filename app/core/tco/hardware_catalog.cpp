#include "core/tco/hardware_catalog.h"

#include "core/catalog/catalog_file.h"

#include <unistd.h>

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

using catalog::fieldError;
using catalog::ParseMode;

constexpr catalog::FigureRules kFigureRules{
    /*allowZero=*/false,
    /*allowRuntimeDate=*/true,  // "runtime" marks figures the program fills when the catalog loads (this-machine)
    "must be a positive number",
    "must be a positive number or null",
    "missing (use null when unknown)",
    "missing: every figure names its source",
    "missing: every figure carries the date it is valid for",
    "must be a string",
    "must start with https:// or http://",
};

// Applies the fields present in `e` onto `entry`. `complete`: every field must be present.
Result<void> applyEntryFields(const json& e, const std::string& path, const ParseMode& mode, bool complete,
                              HardwareEntry& entry) {
    static const std::set<std::string> kKnown = {"id",        "name",        "kind",      "vendor", "cores", "notes",
                                                 "memory_gb", "memory_bandwidth_gbs", "fp16_tflops_dense",
                                                 "tdp_w",     "purchase_usd", "cloud_usd_per_hour"};
    for (const auto& [key, _] : e.items())
        if (!kKnown.count(key)) return fieldError(mode, path + "." + key, "unknown field");
    if (e.contains("name")) {
        auto s = catalog::stringAt(e, "name", path, mode);
        if (!s) return s.error();
        if (s->empty()) return fieldError(mode, path + ".name", "must not be empty");
        entry.name = *s;
    } else if (complete) {
        return fieldError(mode, path + ".name", "missing");
    }
    if (e.contains("kind")) {
        auto s = catalog::stringAt(e, "kind", path, mode);
        if (!s) return s.error();
        if (*s == "gpu") entry.kind = HardwareKind::Gpu;
        else if (*s == "cpu") entry.kind = HardwareKind::Cpu;
        else return fieldError(mode, path + ".kind", "'" + *s + "' is neither \"gpu\" nor \"cpu\"");
    } else if (complete) {
        return fieldError(mode, path + ".kind", "missing (\"gpu\" or \"cpu\")");
    }
    if (e.contains("vendor")) {
        auto s = catalog::stringAt(e, "vendor", path, mode);
        if (!s) return s.error();
        entry.vendor = *s;
    }
    if (e.contains("notes")) {
        auto s = catalog::stringAt(e, "notes", path, mode);
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
        auto f = catalog::parseFigureAs<HardwareFigure>(e.at(field.name), fpath, mode, kFigureRules);
        if (!f) return f.error();
        entry.*field.member = std::move(*f);
    }
    return okResult();
}

// The document's top level; returns the "hardware" array.
Result<const json*> hardwareList(const json& doc, const ParseMode& mode) {
    return catalog::documentEntries(doc, mode, "hardware", kHardwareSchemaVersion, "entries");
}

// Applies the "hardware" entries onto `entries` by id (new ids need the complete entry).
Result<void> mergeHardware(const json& list, const ParseMode& mode, std::vector<HardwareEntry>& entries) {
    return catalog::mergeEntries(list, "hardware", mode, HardwareOrigin::User, entries,
                                 [&](const json& e, const std::string& path, bool complete, HardwareEntry& entry) {
                                     return applyEntryFields(e, path, mode, complete, entry);
                                 });
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
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
    if (auto text = catalog::readFile("/proc/cpuinfo", "hardware")) info.cpuModel = cpuModelFromCpuinfo(*text);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > 0) info.logicalCores = n;
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && pageSize > 0) info.memoryGb = static_cast<double>(pages) * static_cast<double>(pageSize) / 1e9;
    info.date = catalog::todayUtc();
    return info;
}

std::string defaultUserHardwarePath() { return catalog::defaultUserConfigPath("hardware.json"); }

Result<HardwareCatalog> HardwareCatalog::parse(const std::string& text, const std::string& origin) {
    auto doc = catalog::parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{false, origin, ""};
    auto list = hardwareList(*doc, mode);
    if (!list) return list.error();
    HardwareCatalog catalog;
    if (auto r = mergeHardware(**list, mode, catalog.m_entries); !r) return r.error();
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
    auto doc = catalog::parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{true, origin, fileDate};
    auto list = hardwareList(*doc, mode);
    if (!list) return list.error();
    std::vector<HardwareEntry> merged = m_entries;  // work on a copy: all or nothing
    if (auto r = mergeHardware(**list, mode, merged); !r) return r.error();
    m_entries = std::move(merged);
    return okResult();
}

Result<void> HardwareCatalog::mergeUserFile(const std::string& path) {
    auto text = catalog::readFile(path, "hardware");
    if (!text) return text.error();
    return mergeUser(*text, path, catalog::fileDateUtc(path));
}

const HardwareEntry* HardwareCatalog::find(const std::string& id) const { return catalog::findById(m_entries, id); }

Result<const HardwareEntry*> HardwareCatalog::lookup(const std::string& id) const {
    if (const HardwareEntry* e = find(id)) return e;
    return Error{"unknown hardware id '" + id + "'; known ids: " + catalog::joinIds(ids())};
}

std::vector<std::string> HardwareCatalog::ids() const { return catalog::idsOf(m_entries); }

Result<HardwareCatalog> loadHardwareCatalog(const std::optional<std::string>& userFile, std::string* usedUserFile) {
    auto catalog = HardwareCatalog::builtin();
    if (!catalog) return catalog.error();
    catalog->applyMachineInfo(probeThisMachine());
    const std::string path = catalog::chooseUserFile(userFile, defaultUserHardwarePath());
    if (!path.empty())
        if (auto r = catalog->mergeUserFile(path); !r) return r.error();
    if (usedUserFile) *usedUserFile = path;
    return catalog;
}

json hardwareEntryJson(const HardwareEntry& e) {
    json j = {{"id", e.id}, {"name", e.name}, {"kind", hardwareKindName(e.kind)}, {"vendor", e.vendor}};
    j["cores"] = e.cores ? json(*e.cores) : json(nullptr);
    for (const FigureField& field : kFigureFields) j[field.name] = catalog::figureJson(e.*field.member);
    j["notes"] = e.notes;
    j["origin"] = hardwareOriginName(e.origin);
    return j;
}

}  // namespace verdict::core
