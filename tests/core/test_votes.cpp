// Comparison votes (core/store/vote_repository.h): add/list/summary, the head-to-head counted in
// either stored order, the Wilson interval of A's win rate (hand-computed below), validation,
// and kill-safety: a vote committed by a process that is then SIGKILLed is in the file.
#include "core/store/database.h"
#include "core/store/store.h"
#include "core/store/vote_repository.h"

#include <QtTest/QtTest>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace verdict;
using namespace verdict::core;

namespace {

VoteRecord makeVote(const std::string& a, const std::string& b, VoteWinner w, const std::string& prompt = "p") {
    VoteRecord v;
    v.modelA = a;
    v.modelB = b;
    v.prompt = prompt;
    v.answerA = "answer of " + a;
    v.answerB = "answer of " + b;
    v.winner = w;
    return v;
}

}  // namespace

class TestVotes : public QObject {
    Q_OBJECT
private slots:
    void winnerNames() {
        QCOMPARE(voteWinnerName(VoteWinner::A), std::string_view("a"));
        QCOMPARE(voteWinnerName(VoteWinner::B), std::string_view("b"));
        QCOMPARE(voteWinnerName(VoteWinner::Tie), std::string_view("tie"));
        QVERIFY(parseVoteWinner("a") == VoteWinner::A);
        QVERIFY(parseVoteWinner("tie") == VoteWinner::Tie);
        QVERIFY(!parseVoteWinner("A").has_value());
        QVERIFY(!parseVoteWinner("").has_value());
    }

    void addAndList() {
        QTemporaryDir dir;
        auto db = openStore(dir.filePath("v.db").toStdString());
        QVERIFY(db.ok());
        VoteRepository repo(*db);
        VoteRecord v = makeVote("/m/a.gguf", "http://127.0.0.1:8080/v1 qwen", VoteWinner::B, "Why is the sky blue?");
        v.shaA = std::string(64, 'f');
        v.blind = true;
        v.settings = {{"temperature", 0.7}, {"seed", 42}};
        auto id = repo.add(v);
        QVERIFY2(id.ok(), id.ok() ? "" : id.error().message.c_str());
        QVERIFY(*id > 0);
        auto id2 = repo.add(makeVote("/m/a.gguf", "/m/c.gguf", VoteWinner::Tie));
        QVERIFY(id2.ok());
        QVERIFY(*id2 > *id);

        auto all = repo.list();
        QVERIFY(all.ok());
        QCOMPARE(all->size(), size_t(2));
        const VoteRecord& r = all->front();
        QCOMPARE(r.id, *id);
        QCOMPARE(r.modelA, v.modelA);
        QCOMPARE(r.modelB, v.modelB);
        QCOMPARE(r.shaA, v.shaA);
        QCOMPARE(r.shaB, std::string());
        QCOMPARE(r.prompt, std::string("Why is the sky blue?"));
        QCOMPARE(r.answerB, v.answerB);
        QVERIFY(r.winner == VoteWinner::B);
        QVERIFY(r.blind);
        QCOMPARE(r.settings, v.settings);
        QCOMPARE(r.createdAt.size(), size_t(24));  // YYYY-MM-DDTHH:MM:SS.mmmZ, set by add()

        auto onlyC = repo.list(std::string("/m/c.gguf"));
        QVERIFY(onlyC.ok());
        QCOMPARE(onlyC->size(), size_t(1));
        QCOMPARE(onlyC->front().id, *id2);
        auto none = repo.list(std::string("/m/zzz.gguf"));
        QVERIFY(none.ok() && none->empty());
    }

    void invalidVotesAreRefused() {
        QTemporaryDir dir;
        auto db = openStore(dir.filePath("v.db").toStdString());
        QVERIFY(db.ok());
        VoteRepository repo(*db);
        auto empty = repo.add(makeVote("", "/b.gguf", VoteWinner::A));
        QVERIFY(!empty.ok());
        auto same = repo.add(makeVote("/b.gguf", "/b.gguf", VoteWinner::A));
        QVERIFY(!same.ok());
        QVERIFY2(same.error().message.find("/b.gguf") != std::string::npos, same.error().message.c_str());
        VoteRecord bad = makeVote("/a.gguf", "/b.gguf", VoteWinner::A);
        bad.settings = nlohmann::json::array({1, 2});
        QVERIFY(!repo.add(bad).ok());
        QVERIFY(repo.list()->empty());
    }

