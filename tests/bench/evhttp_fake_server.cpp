// The event-driven fake OpenAI streaming server (evhttp_fake_server.h): evhttp routes, one
// persistent libevent timer per stream, and the close callback that ends a stream whose client left.
//
// Who frees what (libevent 2.1, http.c): while a chunked reply is unfinished, a client that goes
// away makes evhttp detach the request from its connection (evhttp_request_get_connection() then
// returns null) and free the connection, calling its close callback; the request is then ours to
// free. When evhttp_free() frees connections at shutdown, the request is still attached and the
// connection frees it. A stream that ends normally clears the close callback before
// evhttp_send_reply_end(), so a close after that never reaches freed state.
#include "evhttp_fake_server.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/thread.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

namespace verdict::test {

using json = nlohmann::json;

namespace {

// Longer than any stream the benchmark asks for: evhttp's read/write timeout (50 s by default)
// would otherwise cut a long stream, and only a client that stops reading should be cut.
constexpr int kIoTimeoutS = 3600;

std::string sseEvent(const json& j) {
    return "data: " + j.dump() + "\n\n";
}

void reply(evhttp_request* req, int code, const char* reason, const std::string& contentType, const std::string& body) {
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", contentType.c_str());
    evbuffer* out = evbuffer_new();
    evbuffer_add(out, body.data(), body.size());
    evhttp_send_reply(req, code, reason, out);
    evbuffer_free(out);
}

void replyError(evhttp_request* req, int code, const char* reason, const std::string& message) {
    reply(req, code, reason, "application/json",
          json{{"error", {{"message", message}, {"type", "invalid_request_error"}}}}.dump());
}

std::string bodyOf(evhttp_request* req) {
    evbuffer* in = evhttp_request_get_input_buffer(req);
    std::string body(evbuffer_get_length(in), '\0');
    if (!body.empty()) evbuffer_copyout(in, body.data(), body.size());
    return body;
}

// Small SSE writes go out at once: with Nagle, a chunk waits for the ACK of the previous one,
// which a delayed ACK holds up to 40 ms, twice the inter-token delay.
void setNoDelay(evhttp_connection* conn) {
    const int fd = bufferevent_getfd(evhttp_connection_get_bufferevent(conn));
    const int one = 1;
    if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

struct EvhttpFakeServer::Stream {
    EvhttpFakeServer* server = nullptr;
    evhttp_request* req = nullptr;
    evhttp_connection* conn = nullptr;
    event* timer = nullptr;
    int maxTokens = 0;
    int sent = 0;                         // content chunks sent so far
    std::string roleEvent;                // chat only
    std::string pieceEvent;               // the same " t" chunk every time
    std::vector<std::string> tailEvents;  // finish_reason chunk, usage chunk (when asked), [DONE]
};

// The C callbacks, with access to the server's private members.
struct EvhttpCallbacks {
    static void models(evhttp_request* req, void* self) { static_cast<EvhttpFakeServer*>(self)->answerModels(req); }
    static void chat(evhttp_request* req, void* self) {
        static_cast<EvhttpFakeServer*>(self)->answerCompletion(req, true);
    }
    static void text(evhttp_request* req, void* self) {
        static_cast<EvhttpFakeServer*>(self)->answerCompletion(req, false);
    }
    static void other(evhttp_request* req, void* self) {
        static_cast<EvhttpFakeServer*>(self)->countRequest(req);
        replyError(req, HTTP_NOTFOUND, "Not Found", std::string("no route ") + evhttp_request_get_uri(req));
    }
    static void tick(evutil_socket_t, short, void* stream) {
        auto* s = static_cast<EvhttpFakeServer::Stream*>(stream);
        s->server->tick(s);
    }
    static void closed(evhttp_connection*, void* stream) {
        auto* s = static_cast<EvhttpFakeServer::Stream*>(stream);
        s->server->clientClosed(s);
    }
};

EvhttpFakeServer::EvhttpFakeServer(EvhttpFakeOptions o) : m_o(std::move(o)) {
    // The loop runs on m_thread while the owner calls event_base_loopexit: libevent's locking must
    // be on before the base exists.
    static std::once_flag threadsOnce;
    static int threadsRc = 0;
    std::call_once(threadsOnce, [] { threadsRc = evthread_use_pthreads(); });
    if (threadsRc != 0) {
        m_error = "libevent has no pthreads support (evthread_use_pthreads failed)";
        return;
    }
    // One socket per stream: raise the soft descriptor limit to the hard one, as bench_load does.
    rlimit lim{};
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    m_created = static_cast<int64_t>(std::time(nullptr));
    m_base = event_base_new();
    m_http = m_base ? evhttp_new(m_base) : nullptr;
    m_chunk = evbuffer_new();
    if (!m_base || !m_http || !m_chunk) {
        m_error = "cannot create the libevent base, evhttp or buffer (out of memory?)";
        return;
    }
    const int itlMs = std::max(0, m_o.interTokenDelayMs);
    m_itlValue = timeval{itlMs / 1000, (itlMs % 1000) * 1000};
    // A thousand timers of one duration: a common timeout keeps them in a queue, not the heap.
    m_itl = itlMs > 0 ? event_base_init_common_timeout(m_base, &m_itlValue) : nullptr;
    if (!m_itl) m_itl = &m_itlValue;
    evhttp_set_timeout(m_http, kIoTimeoutS);
    evhttp_set_allowed_methods(m_http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
    evhttp_set_cb(m_http, "/v1/models", &EvhttpCallbacks::models, this);
    evhttp_set_cb(m_http, "/v1/chat/completions", &EvhttpCallbacks::chat, this);
    evhttp_set_cb(m_http, "/v1/completions", &EvhttpCallbacks::text, this);
    evhttp_set_gencb(m_http, &EvhttpCallbacks::other, this);

    // Our own listener rather than evhttp_bind_socket: that one listens with a backlog of 128.
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    evconnlistener* listener = evconnlistener_new_bind(
        m_base, nullptr, nullptr, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE, m_o.backlog,
        reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
    if (!listener) {
        m_error = std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno);
        return;
    }
    if (!evhttp_bind_listener(m_http, listener)) {  // on success evhttp_free frees the listener
        evconnlistener_free(listener);
        m_error = "evhttp cannot take the listening socket";
        return;
    }
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    if (getsockname(evconnlistener_get_fd(listener), reinterpret_cast<sockaddr*>(&bound), &len) != 0) {
        m_error = std::string("getsockname on the listening socket: ") + std::strerror(errno);
        return;
    }
    m_port = ntohs(bound.sin_port);
    m_thread = std::thread([this] { event_base_dispatch(m_base); });
}

EvhttpFakeServer::~EvhttpFakeServer() {
    if (m_thread.joinable()) {
        event_base_loopexit(m_base, nullptr);
        m_thread.join();
    }
    // The loop is stopped: what follows runs here, on no other thread. evhttp_free frees every
    // connection, whose close callback (clientClosed) forgets its stream.
    if (m_http) evhttp_free(m_http);
    while (!m_streams.empty()) forget(*m_streams.begin());  // none expected; their requests are freed already
    if (m_chunk) evbuffer_free(m_chunk);
    if (m_base) event_base_free(m_base);
}

double EvhttpFakeServer::loopCpuMs() const {
    if (!m_thread.joinable()) return -1;
    clockid_t clock{};
    timespec t{};
    // const_cast: native_handle() is not const, and only reads the id here.
    if (pthread_getcpuclockid(const_cast<std::thread&>(m_thread).native_handle(), &clock) != 0 ||
        clock_gettime(clock, &t) != 0)
        return -1;
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void EvhttpFakeServer::countRequest(evhttp_request* req) {
    ++m_requests;
    evhttp_connection* conn = evhttp_request_get_connection(req);
    if (!conn) return;
    char* address = nullptr;
    ev_uint16_t port = 0;
    evhttp_connection_get_peer(conn, &address, &port);
    if (m_peers.insert(std::string(address ? address : "?") + ":" + std::to_string(port)).second) ++m_connections;
}

void EvhttpFakeServer::answerModels(evhttp_request* req) {
    countRequest(req);
    if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
        replyError(req, 405, "Method Not Allowed", "GET /v1/models");
        return;
    }
    reply(req, HTTP_OK, "OK", "application/json",
          json{{"object", "list"}, {"data", {{{"id", m_o.model}, {"object", "model"}}}}}.dump());
}

void EvhttpFakeServer::answerCompletion(evhttp_request* req, bool chat) {
    countRequest(req);
    if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
        replyError(req, 405, "Method Not Allowed", "completions take POST");
        return;
    }
    const std::string raw = bodyOf(req);
    const json body = json::parse(raw, nullptr, false);
    if (!body.is_object()) {
        replyError(req, HTTP_BADREQUEST, "Bad Request", "the body is not a JSON object");
        return;
    }
    const json& maxTokensField = body.contains("max_tokens") ? body["max_tokens"] : json(16);
    if (!maxTokensField.is_number_integer()) {
        replyError(req, HTTP_BADREQUEST, "Bad Request", "max_tokens is not an integer");
        return;
    }
    const int maxTokens = std::max(0, maxTokensField.get<int>());
    const int64_t promptTokens = static_cast<int64_t>(raw.size() / 4);  // as fake_openai_server.h counts them
    const json usage = {
        {"prompt_tokens", promptTokens}, {"completion_tokens", maxTokens}, {"total_tokens", promptTokens + maxTokens}};
    const std::string id = (chat ? "chatcmpl-fake-" : "cmpl-fake-") + std::to_string(++m_nextId);
    ++m_completions;

    const bool stream = body.contains("stream") && body["stream"].is_boolean() && body["stream"].get<bool>();
    if (!stream) {
        std::string content;
        for (int i = 0; i < maxTokens; ++i) content += " t";
        json choice = {{"index", 0}, {"finish_reason", "length"}};
        if (chat)
            choice["message"] = {{"role", "assistant"}, {"content", content}};
        else
            choice["text"] = content;
        reply(req, HTTP_OK, "OK", "application/json",
              json{{"id", id},
                   {"object", chat ? "chat.completion" : "text_completion"},
                   {"created", m_created},
                   {"model", m_o.model},
                   {"choices", {choice}},
                   {"usage", usage}}
                  .dump());
        return;
    }

    const json head = {{"id", id},
                       {"object", chat ? "chat.completion.chunk" : "text_completion"},
                       {"created", m_created},
                       {"model", m_o.model}};
    auto chunk = [&head](json choices) {
        json j = head;
        j["choices"] = std::move(choices);
        return j;
    };
    auto* s = new Stream;
    s->server = this;
    s->req = req;
    s->conn = evhttp_request_get_connection(req);
    s->maxTokens = maxTokens;
    if (chat) s->roleEvent = sseEvent(chunk({{{"index", 0}, {"delta", {{"role", "assistant"}}}}}));
    s->pieceEvent = sseEvent(chat ? chunk({{{"index", 0}, {"delta", {{"content", " t"}}}}})
                                  : chunk({{{"index", 0}, {"text", " t"}}}));
    s->tailEvents.push_back(
        sseEvent(chat ? chunk({{{"index", 0}, {"delta", json::object()}, {"finish_reason", "length"}}})
                      : chunk({{{"index", 0}, {"text", ""}, {"finish_reason", "length"}}})));
    const bool withUsage = body.contains("stream_options") && body["stream_options"].is_object() &&
                           body["stream_options"].value("include_usage", false);
    if (withUsage) {
        json last = chunk(json::array());
        last["usage"] = usage;
        s->tailEvents.push_back(sseEvent(last));
    }
    s->tailEvents.push_back("data: [DONE]\n\n");
    startStream(s);
}

void EvhttpFakeServer::startStream(Stream* s) {
    if (!s->conn) {  // cannot happen inside a request callback; evhttp keeps the request then
        delete s;
        return;
    }
    m_streams.insert(s);
    const auto open = static_cast<int64_t>(m_streams.size());
    if (open > m_maxStreams.load()) m_maxStreams.store(open);  // only this thread writes it
    setNoDelay(s->conn);
    evhttp_connection_set_closecb(s->conn, &EvhttpCallbacks::closed, s);
    evkeyvalq* headers = evhttp_request_get_output_headers(s->req);
    evhttp_add_header(headers, "Content-Type", "text/event-stream");
    evhttp_add_header(headers, "Cache-Control", "no-cache");
    evhttp_send_reply_start(s->req, HTTP_OK, "OK");
    if (!s->roleEvent.empty()) sendChunk(s, s->roleEvent);
    if (s->maxTokens == 0) {
        endStream(s);
        return;
    }
    sendChunk(s, s->pieceEvent);
    s->sent = 1;
    if (s->sent == s->maxTokens) {
        endStream(s);
        return;
    }
    s->timer = event_new(m_base, -1, EV_PERSIST, &EvhttpCallbacks::tick, s);
    if (!s->timer || event_add(s->timer, m_itl) != 0) {
        // No timer, no stream: cut it short rather than hang the client.
        evhttp_connection_set_closecb(s->conn, nullptr, nullptr);
        evhttp_send_reply_end(s->req);
        forget(s);
    }
}

void EvhttpFakeServer::tick(Stream* s) {
    // EV_PERSIST re-arms from the scheduled time, so the pieces keep their pace without drift.
    sendChunk(s, s->pieceEvent);
    if (++s->sent >= s->maxTokens) endStream(s);
}

void EvhttpFakeServer::sendChunk(Stream* s, const std::string& event) {
    evbuffer_add(m_chunk, event.data(), event.size());
    evhttp_send_reply_chunk(s->req, m_chunk);               // queues it on the connection; written by the loop later
    evbuffer_drain(m_chunk, evbuffer_get_length(m_chunk));  // already empty unless the request lost its connection
}

void EvhttpFakeServer::endStream(Stream* s) {
    for (const std::string& event : s->tailEvents) sendChunk(s, event);  // one HTTP chunk per event, as fake_openai_server.h
    evhttp_connection_set_closecb(s->conn, nullptr, nullptr);
    evhttp_send_reply_end(s->req);  // evhttp frees the request once the last bytes are written
    forget(s);
}

void EvhttpFakeServer::clientClosed(Stream* s) {
    // Detached (the client left): the request is ours to free. Still attached (evhttp_free at
    // shutdown): the connection being freed frees it.
    if (!evhttp_request_get_connection(s->req)) {
        evhttp_request_free(s->req);
        ++m_disconnects;
    }
    forget(s);
}

void EvhttpFakeServer::forget(Stream* s) {
    if (s->timer) event_free(s->timer);  // also when called from its own callback: libevent allows it
    m_streams.erase(s);
    delete s;
}

}  // namespace verdict::test
