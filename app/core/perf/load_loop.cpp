// The load generator's machinery (load_loop.h): reading a completion response, and running one
// load level on a single event-loop thread. The public API and the results' bookkeeping are in
// load_runner.cpp.
#include "core/perf/load_loop.h"

#include "core/net/curl_request.h"
#include "core/net/openai_response.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <unordered_map>

#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

namespace verdict::core::load_detail {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double msBetween(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

// A prompt of n pseudo-random common words (seeded): the server's tokenizer decides the count.
std::string randomPrompt(std::mt19937_64& rng, int words) {
    static const char* const kWords[] = {"the", "model", "time", "river", "small", "green", "number", "city", "write",
                                         "answer", "quick", "story", "light", "water", "house", "paper", "seven",
                                         "bright", "table", "music", "north", "garden", "simple", "engine", "cloud"};
    std::string s = "Continue the text:";
    for (int i = 0; i < words; ++i) {
        s += ' ';
        s += kWords[rng() % (sizeof kWords / sizeof *kWords)];
    }
    return s;
}

bool retryable(const std::string& kind) {
    return kind == "http_429" || kind == "http_5xx" || kind == "timeout" || kind == "connect" || kind == "dropped";
}

std::string errorKindOf(const std::string& message) {
    if (message.find("timed out") != std::string::npos || message.find("timeout") != std::string::npos) return "timeout";
    if (message.find("cannot connect") != std::string::npos || message.find("cannot resolve") != std::string::npos)
        return "connect";
    if (message.find("TLS with") != std::string::npos) return "tls";
    if (message.find("cancelled") != std::string::npos) return "cancelled";
    if (message.find("connection lost") != std::string::npos || message.find("body ended early") != std::string::npos ||
        message.find("closed the connection") != std::string::npos)
        return "dropped";
    return "protocol";
}

json completionBody(const EndpointConfig& e, const std::string& prompt, int maxTokens, bool ignoreEos) {
    json body = {{"model", e.model}, {"max_tokens", maxTokens}, {"temperature", 0}, {"stream", e.stream}};
    if (ignoreEos) body["ignore_eos"] = true;
    if (e.stream) body["stream_options"] = {{"include_usage", true}};
    if (e.chat) body["messages"] = json::array({{{"role", "user"}, {"content", prompt}}});
    else body["prompt"] = prompt;
    return body;
}

std::string completionUrl(const EndpointConfig& e) {
    return endpointUrl(e, e.chat ? EndpointRoute::Chat : EndpointRoute::Completions);
}

// Reads one completion response as its bytes arrive (SSE events, or the whole JSON body when not
// streamed) and turns it into a RequestTiming relative to `start`. One reader per attempt; the
// blocking path (sendCompletion) and the event loop (LevelLoop) share it.
class CompletionReader {
public:
    CompletionReader(const EndpointConfig& e, Clock::time_point start, int maxTokens)
        : m_stream(e.stream), m_start(start), m_maxTokens(maxTokens) {}

    bool feed(std::string_view d) {
        if (m_head.size() < 512) m_head.append(d.substr(0, 512 - m_head.size()));
        if (m_stream) m_sse.feed(d, [this](const std::string& data) { onEvent(data); });
        else m_raw.append(d);
        return true;
    }

    // Fills t (timings, token counts), text, and kind ("" on success; else the error kind with
    // t.error), and *retryAfterMs for a 429 / 5xx that carried Retry-After.
    void finish(const Result<net::HttpResponse>& resp, Clock::time_point end, RequestTiming& t, std::string& text,
                std::string& kind, double* retryAfterMs) {
        if (!resp) {
            t.error = resp.error().message;
            kind = errorKindOf(t.error);
            return;
        }
        if (resp->status != 200) {
            kind = resp->status == 429 ? "http_429" : resp->status >= 500 ? "http_5xx" : "http_4xx";
            if (retryAfterMs) *retryAfterMs = retryAfterMsOf(*resp);
            t.error = "HTTP " + std::to_string(resp->status) + ": " + m_head.substr(0, 300);
            return;
        }
        if (!m_stream) {
            auto completion = net::parseOpenAiCompletion(m_raw);
            if (!completion) {
                kind = "protocol";
                t.error = "the response is not a completion: " + m_raw.substr(0, 200);
                return;
            }
            m_text = std::move(completion->text);
            if (completion->usage) {
                m_usagePrompt = completion->usage->promptTokens.value_or(-1);
                m_usageCompletion = completion->usage->completionTokens.value_or(-1);
                m_reasoningTokens = completion->usage->reasoningTokens.value_or(0);
            }
            t.ttftMs = t.e2eMs = msBetween(m_start, end);  // no stream: the first token arrives with the last
        } else {
            if (!m_protocolError.empty()) {
                kind = "protocol";
                t.error = m_protocolError;
                return;
            }
            if (m_arrivals.empty()) {
                kind = "protocol";
                t.error = "the stream ended without any token";
                return;
            }
            t.ttftMs = m_arrivals.front();
            t.e2eMs = m_arrivals.back();
            t.ttfaMs = m_ttfaMs;
            for (size_t i = 1; i < m_arrivals.size(); ++i) t.itlMs.push_back(m_arrivals[i] - m_arrivals[i - 1]);
        }
        t.promptTokens = std::max<int64_t>(m_usagePrompt, 0);
        t.outputTokens = m_usageCompletion >= 0 ? m_usageCompletion : static_cast<int64_t>(m_arrivals.size());
        t.reasoningTokens = m_reasoningTokens;
        t.tokens.usagePrompt = m_usagePrompt;
        t.tokens.usageOutput = m_usageCompletion;
        t.tokens.chunks = static_cast<int64_t>(m_arrivals.size());
        t.tokens.maxTokens = m_maxTokens;
        text = std::move(m_text);
        kind.clear();
    }

private:
    void onEvent(const std::string& data) {
        const net::OpenAiStreamChunk c = net::parseOpenAiStreamChunk(data);
        if (c.done) return;
        if (!c.object) {
            m_protocolError = "an event is not JSON: " + data.substr(0, 80);
            return;
        }
        if (c.error) {
            m_protocolError = "stream error: " + c.error->substr(0, 200);
            return;
        }
        if (c.usage) {
            m_usagePrompt = c.usage->promptTokens.value_or(-1);
            m_usageCompletion = c.usage->completionTokens.value_or(-1);
            m_reasoningTokens = c.usage->reasoningTokens.value_or(0);
        }
        // Role-only or empty chunks carry no token (AIPerf ignores them too); a reasoning piece is a
        // token (TTFT counts it), and the first answer piece after reasoning sets TTFA.
        if (c.piece.empty() && c.reasoningPiece.empty()) return;
        m_arrivals.push_back(msBetween(m_start, Clock::now()));
        if (c.piece.empty()) {
            m_sawReasoning = true;
            return;
        }
        if (m_sawReasoning && m_ttfaMs == 0) m_ttfaMs = m_arrivals.back();
        m_text += c.piece;
    }

    bool m_stream;
    Clock::time_point m_start;
    int m_maxTokens;
    net::SseParser m_sse;
    std::string m_raw, m_head, m_text, m_protocolError;
    std::vector<double> m_arrivals;
    int64_t m_usagePrompt = -1, m_usageCompletion = -1, m_reasoningTokens = 0;
    double m_ttfaMs = 0;
    bool m_sawReasoning = false;
};

// When each request of a level should leave. Closed loop: `clients` clients (started over
// rampUpS), each sending its next request when the previous one ends. Open loop: arrivals at
// `rate` requests/s with gamma-distributed gaps (shape = burstiness; 1 = Poisson, as vLLM's
// benchmark draws them), the rate rising linearly from 0 over rampUpS. Trace: the rows' times.
struct Arrival {
    double atMs = 0;   // from the level's start
    int client = -1;   // closed loop
    int promptWords = 0;
    int maxTokens = 0;
};

// One logical request: its attempts (retries) and what they measured.
struct Flight {
    Arrival arrival;
    uint64_t seed = 0;
    std::string prompt;
    Clock::time_point start;       // the first attempt's send
    double scheduleDelayMs = 0;    // how late the first attempt left against arrival.atMs
    int attempt = 0;
    RequestTiming t;
    std::string text, kind;
    std::unique_ptr<CompletionReader> reader;
    std::unique_ptr<net::CurlRequest> request;
};

// Runs one level on a single thread: every request is a libcurl easy handle on one multi handle,
// driven by epoll through curl_multi_socket_action (no thread per request), so a thousand
// streams cost one thread and their sockets. Arrivals and retries wait in a time-ordered queue;
// how late each request left against its schedule is recorded (GuideLLM's scheduling delay).
class LevelLoop {
public:
    LevelLoop(const EndpointConfig& e, const LoadSpec& spec, LoadLevelResult& res, const std::atomic<bool>* cancel,
              const std::function<void(const LoadProgress&)>& progress, uint64_t levelSeed)
        : m_e(e), m_spec(spec), m_res(res), m_cancel(cancel), m_progress(progress), m_levelSeed(levelSeed),
          m_options(endpointClientOptions(e, 0, nullptr)), m_headers(endpointHeaders(e)), m_gapRng(levelSeed) {}

    Result<void> run() {
        m_epoll = ::epoll_create1(EPOLL_CLOEXEC);
        if (m_epoll < 0) return Error{std::string("epoll_create1: ") + std::strerror(errno)};
        m_multi = curl_multi_init();
        if (!m_multi) return Error{"cannot initialise libcurl"};
        curl_multi_setopt(m_multi, CURLMOPT_SOCKETFUNCTION, &LevelLoop::onSocket);
        curl_multi_setopt(m_multi, CURLMOPT_SOCKETDATA, this);
        curl_multi_setopt(m_multi, CURLMOPT_TIMERFUNCTION, &LevelLoop::onTimer);
        curl_multi_setopt(m_multi, CURLMOPT_TIMERDATA, this);
        m_t0 = Clock::now();
        timespec cpu0{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
        seed();
        epoll_event events[512];
        auto lastChecks = m_t0;
        while (!(m_queue.empty() && m_active.empty() && !m_openNext)) {
            if (m_cancel && m_cancel->load()) {
                cancelAll();
                break;
            }
            startDue();
            if (m_queue.empty() && m_active.empty() && !m_openNext) break;
            const auto now = Clock::now();
            double waitMs = 100;
            if (const auto next = nextDueMs()) waitMs = std::min(waitMs, *next - msBetween(m_t0, now));
            if (m_curlDeadline) waitMs = std::min(waitMs, msBetween(now, *m_curlDeadline));
            waitMs = std::max(0.0, waitMs);
            const timespec ts{static_cast<time_t>(waitMs / 1000), static_cast<long>(std::fmod(waitMs, 1000.0) * 1e6)};
            int n = ::epoll_pwait2(m_epoll, events, 512, &ts, nullptr);
            if (n < 0 && errno == ENOSYS) n = ::epoll_wait(m_epoll, events, 512, static_cast<int>(std::ceil(waitMs)));
            int running = 0;
            for (int i = 0; i < n; ++i) {
                int flags = 0;
                if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
                if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
                if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
                curl_multi_socket_action(m_multi, events[i].data.fd, flags, &running);
            }
            if (m_curlDeadline && Clock::now() >= *m_curlDeadline) {
                m_curlDeadline.reset();
                curl_multi_socket_action(m_multi, CURL_SOCKET_TIMEOUT, 0, &running);
            }
            collectDone();
            if (Clock::now() - lastChecks >= std::chrono::milliseconds(100)) {
                lastChecks = Clock::now();
                expireIdle();
                reportProgress();
            }
        }
        timespec cpu1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
        m_res.clientCpuMs = (static_cast<double>(cpu1.tv_sec - cpu0.tv_sec) * 1e3 + static_cast<double>(cpu1.tv_nsec - cpu0.tv_nsec) / 1e6);
        m_res.windowS = std::chrono::duration<double>(Clock::now() - m_t0).count();
        if (m_spec.tokenCounter) countTokens();
        return {};
    }

    ~LevelLoop() {
        for (auto& [easy, f] : m_active) curl_multi_remove_handle(m_multi, easy);
        m_active.clear();
        if (m_multi) curl_multi_cleanup(m_multi);
        if (m_epoll >= 0) ::close(m_epoll);
    }
    LevelLoop(const LevelLoop&) = delete;
    LevelLoop& operator=(const LevelLoop&) = delete;

private:
    struct Pending {
        size_t index;  // into m_res.requests
        std::string prompt, text;
    };

    struct Due {
        double atMs;
        uint64_t order;
        std::shared_ptr<Flight> flight;
        bool operator>(const Due& o) const { return atMs != o.atMs ? atMs > o.atMs : order > o.order; }
    };

    static int onSocket(CURL*, curl_socket_t fd, int what, void* self, void*) {
        auto* l = static_cast<LevelLoop*>(self);
        if (what == CURL_POLL_REMOVE) {
            ::epoll_ctl(l->m_epoll, EPOLL_CTL_DEL, fd, nullptr);
            return 0;
        }
        epoll_event ev{};
        ev.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
        ev.data.fd = fd;
        if (::epoll_ctl(l->m_epoll, EPOLL_CTL_MOD, fd, &ev) != 0) ::epoll_ctl(l->m_epoll, EPOLL_CTL_ADD, fd, &ev);
        return 0;
    }
    static int onTimer(CURLM*, long timeoutMs, void* self) {
        auto* l = static_cast<LevelLoop*>(self);
        if (timeoutMs < 0) l->m_curlDeadline.reset();
        else l->m_curlDeadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
        return 0;
    }

    bool closedLoop() const { return m_res.mode == "concurrency"; }
    // The level's budget: a request count, else the duration (arrivals after it are not sent).
    bool withinBudget(double atMs) const {
        if (m_res.mode == "trace") return true;  // the trace is the budget
        if (m_spec.requests > 0) return m_issued < m_spec.requests;
        return atMs < m_spec.durationS * 1000;
    }

    void seed() {
        if (closedLoop()) {
            const int clients = static_cast<int>(m_res.level);
            for (int c = 0; c < clients; ++c) {
                Arrival a;
                a.client = c;
                a.atMs = m_spec.rampUpS > 0 ? m_spec.rampUpS * 1000 * c / clients : 0;
                a.promptWords = m_spec.promptWords;
                a.maxTokens = m_spec.maxTokens;
                if (!withinBudget(a.atMs)) break;
                enqueueNew(a);
            }
        } else {
            pullOpen();
        }
    }

    // Open loop and trace: one arrival waits in m_openNext, the next is drawn when it is queued.
    void pullOpen() {
        m_openNext.reset();
        Arrival a;
        if (m_res.mode == "trace") {
            if (m_traceIndex >= m_spec.trace.size()) return;
            const TraceEntry& row = m_spec.trace[m_traceIndex++];
            a.atMs = row.timestampMs;
            a.promptWords = row.inputWords;
            a.maxTokens = row.outputTokens;
        } else {
            const double rate = m_res.level;
            const double burst = m_spec.burstiness > 0 ? m_spec.burstiness : 1.0;
            const double nowS = m_lastArrivalMs / 1000;
            const double ramp = m_spec.rampUpS > 0 ? std::clamp((nowS + 0.5 / rate) / m_spec.rampUpS, 0.01, 1.0) : 1.0;
            std::gamma_distribution<double> gap(burst, 1.0 / (rate * ramp * burst));
            m_lastArrivalMs += gap(m_gapRng) * 1000;
            a.atMs = m_lastArrivalMs;
            a.promptWords = m_spec.promptWords;
            a.maxTokens = m_spec.maxTokens;
        }
        if (!withinBudget(a.atMs)) return;
        m_openNext = a;
    }

    void enqueueNew(const Arrival& a) {
        auto f = std::make_shared<Flight>();
        f->arrival = a;
        f->seed = m_levelSeed * 7919 + static_cast<uint64_t>(m_issued);
        ++m_issued;
        m_queue.push(Due{a.atMs, m_order++, std::move(f)});
    }

    std::optional<double> nextDueMs() const {
        std::optional<double> next;
        if (!m_queue.empty()) next = m_queue.top().atMs;
        if (m_openNext) next = next ? std::min(*next, m_openNext->atMs) : m_openNext->atMs;
        return next;
    }

    void startDue() {
        for (;;) {
            const double nowMs = msBetween(m_t0, Clock::now());
            if (m_openNext && m_openNext->atMs <= nowMs) {
                enqueueNew(*m_openNext);
                pullOpen();
                continue;
            }
            if (m_queue.empty() || m_queue.top().atMs > nowMs) return;
            std::shared_ptr<Flight> f = m_queue.top().flight;
            m_queue.pop();
            start(f);
        }
    }

    void start(const std::shared_ptr<Flight>& f) {
        const auto now = Clock::now();
        if (f->attempt == 0) {
            if (!closedLoop() && static_cast<int>(m_active.size()) >= m_spec.maxInFlight) {
                RequestTiming t;
                t.startMs = f->arrival.atMs;
                t.error = "client_overload";
                ++m_res.errors["client_overload"];
                m_res.requests.push_back(std::move(t));
                ++m_failed;
                return;
            }
            std::mt19937_64 rng(f->seed);
            f->prompt = randomPrompt(rng, f->arrival.promptWords);
            f->start = now;
            f->scheduleDelayMs = std::max(0.0, msBetween(m_t0, now) - f->arrival.atMs);
        }
        f->t = RequestTiming{};
        f->reader = std::make_unique<CompletionReader>(m_e, f->start, f->arrival.maxTokens);
        CompletionReader* reader = f->reader.get();
        auto made = net::CurlRequest::make("POST", completionUrl(m_e), m_headers,
                                           completionBody(m_e, f->prompt, f->arrival.maxTokens, m_spec.ignoreEos).dump(),
                                           m_options, [reader](std::string_view d) { return reader->feed(d); });
        if (!made) {
            finishAttempt(f, made.error());
            return;
        }
        f->request = std::move(*made);
        if (curl_multi_add_handle(m_multi, f->request->easy()) != CURLM_OK) {
            finishAttempt(f, Error{completionUrl(m_e) + ": cannot start the request (libcurl)"});
            return;
        }
        m_active.emplace(f->request->easy(), f);
    }

    void collectDone() {
        int left = 0;
        while (CURLMsg* m = curl_multi_info_read(m_multi, &left)) {
            if (m->msg != CURLMSG_DONE) continue;
            CURL* easy = m->easy_handle;
            const CURLcode rc = m->data.result;
            auto it = m_active.find(easy);
            if (it == m_active.end()) continue;
            std::shared_ptr<Flight> f = it->second;
            m_active.erase(it);
            curl_multi_remove_handle(m_multi, easy);
            finishAttempt(f, f->request->finish(rc));
        }
    }

    void expireIdle() {
        const auto now = Clock::now();
        std::vector<CURL*> idle;
        for (const auto& [easy, f] : m_active)
            if (now - f->request->lastActivity() >= std::chrono::milliseconds(m_options.readTimeoutMs)) idle.push_back(easy);
        for (CURL* easy : idle) {
            std::shared_ptr<Flight> f = m_active[easy];
            m_active.erase(easy);
            curl_multi_remove_handle(m_multi, easy);
            finishAttempt(f, Error{completionUrl(m_e) + ": no data for " + std::to_string(m_options.readTimeoutMs) + " ms (read timeout)"});
        }
    }

    void cancelAll() {
        for (auto& [easy, f] : m_active) {
            curl_multi_remove_handle(m_multi, easy);
            f->request.reset();
            record(*f, "cancelled", completionUrl(m_e) + ": cancelled");
        }
        m_active.clear();
        while (!m_queue.empty()) m_queue.pop();
        m_openNext.reset();
    }

    void finishAttempt(const std::shared_ptr<Flight>& f, const Result<net::HttpResponse>& resp) {
        double retryAfterMs = 0;
        f->reader->finish(resp, Clock::now(), f->t, f->text, f->kind, &retryAfterMs);
        f->request.reset();
        f->reader.reset();
        const bool cancelled = m_cancel && m_cancel->load();
        if (!f->kind.empty() && retryable(f->kind) && f->attempt < m_spec.maxRetries && !cancelled) {
            std::mt19937_64 rng(f->seed + static_cast<uint64_t>(f->attempt) + 1);
            const double delay = retryDelayMs(f->attempt, m_spec.backoffMs, retryAfterMs, rng);
            ++f->attempt;
            ++m_res.retries;
            m_queue.push(Due{msBetween(m_t0, Clock::now()) + delay, m_order++, f});
            return;
        }
        record(*f, f->kind, f->t.error);
        if (closedLoop() && !cancelled) {  // this client sends its next request now
            Arrival next = f->arrival;
            next.atMs = msBetween(m_t0, Clock::now());
            if (withinBudget(next.atMs)) enqueueNew(next);
        }
    }

    // `error` by value: callers pass f.t.error, which the move below empties.
    void record(Flight& f, const std::string& kind, std::string error) {
        RequestTiming t = std::move(f.t);
        t.startMs = msBetween(m_t0, f.start);
        t.scheduleDelayMs = f.scheduleDelayMs;
        if (!kind.empty()) {
            t.error = error.empty() ? kind : error;
            ++m_res.errors[kind];
            ++m_failed;
        } else {
            ++m_completed;
            if (m_spec.tokenCounter) m_toCount.push_back({m_res.requests.size(), std::move(f.prompt), std::move(f.text)});
        }
        m_res.requests.push_back(std::move(t));
    }

    // The client's own token counts, after the level (so that tokenizing never delays a request
    // nor shows in the generator's CPU time). The server's usage stays the figure used when it
    // came; without it the count replaces the chunk count.
    void countTokens() {
        const TokenCounter& counter = *m_spec.tokenCounter;
        for (Pending& p : m_toCount) {
            RequestTiming& t = m_res.requests[p.index];
            t.tokens.countedPrompt = counter.promptTokens(p.prompt, m_e.chat);
            t.tokens.countedOutput = counter.outputTokens(p.text);
            if (t.tokens.usagePrompt < 0) t.promptTokens = t.tokens.countedPrompt;
            if (t.tokens.usageOutput < 0) t.outputTokens = t.tokens.countedOutput;
        }
        m_toCount.clear();
    }

    void reportProgress() {
        if (!m_progress) return;
        m_progress(LoadProgress{m_res.mode, m_res.level, m_completed, m_failed,
                                std::chrono::duration<double>(Clock::now() - m_t0).count()});
    }

    const EndpointConfig& m_e;
    const LoadSpec& m_spec;
    LoadLevelResult& m_res;
    const std::atomic<bool>* m_cancel;
    const std::function<void(const LoadProgress&)>& m_progress;
    uint64_t m_levelSeed;
    net::HttpClientOptions m_options;
    std::map<std::string, std::string> m_headers;
    std::mt19937_64 m_gapRng;
    int m_epoll = -1;
    CURLM* m_multi = nullptr;
    std::optional<Clock::time_point> m_curlDeadline;
    Clock::time_point m_t0;
    std::priority_queue<Due, std::vector<Due>, std::greater<Due>> m_queue;
    std::optional<Arrival> m_openNext;
    double m_lastArrivalMs = 0;
    size_t m_traceIndex = 0;
    uint64_t m_order = 0;
    int64_t m_issued = 0, m_completed = 0, m_failed = 0;
    std::unordered_map<CURL*, std::shared_ptr<Flight>> m_active;
    std::vector<Pending> m_toCount;  // completed requests to count (spec.tokenCounter set)
};

}  // namespace

Result<void> runLevel(const EndpointConfig& e, const LoadSpec& spec, LoadLevelResult& res, const std::atomic<bool>* cancel,
                      const std::function<void(const LoadProgress&)>& progress, uint64_t levelSeed) {
    LevelLoop loop(e, spec, res, cancel, progress, levelSeed);
    return loop.run();
}


// A thousand streams need a thousand sockets: the soft limit on open files (often 1024) is raised
// to the hard one when the level needs more than it allows.
void raiseOpenFileLimit(const LoadSpec& spec) {
    size_t need = spec.trace.size() + 64;
    for (int c : spec.concurrency) need = std::max(need, static_cast<size_t>(c) + 64);
    if (!spec.rates.empty()) need = std::max(need, static_cast<size_t>(spec.maxInFlight) + 64);
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= need) return;
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
}

// One blocking attempt (sendCompletion). Fills timing (relative to `start`), text, and the error kind.
void attempt(const EndpointConfig& e, const std::string& prompt, int maxTokens, bool ignoreEos, Clock::time_point start,
             RequestTiming& t, std::string& text, std::string& kind, const std::atomic<bool>* cancel, double* retryAfterMs) {
    CompletionReader reader(e, start, maxTokens);
    auto resp = net::httpRequest("POST", completionUrl(e), endpointHeaders(e), completionBody(e, prompt, maxTokens, ignoreEos).dump(),
                                 endpointClientOptions(e, 0, cancel), [&](std::string_view d) { return reader.feed(d); });
    reader.finish(resp, Clock::now(), t, text, kind, retryAfterMs);
}

}  // namespace verdict::core::load_detail
