// Making a needle-in-a-haystack suite and storing it: one service for `verdict suite make needle`
// and the Suites screen's "Needle suite…" dialog (core/suite/needle_suite.h makes the items).
#pragma once

#include "core/services/service_result.h"
#include "core/store/suite_repository.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace verdict::core {

class Database;

struct NeedleRequest {
    std::string lengths;                      // "1k,4k,16k" (k = 1024)
    std::string depths = "0,25,50,75,100";    // percent
    std::string haystackPath;                 // "" = built-in filler; else UTF-8 text, at most 64 MiB
    std::string tokenizerPath;                // a GGUF whose tokenizer counts; "" = bytes / 4
    int needlesPerCell = 1;
    uint64_t seed = 1;
    std::string name = "needle";
};

struct NeedleMade {
    SuiteSaveResult saved;
    size_t nItems = 0;
    std::vector<int64_t> lengths;
    std::vector<double> depths;
    bool counted = false;                     // tokens counted with a tokenizer (else estimated)
    size_t minPromptTokens = 0, maxPromptTokens = 0;
    std::string haystack;                     // the file, or "built-in"
};

// BadInput for a bad list, an unreadable haystack or tokenizer, lengths too short; Storage when
// the database refuses (a name taken by other content).
ServiceResult<NeedleMade> makeNeedleSuiteInStore(Database& db, const NeedleRequest& request);

// Any stored suite at several context lengths (`verdict suite make padded`, the Suites screen's
// "Long-context variant…"): core/suite/needle_suite.h makePaddedSuite over the suite's items,
// stored as a new suite (default name "SUITE@LENGTHS", the suite's own shape, so its prompts keep
// their layout). Of `fill` it reads
// lengths, haystackPath, tokenizerPath and seed (not depths, needlesPerCell or name). BadInput
// for a suite that does not exist or has conversation items, and as above; Storage as above.
struct PaddedRequest {
    std::string suite;                        // stored suite: name or "#ID"
    std::optional<int64_t> limit;             // its first N items only
    NeedleRequest fill;                       // lengths, haystack, tokenizer, seed
    std::string name;                         // "" = "SUITE@LENGTHS"
};
ServiceResult<NeedleMade> makePaddedSuiteInStore(Database& db, const PaddedRequest& request);

// A long-conversation suite (`verdict suite make conversation`, the Suites screen's "Conversation
// suite…"): core/suite/conversation_suite.h, stored with shape "conversation". BadInput for a bad
// list or count; Storage when the database refuses.
struct ConversationRequest {
    std::string lengths = "10,50,120";        // turns per conversation
    int conversations = 5;                    // per length
    uint64_t seed = 1;
    std::string name = "conversations";
};
struct ConversationMade {
    SuiteSaveResult saved;
    size_t nItems = 0;
    std::vector<int64_t> lengths;
};
ServiceResult<ConversationMade> makeConversationSuiteInStore(Database& db, const ConversationRequest& request);

}  // namespace verdict::core
