#include "core/store/vote_repository.h"

#include "core/store/store.h"

namespace verdict::core {
namespace {

constexpr const char* kVoteColumns =
    "id, created_at, model_a, model_b, sha_a, sha_b, prompt, answer_a, answer_b, winner, blind, settings";

Result<VoteRecord> readVote(const Statement& st) {
    VoteRecord v;
    int c = 0;
    v.id = st.columnInt(c++);
    v.createdAt = st.columnText(c++);
    v.modelA = st.columnText(c++);
    v.modelB = st.columnText(c++);
    v.shaA = st.columnText(c++);
    v.shaB = st.columnText(c++);
    v.prompt = st.columnText(c++);
    v.answerA = st.columnText(c++);
    v.answerB = st.columnText(c++);
    const std::string winner = st.columnText(c++);
    auto w = parseVoteWinner(winner);
    if (!w) return Error{"vote " + std::to_string(v.id) + ": column winner holds '" + winner + "'"};
    v.winner = *w;
    v.blind = st.columnInt(c++) != 0;
    v.settings = nlohmann::json::parse(st.columnText(c++), nullptr, false);
    if (v.settings.is_discarded()) return Error{"vote " + std::to_string(v.id) + ": column settings is not valid JSON"};
    return v;
}

}  // namespace

std::string_view voteWinnerName(VoteWinner w) {
    switch (w) {
    case VoteWinner::A: return "a";
    case VoteWinner::B: return "b";
    case VoteWinner::Tie: return "tie";
    }
    return "tie";
}

std::optional<VoteWinner> parseVoteWinner(std::string_view text) {
    if (text == "a") return VoteWinner::A;
    if (text == "b") return VoteWinner::B;
    if (text == "tie") return VoteWinner::Tie;
    return std::nullopt;
}

Result<int64_t> VoteRepository::add(const VoteRecord& vote) {
    if (vote.modelA.empty() || vote.modelB.empty()) return Error{"vote: model A and model B must both be given"};
    if (vote.modelA == vote.modelB) return Error{"vote: model A and model B are the same (" + vote.modelA + ")"};
    if (!vote.settings.is_object()) return Error{"vote: settings must be a JSON object"};
    auto tx = Transaction::begin(m_db);
    if (!tx) return tx.error();
    auto st = m_db.prepare(
        "INSERT INTO votes (created_at, model_a, model_b, sha_a, sha_b, prompt, answer_a, answer_b, winner, blind, settings) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    if (!st) return st.error();
    st->bind(1, vote.createdAt.empty() ? utcTimestamp() : vote.createdAt)
        .bind(2, vote.modelA)
        .bind(3, vote.modelB)
        .bind(4, vote.shaA)
        .bind(5, vote.shaB)
        .bind(6, vote.prompt)
        .bind(7, vote.answerA)
        .bind(8, vote.answerB)
        .bind(9, voteWinnerName(vote.winner))
        .bind(10, int64_t{vote.blind ? 1 : 0})
        .bind(11, vote.settings.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    if (auto r = st->run(); !r) return r.error();
    const int64_t id = m_db.lastInsertRowid();
    if (auto r = tx->commit(); !r) return r.error();
    return id;
}

Result<std::vector<VoteRecord>> VoteRepository::list(const std::optional<std::string>& model) {
    std::string sql = std::string("SELECT ") + kVoteColumns + " FROM votes";
    if (model) sql += " WHERE model_a = ?1 OR model_b = ?1";
    sql += " ORDER BY id";
    auto st = m_db.prepare(sql);
    if (!st) return st.error();
    if (model) st->bind(1, *model);
    std::vector<VoteRecord> out;
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        auto v = readVote(*st);
        if (!v) return Error{"database " + m_db.path() + ": " + v.error().message};
        out.push_back(std::move(*v));
    }
    return out;
}

Result<VoteSummary> VoteRepository::summary(const std::string& modelA, const std::string& modelB) {
    VoteSummary s;
    s.modelA = modelA;
    s.modelB = modelB;
    // Stored as (A, B): winner 'a' is a win of A. Stored as (B, A): winner 'a' is a win of B.
    auto st = m_db.prepare(
        "SELECT model_a = ?1 AS straight, winner, count(*) FROM votes "
        "WHERE (model_a = ?1 AND model_b = ?2) OR (model_a = ?2 AND model_b = ?1) GROUP BY straight, winner");
    if (!st) return st.error();
    st->bind(1, modelA).bind(2, modelB);
    for (;;) {
        auto row = st->step();
        if (!row) return row.error();
        if (!*row) break;
        const bool straight = st->columnInt(0) != 0;
        const auto winner = parseVoteWinner(st->columnText(1));
        const int64_t n = st->columnInt(2);
        s.votes += n;
        if (!winner || *winner == VoteWinner::Tie) s.ties += n;
        else if ((*winner == VoteWinner::A) == straight) s.winsA += n;
        else s.winsB += n;
    }
    s.decided = s.winsA + s.winsB;
    if (s.decided > 0) s.winRateA = static_cast<double>(s.winsA) / static_cast<double>(s.decided);
    s.winRateACi = wilsonInterval(s.winsA, s.decided);
    return s;
}

}  // namespace verdict::core
