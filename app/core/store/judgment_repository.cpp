#include "core/store/judgment_repository.h"

#include "core/store/store.h"
#include "util/sha256.h"

namespace verdict::core {
namespace {

constexpr const char* kColumns =
    "id, created_at, run_a, run_b, item_idx, turn, judge, mode, position, prompt_hash, judge_input, judge_output, "
    "verdict, score, error, details";

// A verdict seen from the other side of the pair.
JudgedWinner swapped(JudgedWinner w) {
    if (w == JudgedWinner::A) return JudgedWinner::B;
    if (w == JudgedWinner::B) return JudgedWinner::A;
    return w;
}
std::string swappedPosition(const std::string& p) { return p == "ab" ? "ba" : p == "ba" ? "ab" : p; }

// The record as the caller wants to see it: swap when the caller's A is the stored B.
void orient(JudgmentRecord& j, bool swap) {
    if (!swap || !j.runB) return;
    std::swap(j.runA, *j.runB);
    if (j.winner) j.winner = swapped(*j.winner);
    j.position = swappedPosition(j.position);
}

Result<JudgmentRecord> readJudgment(const Statement& st) {
    JudgmentRecord j;
    int c = 0;
    j.id = st.columnInt(c++);
    j.createdAt = st.columnText(c++);
    j.runA = st.columnInt(c++);
    j.runB = st.columnOptInt(c++);
    j.itemIdx = st.columnInt(c++);
    j.turn = static_cast<int>(st.columnInt(c++));
    j.judge = st.columnText(c++);
    const std::string mode = st.columnText(c++);
    auto m = parseJudgeMode(mode);
    if (!m) return Error{"judgment " + std::to_string(j.id) + ": column mode holds '" + mode + "'"};
    j.mode = *m;
    j.position = st.columnText(c++);
    j.promptHash = st.columnText(c++);
    j.judgeInput = st.columnText(c++);
    j.judgeOutput = st.columnText(c++);
    if (!st.isNull(c)) {
        const std::string v = st.columnText(c);
        auto w = parseJudgedWinner(v);
        if (!w) return Error{"judgment " + std::to_string(j.id) + ": column verdict holds '" + v + "'"};
        j.winner = *w;
    }
    ++c;
    j.score = st.columnOptDouble(c++);
    j.error = st.columnText(c++);
    j.details = nlohmann::json::parse(st.columnText(c++), nullptr, false);
    if (j.details.is_discarded()) return Error{"judgment " + std::to_string(j.id) + ": column details is not valid JSON"};
    return j;
}

}  // namespace

std::string_view judgeModeName(JudgeMode m) {
    switch (m) {
    case JudgeMode::Human: return "human";
    case JudgeMode::Pairwise: return "pairwise";
    case JudgeMode::Rubric: return "rubric";
    case JudgeMode::Reference: return "reference";
    }
    return "pairwise";
}

std::optional<JudgeMode> parseJudgeMode(std::string_view text) {
    for (JudgeMode m : {JudgeMode::Human, JudgeMode::Pairwise, JudgeMode::Rubric, JudgeMode::Reference})
        if (text == judgeModeName(m)) return m;
    return std::nullopt;
}

std::string_view judgedWinnerName(JudgedWinner w) {
    switch (w) {
    case JudgedWinner::A: return "a";
    case JudgedWinner::B: return "b";
    case JudgedWinner::Tie: return "tie";
    case JudgedWinner::BothBad: return "both_bad";
    }
    return "tie";
}

std::optional<JudgedWinner> parseJudgedWinner(std::string_view text) {
    for (JudgedWinner w : {JudgedWinner::A, JudgedWinner::B, JudgedWinner::Tie, JudgedWinner::BothBad})
        if (text == judgedWinnerName(w)) return w;
    return std::nullopt;
}

Result<std::string> JudgmentRepository::addPrompt(std::string_view name, JudgeMode mode, std::string_view text) {
    if (mode == JudgeMode::Human) return Error{"judge prompt: a person needs no prompt template"};
    const std::string hash = util::sha256Hex(text);
    auto st = m_db.prepare("INSERT OR IGNORE INTO judge_prompts (hash, name, mode, text, created_at) VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!st) return st.error();
    st->bind(1, hash).bind(2, name).bind(3, judgeModeName(mode)).bind(4, text).bind(5, utcTimestamp());
    if (auto r = st->run(); !r) return r.error();
    return hash;
}

Result<std::optional<std::string>> JudgmentRepository::promptText(const std::string& hash) {
    auto st = m_db.prepare("SELECT text FROM judge_prompts WHERE hash = ?1");
    if (!st) return st.error();
    st->bind(1, hash);
    auto row = st->step();
    if (!row) return row.error();
    if (!*row) return std::optional<std::string>{};
    return std::optional<std::string>{st->columnText(0)};
}

Result<int64_t> JudgmentRepository::add(const JudgmentRecord& in) {
    const bool pair = in.mode == JudgeMode::Human || in.mode == JudgeMode::Pairwise;
    if (pair && !in.runB) return Error{"judgment: a " + std::string(judgeModeName(in.mode)) + " judgment needs two runs"};
    if (!pair && in.runB) return Error{"judgment: a " + std::string(judgeModeName(in.mode)) + " grade belongs to one run"};
    if (in.runB && *in.runB == in.runA) return Error{"judgment: run A and run B are the same run (" + std::to_string(in.runA) + ")"};
    if (in.judge.empty()) return Error{"judgment: no judge named"};
    if (!in.details.is_object()) return Error{"judgment: details must be a JSON object"};
    if (in.turn < 0) return Error{"judgment: a turn number cannot be negative"};
    JudgmentRecord j = in;
    orient(j, j.runB && *j.runB < j.runA);
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    if (j.mode == JudgeMode::Human) {
        auto del = m_db.prepare("DELETE FROM judgments WHERE run_a = ?1 AND run_b = ?2 AND item_idx = ?3 AND turn = ?4 "
                                "AND judge = ?5 AND mode = 'human'");
        if (!del) return del.error();
        del->bind(1, j.runA).bind(2, j.runB).bind(3, j.itemIdx).bind(4, int64_t{j.turn}).bind(5, j.judge);
        if (auto r = del->run(); !r) return r.error();
    }
    auto st = m_db.prepare(
        "INSERT INTO judgments (created_at, run_a, run_b, item_idx, judge, mode, position, prompt_hash, judge_input, "
        "judge_output, verdict, score, error, details, turn) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "
        "?13, ?14, ?15)");
    if (!st) return st.error();
    std::optional<std::string> verdict;
    if (j.winner) verdict = std::string(judgedWinnerName(*j.winner));
    st->bind(1, j.createdAt.empty() ? utcTimestamp() : j.createdAt)
        .bind(2, j.runA)
        .bind(3, j.runB)
        .bind(4, j.itemIdx)
        .bind(5, j.judge)
        .bind(6, judgeModeName(j.mode))
        .bind(7, j.position)
        .bind(8, j.promptHash)
        .bind(9, j.judgeInput)
        .bind(10, j.judgeOutput)
        .bind(11, verdict)
        .bind(12, j.score)
        .bind(13, j.error)
        .bind(14, j.details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        .bind(15, int64_t{j.turn});
    if (auto r = st->run(); !r) return Error{"judgment of item " + std::to_string(in.itemIdx) + ": " + r.error().message};
    const int64_t id = m_db.lastInsertRowid();
    if (auto r = tx->commit(); !r) return r.error();
    return id;
}

Result<std::vector<JudgmentRecord>> JudgmentRepository::list(int64_t runA, std::optional<int64_t> runB,
                                                             std::optional<JudgeMode> mode) {
    const bool swap = runB && *runB < runA;
    const int64_t lo = swap ? *runB : runA;
    std::string sql = std::string("SELECT ") + kColumns + " FROM judgments WHERE run_a = ?1 AND " +
                      (runB ? "run_b = ?2" : "run_b IS NULL");
    if (mode) sql += " AND mode = ?3";
    sql += " ORDER BY item_idx, turn, id";
    auto st = m_db.prepare(sql);
    if (!st) return st.error();
    st->bind(1, lo);
    if (runB) st->bind(2, swap ? runA : *runB);
    if (mode) st->bind(3, judgeModeName(*mode));
    std::vector<JudgmentRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        auto j = readJudgment(*st);
        if (!j) return j.error();
        orient(*j, swap);
        out.push_back(std::move(*j));
    }
    return out;
}

}  // namespace verdict::core
