// The `verdict report` command line that produces the same report as a request built elsewhere
// (the window's Export report…): the report's reproducibility section prints it, so a report
// exported from the GUI can be re-made from a terminal.
#pragma once

#include "core/report/report_types.h"

#include <string>

namespace verdict::core {

// Shell-quotes one argument (POSIX single quotes) unless it is made of safe characters only.
std::string shellQuote(const std::string& arg);

// "verdict report --run A --run B [--sweep ..] [--hardware ..] ... -o OUTPUT"; options equal to
// their defaults are left out.
std::string reportCommandLine(const ReportRequest& request, const std::string& output, const std::string& dbPath = {});

}  // namespace verdict::core
