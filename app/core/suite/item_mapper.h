// Internal to the importer: one record (a JSON object) -> one SuiteItem, per shape.
#pragma once

#include "core/suite/suite_importer.h"
#include "core/suite/suite_shape.h"

#include <nlohmann/json.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace verdict::core {

struct MapContext {
    SuiteShape shape = SuiteShape::Unknown;
    const ImportOptions* options = nullptr;
    std::string fileCategory;  // from the file name (MMLU-style files)
    // promptfoo: ImportOptions::promptTemplate, else the first of the config's own "prompts".
    std::string promptTemplate;
    // BFCL: ground truth by item id, from ImportOptions::answersPath (null when not given).
    const std::unordered_map<std::string, nlohmann::json>* answers = nullptr;
};

struct MapOutcome {
    bool ok = false;
    SuiteItem item;
    std::string reason;                 // why the record was rejected (when !ok)
    std::vector<std::string> warnings;  // caveats on an accepted item
};

// The record is consumed: texts are moved out of it.
MapOutcome mapRecord(nlohmann::json& record, int line, const MapContext& ctx);

// Shape mappers (item_mapper.cpp, item_mapper_mc.cpp, promptfoo_mapper.cpp).
MapOutcome mapMultipleChoice(nlohmann::json& r, int line, const MapContext& ctx);
MapOutcome mapArc(nlohmann::json& r, int line, const MapContext& ctx);
MapOutcome mapAqua(nlohmann::json& r, int line, const MapContext& ctx);
MapOutcome mapMmlu(nlohmann::json& r, int line, const MapContext& ctx);
MapOutcome mapPromptfoo(nlohmann::json& r, int line, const MapContext& ctx);
MapOutcome mapToolCalls(nlohmann::json& r, int line, const MapContext& ctx);  // item_mapper_tools.cpp
MapOutcome mapBfcl(nlohmann::json& r, int line, const MapContext& ctx);

// Shared pieces.
// References from reference/references/answer/expected/target/ideal (text or list of texts);
// the key used is added to `used`.
std::vector<std::string> readReferences(const nlohmann::json& r, std::vector<std::string>& used);
std::string choiceLetter(int index);  // 0 -> "A"
// Choices from an array of texts, an array of {text,label}, {"text":[...],"label":[...]} or
// {"A": ..., "B": ...}. Labels stay empty when the file gives none.
bool readChoices(nlohmann::json& v, std::vector<std::string>& texts, std::vector<std::string>& labels,
                 std::string& why);
// Drops "A) ", "(B) ", "C. " prefixes when every choice carries them in order; returns the labels.
std::vector<std::string> stripLetterPrefixes(std::vector<std::string>& texts);
// The field holding a multiple-choice answer (answer, answerKey, label, gold, ...); `which`
// receives its key. nullptr when the record has none.
const nlohmann::json* findAnswer(const nlohmann::json& r, std::string* which);
// Gold index from a letter ("B", "(B)"), a label ("3" among labels 1-4), a 0-based index (2 or
// "2") or the text of a choice.
bool resolveGold(const nlohmann::json& answer, const std::vector<std::string>& texts,
                 const std::vector<std::string>& labels, int& gold, std::string& why);
// id (id/task_id/question_id/qid/uid, else the line number) and category.
void fillIdAndCategory(SuiteItem& item, const nlohmann::json& r, int line, const MapContext& ctx,
                       std::vector<std::string>& used);
// Chat messages from [{role, content}] where content may be text or [{type:"text", text}].
bool readMessages(const nlohmann::json& v, std::vector<ChatTurn>& out, std::string& why);

}  // namespace verdict::core
