// Judgments of two runs' answers, item by item (tables judge_prompts, judgments; schema v5,
// docs/schema.md): a person's blind vote, or a judge model's pairwise verdict in one order, or
// its rubric score of one run's answer. Written by core/judge (judge_runner.h) and `verdict
// judge`; read by the summaries there and the report.
//
// A pair of runs is stored with the smaller id as run A; add() and list() take and give the
// pair in the caller's orientation (a verdict 'a' for runs (7, 3) is stored as 'b' for (3, 7)).
// Each add() commits on its own: a killed process keeps every judgment it finished.
#pragma once

#include "core/store/database.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace verdict::core {

// Values stored on disk ('human', 'pairwise', 'rubric', 'reference'): never reuse.
enum class JudgeMode { Human, Pairwise, Rubric, Reference };
std::string_view judgeModeName(JudgeMode m);
std::optional<JudgeMode> parseJudgeMode(std::string_view text);

// Values stored on disk ('a', 'b', 'tie', 'both_bad'): never reuse. BothBad is a person's "both
// answers are bad"; statistics count it as a tie and show it apart.
enum class JudgedWinner { A, B, Tie, BothBad };
std::string_view judgedWinnerName(JudgedWinner w);
std::optional<JudgedWinner> parseJudgedWinner(std::string_view text);

struct JudgmentRecord {
    int64_t id = 0;                     // set by add()
    std::string createdAt;              // set by add() when empty
    int64_t runA = 0;
    std::optional<int64_t> runB;        // nullopt for a rubric grade of runA alone
    int64_t itemIdx = 0;                // index of the item in the runs' suite
    int turn = 0;                       // 0: the item as a whole; k >= 1: the answers to turn k of a multi-turn item
    std::string judge;                  // "human:NAME", or the judge model's reference
    JudgeMode mode = JudgeMode::Pairwise;
    std::string position;               // "ab": A's answer shown first / left, "ba": B's; "" for rubric
    std::string promptHash;             // judge_prompts.hash ("" for a person)
    std::string judgeInput;             // exactly what the judge was sent
    std::string judgeOutput;            // the judge's whole output
    std::optional<JudgedWinner> winner; // pairwise / human; nullopt: unreadable (or rubric)
    std::optional<double> score;        // rubric / reference grade; nullopt: unreadable (or pairwise)
    std::string error;                  // why there is no verdict ("" otherwise)
    nlohmann::json details = nlohmann::json::object();  // tokens, timings, the judge's file hash
};

class JudgmentRepository {
public:
    explicit JudgmentRepository(Database& db) : m_db(db) {}

    // Stores a prompt template under its SHA-256 (once; the same text again is a no-op) and
    // returns the hash. mode: Pairwise, Rubric or Reference.
    Result<std::string> addPrompt(std::string_view name, JudgeMode mode, std::string_view text);
    // The template text with this hash; nullopt when none.
    Result<std::optional<std::string>> promptText(const std::string& hash);

    // Stores one judgment in its own transaction. A person's judgment replaces that person's
    // earlier one of the same item and turn (a changed mind); a model's fails when the same
    // judgment (runs, item, turn, judge, mode, position, prompt) is already stored. Fails for runA == runB, a pairwise
    // or human judgment without runB, a rubric one with it, an unknown run, bad details.
    Result<int64_t> add(const JudgmentRecord& j);

    // Judgments of the pair (runA, runB) in that orientation, or of runA alone when runB is
    // nullopt, optionally of one mode; by item, turn, then id.
    Result<std::vector<JudgmentRecord>> list(int64_t runA, std::optional<int64_t> runB,
                                             std::optional<JudgeMode> mode = std::nullopt);

private:
    Database& m_db;
};

}  // namespace verdict::core
