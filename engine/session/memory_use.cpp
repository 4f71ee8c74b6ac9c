#include "verdict/engine/timings.h"

#include <fstream>
#include <string>

namespace verdict {

namespace {

// "<field>   123456 kB" in /proc/<pid>/status (Linux), in bytes; 0 when absent or unreadable.
uint64_t procStatusBytes(const std::string& pid, const char* field) {
    std::ifstream in("/proc/" + pid + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(field, 0) != 0) continue;
        uint64_t kb = 0;
        for (char ch : line)
            if (ch >= '0' && ch <= '9') kb = kb * 10 + static_cast<uint64_t>(ch - '0');
        return kb * 1024;
    }
    return 0;
}

}  // namespace

uint64_t peakRssBytes() { return procStatusBytes("self", "VmHWM:"); }

uint64_t residentBytes(int64_t pid) { return procStatusBytes(pid > 0 ? std::to_string(pid) : "self", "VmRSS:"); }

}  // namespace verdict
