// An explicit "which column is what" for files whose shape is not auto-detected, written the way
// a user types it on the command line:
//
//   prompt=instruction,reference=output,category=type
//   prompt=question.stem,choices=A|B|C|D,answer=label
//
// Targets: prompt, reference (several sources with '|' or repeated = several references),
// category, id, choices (one array field, or several columns joined with '|'), answer (gold as
// letter, 0-based index or choice text), input (chat messages array), system (a system message).
// Sources are field names or dotted paths, compared case-insensitively.
#pragma once

#include <verdict/engine/result.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace verdict::core {

struct FieldMapping {
    std::vector<std::pair<std::string, std::string>> entries;  // (target, source) in the order given

    // Fails on an unknown target, an empty source or a missing '='; the message names the entry.
    static Result<FieldMapping> parse(std::string_view spec);

    std::vector<std::string> sources(std::string_view target) const;  // all sources for a target
    bool has(std::string_view target) const { return !sources(target).empty(); }
    std::string toString() const;
};

}  // namespace verdict::core
