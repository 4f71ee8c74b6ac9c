// Blind-comparison votes (table votes, schema v3): two models answered one prompt and a person
// picked the better answer, or a tie. The Compare screen and `verdict compare --vote` write them;
// `verdict votes` and the report read them.
//
// Each vote is committed in its own write transaction the moment add() returns, so a process
// killed right after a vote keeps it, and one killed during add() leaves no half row.
#pragma once

#include "core/stats/proportion.h"
#include "core/store/database.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

// Values stored on disk ('a', 'b', 'tie'): never reuse.
enum class VoteWinner { A, B, Tie };

std::string_view voteWinnerName(VoteWinner w);                      // "a", "b", "tie"
std::optional<VoteWinner> parseVoteWinner(std::string_view text);   // nullopt for anything else

struct VoteRecord {
    int64_t id = 0;                  // set by add()
    std::string createdAt;           // set by add() when empty (utcTimestamp())
    std::string modelA;              // model reference: file path or "URL MODEL" (required)
    std::string modelB;              // (required)
    std::string shaA;                // SHA-256 of A's file(s); "" for an endpoint or when not hashed
    std::string shaB;
    std::string prompt;              // what both models were asked
    std::string answerA;
    std::string answerB;
    VoteWinner winner = VoteWinner::Tie;
    bool blind = false;              // the voter did not know which answer came from which model
    nlohmann::json settings = nlohmann::json::object();  // generation settings, seeds, timings (free-form)
};

// Head-to-head of two models over every vote between them, in either order (a vote stored as
// (B, A) with winner 'a' counts as a win of B).
struct VoteSummary {
    std::string modelA;
    std::string modelB;
    int64_t votes = 0;               // all votes between the two
    int64_t winsA = 0;
    int64_t winsB = 0;
    int64_t ties = 0;
    int64_t decided = 0;             // winsA + winsB: ties are excluded from the win rate
    std::optional<double> winRateA;  // winsA / decided; nullopt when nothing was decided
    Interval winRateACi{0.0, 1.0};   // 95 % Wilson interval of winRateA ([0, 1] when decided = 0)
};

class VoteRepository {
public:
    explicit VoteRepository(Database& db) : m_db(db) {}

    // Stores the vote in its own transaction and returns its id. Fails for an empty model
    // reference, for A == B, for settings that are not a JSON object, or with SQLite's message.
    Result<int64_t> add(const VoteRecord& vote);

    // Votes in id order; with `model`, only those where it is A or B (exact reference match).
    Result<std::vector<VoteRecord>> list(const std::optional<std::string>& model = std::nullopt);

    // Counts over the votes between modelA and modelB (either order), from A's side.
    Result<VoteSummary> summary(const std::string& modelA, const std::string& modelB);

private:
    Database& m_db;
};

}  // namespace verdict::core
