#include "verdict/engine/timings.h"

#include <fstream>
#include <string>

namespace verdict {

uint64_t peakRssBytes() {
    // "VmHWM:   123456 kB" in /proc/self/status (Linux); absent elsewhere.
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmHWM:", 0) != 0) continue;
        uint64_t kb = 0;
        for (char ch : line)
            if (ch >= '0' && ch <= '9') kb = kb * 10 + static_cast<uint64_t>(ch - '0');
        return kb * 1024;
    }
    return 0;
}

}  // namespace verdict
