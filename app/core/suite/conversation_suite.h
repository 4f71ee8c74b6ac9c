// Long-conversation suites (issue 22, multi-turn consistency): a fact told in the first turn, then
// small tasks with checkable answers, then the fact asked for in the last turn — for
// conversations of several lengths. `verdict suite make conversation` stores one; a run's
// accuracy by turn index (core/stats/turn_accuracy.h) is the "turns 1-20 against 100-120" table:
// whether a model still follows simple tasks late in a long conversation, and still knows what
// it was told at the start.
#pragma once

#include "core/suite/suite_item.h"

#include <verdict/engine/result.h>

#include <cstdint>
#include <vector>

namespace verdict::core {

struct ConversationOptions {
    std::vector<int64_t> lengths;   // turns per conversation (each 3..1000): fact, tasks, question
    int conversations = 5;          // conversations per length (1..1000)
    uint64_t seed = 1;              // facts and tasks are drawn from it
};

// "10,50,120" -> {10, 50, 120}; an error naming the entry otherwise (each 3..1000).
Result<std::vector<int64_t>> parseConversationLengths(std::string_view list);

// One multi-turn item per (length, conversation): turns[0] = "Remember this: <fact>", turns
// 1..L-2 = "What is A plus B? Answer with the number only." (turn_references: the sum), turns[L-1]
// = the question about the fact (turn_references: its answer); every turn scored by contains,
// ignoring case; the item is right when every scored turn is (suite_runner.h). id "conv-L-k",
// category "L turns",
// metadata.turn_references as an imported suite carries them, metadata.conversation = {turns,
// fact_turn: 1, question_turn: L}. The same options make the same suite.
Result<std::vector<SuiteItem>> makeConversationSuite(const ConversationOptions& options);

}  // namespace verdict::core