    // A vs B: A wins 7 (6 stored as (A,B) winner a, 1 stored as (B,A) winner b), B wins 4 (3 + 1
    // reversed), 2 ties (1 + 1 reversed); an A vs C vote does not count.
    // A's win rate = 7 / 11 decided. Wilson 95 % (z = 1.959964, n = 11, p = 7/11 = 0.636364):
    //   z^2/n = 0.349235; centre = (0.636364 + 0.174617) / 1.349235 = 0.601066
    //   half = z / 1.349235 * sqrt(0.636364*0.363636/11 + 3.841459/484) = 1.452659 * 0.170218 = 0.247269
    //   -> [0.353798, 0.848335]
    void summaryCountsBothOrders() {
        QTemporaryDir dir;
        auto db = openStore(dir.filePath("v.db").toStdString());
        QVERIFY(db.ok());
        VoteRepository repo(*db);
        const std::string a = "/m/a.gguf", b = "http://h:1/v1 b";
        for (int i = 0; i < 6; ++i) QVERIFY(repo.add(makeVote(a, b, VoteWinner::A)).ok());
        QVERIFY(repo.add(makeVote(b, a, VoteWinner::B)).ok());
        for (int i = 0; i < 3; ++i) QVERIFY(repo.add(makeVote(a, b, VoteWinner::B)).ok());
        QVERIFY(repo.add(makeVote(b, a, VoteWinner::A)).ok());
        QVERIFY(repo.add(makeVote(a, b, VoteWinner::Tie)).ok());
        QVERIFY(repo.add(makeVote(b, a, VoteWinner::Tie)).ok());
        QVERIFY(repo.add(makeVote(a, "/m/c.gguf", VoteWinner::A)).ok());

        auto s = repo.summary(a, b);
        QVERIFY(s.ok());
        QCOMPARE(s->votes, int64_t(13));
        QCOMPARE(s->winsA, int64_t(7));
        QCOMPARE(s->winsB, int64_t(4));
        QCOMPARE(s->ties, int64_t(2));
        QCOMPARE(s->decided, int64_t(11));
        QVERIFY(s->winRateA.has_value());
        QVERIFY(std::abs(*s->winRateA - 7.0 / 11.0) < 1e-12);
        QVERIFY2(std::abs(s->winRateACi.lo - 0.353798) < 1e-5, std::to_string(s->winRateACi.lo).c_str());
        QVERIFY2(std::abs(s->winRateACi.hi - 0.848335) < 1e-5, std::to_string(s->winRateACi.hi).c_str());

        // From B's side the counts swap and the interval mirrors.
        auto r = repo.summary(b, a);
        QVERIFY(r.ok());
        QCOMPARE(r->winsA, int64_t(4));
        QCOMPARE(r->winsB, int64_t(7));
        QVERIFY(std::abs(r->winRateACi.lo - (1 - 0.848335)) < 1e-5);

        // Only ties: nothing decided, no win rate, the interval says nothing is known.
        QVERIFY(repo.add(makeVote("/x.gguf", "/y.gguf", VoteWinner::Tie)).ok());
        auto t = repo.summary("/x.gguf", "/y.gguf");
        QVERIFY(t.ok());
        QCOMPARE(t->votes, int64_t(1));
        QCOMPARE(t->ties, int64_t(1));
        QCOMPARE(t->decided, int64_t(0));
        QVERIFY(!t->winRateA.has_value());
        QCOMPARE(t->winRateACi.lo, 0.0);
        QCOMPARE(t->winRateACi.hi, 1.0);
        auto nothing = repo.summary("/x.gguf", "/nope.gguf");
        QVERIFY(nothing.ok());
        QCOMPARE(nothing->votes, int64_t(0));
    }

    // The vote is committed before add() returns: a process SIGKILLed right after add() leaves
    // it in the file for the next reader.
    void voteSurvivesKill() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("kill.db").toStdString();
        { QVERIFY(openStore(path).ok()); }
        const pid_t pid = fork();
        QVERIFY(pid >= 0);
        if (pid == 0) {
            auto db = openStore(path);
            if (!db) _exit(2);
            auto id = VoteRepository(*db).add(makeVote("/a.gguf", "/b.gguf", VoteWinner::A, "killed"));
            if (!id) _exit(3);
            raise(SIGKILL);  // no destructor, no close: only what was committed survives
            _exit(4);
        }
        int status = 0;
        QCOMPARE(waitpid(pid, &status, 0), pid);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child did not reach its SIGKILL");
        auto db = openStore(path);
        QVERIFY(db.ok());
        auto votes = VoteRepository(*db).list();
        QVERIFY(votes.ok());
        QCOMPARE(votes->size(), size_t(1));
        QCOMPARE(votes->front().prompt, std::string("killed"));
    }

    // While another connection holds the write lock, add() fails after the busy timeout and
    // leaves nothing behind; once the lock is released it succeeds.
    void addIsOneTransaction() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("lock.db").toStdString();
        { QVERIFY(openStore(path).ok()); }
        auto holder = Database::open(path);
        QVERIFY(holder.ok());
        Database::Options quick;
        quick.busyTimeoutMs = 50;
        auto db = Database::open(path, quick);
        QVERIFY(db.ok());
        VoteRepository repo(*db);
        {
            auto tx = Transaction::begin(*holder);
            QVERIFY(tx.ok());
            auto r = repo.add(makeVote("/a.gguf", "/b.gguf", VoteWinner::A));
            QVERIFY(!r.ok());
        }
        QVERIFY(repo.list()->empty());
        QVERIFY(repo.add(makeVote("/a.gguf", "/b.gguf", VoteWinner::A)).ok());
        QCOMPARE(repo.list()->size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestVotes)
#include "test_votes.moc"
