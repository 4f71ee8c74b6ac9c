// What the study commands (`verdict quant-compare`, `verdict soak`) share: `list` and `show ID`
// of their stored studies, and the exit status of a service failure.
#pragma once

#include "core/services/service_result.h"
#include "core/store/database.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace verdict::cli {

struct StudyCommand {
    std::string command;  // "quant-compare"
    std::string noun;     // "quant comparison", in messages
    std::function<Result<nlohmann::json>(core::Database&)> list;                  // a JSON array, newest first
    std::function<void(const nlohmann::json& entry)> printListEntry;              // one text line
    std::function<Result<std::optional<nlohmann::json>>(core::Database&, int64_t)> load;
    std::function<void(const nlohmann::json& study)> print;                       // the text of `show`
};

// `verdict CMD list [--json] [--db PATH]` and `verdict CMD show ID [--json] [--db PATH]`.
int runStudySubcommand(const StudyCommand& c, const std::string& what, const std::vector<std::string>& argv);

}  // namespace verdict::cli
