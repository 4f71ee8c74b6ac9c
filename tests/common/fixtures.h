// Where the read-only fixtures live, and the rule for when they are missing:
// skip with a clear message (a user's fresh clone), fail when VERDICT_REQUIRE_FIXTURES=1 (CI).
#pragma once

#include <QtTest/QtTest>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace verdict::test {

inline std::filesystem::path fixturesDir() {
    if (const char* env = std::getenv("VERDICT_FIXTURES_DIR"); env && *env) return env;
    return VERDICT_FIXTURES_DIR;
}

inline std::filesystem::path fixture(const std::string& relative) { return fixturesDir() / relative; }

inline std::filesystem::path testData(const std::string& relative) {
    return std::filesystem::path(VERDICT_TEST_DATA_DIR) / relative;
}

inline bool fixturesRequired() {
    const char* env = std::getenv("VERDICT_REQUIRE_FIXTURES");
    return env && std::string(env) == "1";
}

}  // namespace verdict::test

// Use inside a test function: skips (or fails under VERDICT_REQUIRE_FIXTURES=1) when absent.
#define VERDICT_NEED_FIXTURE(fixturePath_)                                                             \
    do {                                                                                        \
        if (!std::filesystem::exists(fixturePath_)) {                                                   \
            const std::string msg_ = "fixture missing: " + std::filesystem::path(fixturePath_).string() \
                + " (set VERDICT_FIXTURES_DIR or check out ../shared)";                         \
            if (verdict::test::fixturesRequired()) QFAIL(msg_.c_str());                         \
            QSKIP(msg_.c_str());                                                                \
        }                                                                                       \
    } while (0)
