#include "core/run/tool_prompt.h"

namespace verdict::core {

std::string toolsPreamble(const nlohmann::json& tools) {
    if (!tools.is_array() || tools.empty()) return {};
    std::string out = "You can call these functions (JSON Schema of their parameters):\n";
    for (const auto& t : tools) out += (t.contains("function") ? t["function"] : t).dump() + "\n";
    out += "To call one, answer with only a JSON object {\"name\": <function name>, \"arguments\": {...}} "
           "(a JSON list of such objects for several calls). If none applies, answer in plain text.\n\n";
    return out;
}

}  // namespace verdict::core
