// Which Verdict this is: recorded with every run (the engine version is part of a run's resume
// key), printed by `verdict --version`, named in reports and in `verdict bench` output. The values
// come from a header CMake generates at configure time (app/core/version.h.in); only version.cpp
// includes it, so a new commit recompiles one file.
#pragma once

#include <string>

namespace verdict::core {

const char* versionNumber();  // the project's version, e.g. "0.1.0"
std::string toolVersion();    // "verdict 0.1.0": what runs, sweeps and reports record
const char* buildCommit();    // the git commit built from (+ "-dirty"), "unknown" outside a checkout

}  // namespace verdict::core
