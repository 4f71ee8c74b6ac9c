// The hardware catalog: GPUs and CPUs with the figures the cost model and the projection need,
// each figure with its source and date. The built-in catalog is resources/hardware.json, compiled
// into the binary (app/CMakeLists.txt embeds it); a user file adds or overrides entries by id.
//
// File shape (schema_version 1; docs/tco.md):
//   {"schema_version": 1,
//    "hardware": [{"id": "h100-sxm", "name": "...", "kind": "gpu"|"cpu", "vendor": "...",
//                  "cores": 96,                        // optional, CPUs
//                  "memory_gb":            FIGURE,     // GB (1e9 bytes)
//                  "memory_bandwidth_gbs": FIGURE,     // GB/s, peak
//                  "fp16_tflops_dense":    FIGURE,     // FP16/BF16 tensor TFLOPS, dense (no sparsity)
//                  "tdp_w":                FIGURE,     // W
//                  "purchase_usd":         FIGURE,     // typical purchase price of one device
//                  "cloud_usd_per_hour":   FIGURE,     // typical rent of one device per hour
//                  "notes": "..."}]}                   // optional
//   FIGURE = {"value": number > 0 | null, "source": "...", "as_of": "YYYY[-MM[-DD]]",
//             "url": "https://..." (optional), "note": "..." (optional)}
// In the user file an entry needs only "id" plus the fields it changes, and a FIGURE may be a
// bare number: its source becomes "user file PATH" and as_of the file's modification date.
// A user entry with a new id must give name and kind.
#pragma once

#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

// One catalog number with where it came from.
struct HardwareFigure {
    std::optional<double> value;  // nullopt: unknown
    std::string source;           // datasheet name, price source, "user file ...", or why it is unknown
    std::string asOf;             // "YYYY", "YYYY-MM" or "YYYY-MM-DD"
    std::string url;              // "" when the source has no address
    std::string note;
};

enum class HardwareKind { Gpu, Cpu };
const char* hardwareKindName(HardwareKind kind);  // "gpu" | "cpu"

// Where an entry's figures come from (a user override of a built-in entry is "user").
enum class HardwareOrigin { Builtin, Runtime, User };
const char* hardwareOriginName(HardwareOrigin origin);  // "builtin" | "runtime" | "user"

struct HardwareEntry {
    std::string id;      // lower-case [a-z0-9-], unique
    std::string name;
    HardwareKind kind = HardwareKind::Gpu;
    std::string vendor;
    std::optional<int64_t> cores;
    HardwareFigure memoryGb;
    HardwareFigure memoryBandwidthGbs;
    HardwareFigure fp16TflopsDense;
    HardwareFigure tdpW;
    HardwareFigure purchaseUsd;
    HardwareFigure cloudUsdPerHour;
    std::string notes;
    HardwareOrigin origin = HardwareOrigin::Builtin;
};

// What the "this-machine" entry is filled with (probeThisMachine() reads it from the OS).
struct MachineInfo {
    std::string cpuModel;             // "" when unknown
    int64_t logicalCores = 0;         // online logical CPUs
    std::optional<double> memoryGb;   // physical memory, GB (1e9 bytes)
    std::string date;                 // "YYYY-MM-DD" (UTC) of the probe
};

constexpr const char* kThisMachineId = "this-machine";
constexpr int kHardwareSchemaVersion = 1;

// The CPU model name from /proc/cpuinfo text ("model name", else "Hardware"/"cpu model"/"Processor").
std::string cpuModelFromCpuinfo(const std::string& cpuinfoText);
// Reads /proc/cpuinfo and sysconf (_SC_NPROCESSORS_ONLN, _SC_PHYS_PAGES x _SC_PAGE_SIZE).
MachineInfo probeThisMachine();

// $XDG_CONFIG_HOME/verdict/hardware.json when XDG_CONFIG_HOME is set and absolute, else
// $HOME/.config/verdict/hardware.json, else "" (no home).
std::string defaultUserHardwarePath();

class HardwareCatalog {
public:
    // Parses and validates a complete catalog document. `origin` names the text in errors
    // ("built-in catalog", a file path). Errors: "ORIGIN: $.hardware[3].tdp_w.value: must be a
    // positive number or null", duplicate ids, wrong schema_version, JSON syntax with the byte offset.
    static Result<HardwareCatalog> parse(const std::string& text, const std::string& origin);
    // The built-in catalog (the JSON compiled into the binary). Fails only if that text is broken.
    static Result<HardwareCatalog> builtin();

    // Fills the "this-machine" entry (name, cores, memory) when the catalog has one.
    void applyMachineInfo(const MachineInfo& info);

    // Merges a user document (see the header comment for the partial-entry rules). Errors name
    // `origin` and the JSON path of the bad field; on error the catalog is unchanged.
    // `fileDate` ("YYYY-MM-DD") is the as_of given to bare-number figures.
    Result<void> mergeUser(const std::string& text, const std::string& origin, const std::string& fileDate);
    // Reads `path` and merges it. A missing file is an error here (callers decide when it is optional).
    Result<void> mergeUserFile(const std::string& path);

    const std::vector<HardwareEntry>& entries() const { return m_entries; }
    const HardwareEntry* find(const std::string& id) const;
    // Like find, but an unknown id is an Error listing every known id.
    Result<const HardwareEntry*> lookup(const std::string& id) const;
    std::vector<std::string> ids() const;

private:
    std::vector<HardwareEntry> m_entries;
};

// The usual way to get the catalog: built-in + this machine + the user file. `userFile` given
// (--hardware-file): it must exist. Not given: defaultUserHardwarePath() is merged when it exists.
// `usedUserFile` receives the user file that was merged ("" when none).
Result<HardwareCatalog> loadHardwareCatalog(const std::optional<std::string>& userFile,
                                            std::string* usedUserFile = nullptr);

// The entry as JSON, in the file's shape plus "origin".
nlohmann::json hardwareEntryJson(const HardwareEntry& entry);

}  // namespace verdict::core
