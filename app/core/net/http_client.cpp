// The HTTP client on libcurl (see http.h). One easy handle and one multi handle per thread,
// reused between requests so that a kept-alive connection (and its TLS session) serves the next
// request to the same host. The multi interface is used even for one transfer so that the loop
// wakes every 100 ms to see a cancel flag and to enforce the idle timeout in milliseconds (libcurl's
// own low-speed limit counts whole seconds).
#include "core/net/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>

namespace verdict::core::net {
namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

void initCurlOnce() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });  // never cleaned up: threads may outlive main
}

// This thread's handles. Destroyed when the thread ends, closing its pooled connections.
struct CurlThreadState {
    CURLM* multi = nullptr;
    CURL* easy = nullptr;
    CurlThreadState() {
        initCurlOnce();
        multi = curl_multi_init();
        easy = curl_easy_init();
        if (multi) curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 16L);
    }
    ~CurlThreadState() {
        if (easy) curl_easy_cleanup(easy);
        if (multi) curl_multi_cleanup(multi);
    }
    CurlThreadState(const CurlThreadState&) = delete;
    CurlThreadState& operator=(const CurlThreadState&) = delete;
};

CurlThreadState& threadState() {
    thread_local CurlThreadState state;
    return state;
}

// What the callbacks share with the request loop.
struct Transfer {
    HttpResponse* resp = nullptr;
    const std::function<bool(std::string_view)>* onData = nullptr;
    size_t maxBodyBytes = 0;
    size_t total = 0;
    bool stopped = false;      // onData asked to stop: not an error
    bool overLimit = false;
    Clock::time_point lastActivity;
};

size_t onHeader(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    t->lastActivity = Clock::now();
    std::string_view line(data, len);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.rfind("HTTP/", 0) == 0) {  // a new response head (after a 100 Continue, say): start over
        t->resp->headers.clear();
        return len;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return len;
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    t->resp->headers[lower(std::string(line.substr(0, colon)))] = std::string(v);
    return len;
}

size_t onBody(char* data, size_t size, size_t n, void* user) {
    auto* t = static_cast<Transfer*>(user);
    const size_t len = size * n;
    t->lastActivity = Clock::now();
    t->total += len;
    if (t->total > t->maxBodyBytes) {
        t->overLimit = true;
        return 0;  // CURLE_WRITE_ERROR
    }
    if (*t->onData) {
        if (!(*t->onData)(std::string_view(data, len))) {
            t->stopped = true;
            return 0;
        }
    } else {
        t->resp->body.append(data, len);
    }
    return len;
}

struct HeaderList {
    curl_slist* list = nullptr;
    ~HeaderList() { curl_slist_free_all(list); }
    void add(const std::string& h) {
        if (curl_slist* l = curl_slist_append(list, h.c_str())) list = l;
    }
};

std::string hostPortOf(const HttpUrl& u) { return u.host + ":" + std::to_string(u.port); }

std::string describeFailure(CURLcode rc, const char* errbuf, const HttpUrl& u, const HttpClientOptions& o) {
    const std::string detail = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return "cannot resolve " + u.host + ": " + detail;
    case CURLE_COULDNT_CONNECT:
        return "cannot connect to " + hostPortOf(u) + ": " + detail;
    case CURLE_OPERATION_TIMEDOUT:
        return "connection to " + hostPortOf(u) + " timed out after " + std::to_string(o.connectTimeoutMs) + " ms";
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return "TLS with " + hostPortOf(u) + " failed: " + detail +
               (o.tls.caFile.empty() ? " (a private or self-signed certificate: --ca-file FILE.pem)"
                                     : " (CA file " + o.tls.caFile + ")");
    case CURLE_GOT_NOTHING:
        return "the server closed the connection before answering";
    case CURLE_PARTIAL_FILE:
        return "the body ended early: " + detail;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        return "connection lost: " + detail;
    case CURLE_FILESIZE_EXCEEDED:
        return "response body larger than " + std::to_string(o.maxBodyBytes) + " bytes";
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
        return "malformed URL: " + detail;
    default:
        return "malformed or failed response: " + detail;
    }
}

}  // namespace

Result<HttpUrl> parseHttpUrl(const std::string& url) {
    HttpUrl u;
    std::string rest;
    if (url.rfind("https://", 0) == 0) {
        u.tls = true;
        rest = url.substr(8);
    } else if (url.rfind("http://", 0) == 0) {
        rest = url.substr(7);
    } else {
        return Error{url + ": not an http:// or https:// URL"};
    }
    const std::string defaultPort = u.tls ? "443" : "80";
    const size_t slash = rest.find('/');
    std::string hostPort = rest.substr(0, slash);
    u.path = slash == std::string::npos ? "/" : rest.substr(slash);
    if (hostPort.empty()) return Error{url + ": no host"};
    if (hostPort.front() == '[') {  // [::1]:8080
        const size_t close = hostPort.find(']');
        if (close == std::string::npos) return Error{url + ": malformed IPv6 host"};
        u.host = hostPort.substr(1, close - 1);
        hostPort = hostPort.substr(close + 1);
        if (!hostPort.empty() && hostPort.front() != ':') return Error{url + ": malformed host"};
        if (!hostPort.empty()) hostPort = hostPort.substr(1);
        else hostPort = defaultPort;
    } else {
        const size_t colon = hostPort.rfind(':');
        u.host = hostPort.substr(0, colon);
        hostPort = colon == std::string::npos ? defaultPort : hostPort.substr(colon + 1);
    }
    int port = 0;
    auto [end, ec] = std::from_chars(hostPort.data(), hostPort.data() + hostPort.size(), port);
    if (ec != std::errc() || end != hostPort.data() + hostPort.size() || port <= 0 || port > 65535)
        return Error{url + ": invalid port '" + hostPort + "'"};
    u.port = port;
    return u;
}

Result<HttpResponse> httpRequest(const std::string& method, const std::string& url,
                                 const std::map<std::string, std::string>& headers, std::string_view body,
                                 const HttpClientOptions& o, const std::function<bool(std::string_view)>& onData) {
    auto u = parseHttpUrl(url);
    if (!u) return u.error();
    CurlThreadState& st = threadState();
    if (!st.multi || !st.easy) return Error{url + ": cannot initialise libcurl"};
    CURL* h = st.easy;
    curl_easy_reset(h);  // keeps the pooled connections, TLS sessions and DNS cache

    HttpResponse resp;
    Transfer t;
    t.resp = &resp;
    t.onData = &onData;
    t.maxBodyBytes = o.maxBodyBytes;
    char errbuf[CURL_ERROR_SIZE] = {};

    HeaderList hl;
    for (const auto& [k, v] : headers) hl.add(k + ": " + v);
    hl.add("Expect:");  // no 100-continue round trip before a JSON body

    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl.list);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max(1, o.connectTimeoutMs)));
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(std::min<size_t>(o.maxBodyBytes, INT64_MAX)));
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    if (u->tls) {
        if (!o.tls.caFile.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, o.tls.caFile.c_str());
        if (o.tls.insecure) {
            curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
    }
    if (method == "GET") {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
    }

    if (curl_multi_add_handle(st.multi, h) != CURLM_OK) return Error{url + ": cannot start the request (libcurl)"};
    struct Detach {
        CURLM* m;
        CURL* e;
        ~Detach() { curl_multi_remove_handle(m, e); }
    } detach{st.multi, h};

    t.lastActivity = Clock::now();
    CURLcode done = CURLE_OK;
    bool finished = false;
    while (!finished) {
        int running = 0;
        if (const CURLMcode mc = curl_multi_perform(st.multi, &running); mc != CURLM_OK)
            return Error{url + ": " + curl_multi_strerror(mc)};
        int left = 0;
        while (CURLMsg* m = curl_multi_info_read(st.multi, &left)) {
            if (m->msg == CURLMSG_DONE && m->easy_handle == h) {
                done = m->data.result;
                finished = true;
            }
        }
        if (finished) break;
        if (o.cancel && o.cancel->load()) return Error{url + ": cancelled"};
        const auto idleMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t.lastActivity).count();
        if (idleMs >= o.readTimeoutMs)
            return Error{url + ": no data for " + std::to_string(o.readTimeoutMs) + " ms (read timeout)"};
        curl_multi_poll(st.multi, nullptr, 0, static_cast<int>(std::min<long long>(100, o.readTimeoutMs - idleMs)), nullptr);
    }
    if (done != CURLE_OK && !(done == CURLE_WRITE_ERROR && t.stopped)) {
        if (done == CURLE_WRITE_ERROR && t.overLimit)
            return Error{url + ": response body larger than " + std::to_string(o.maxBodyBytes) + " bytes"};
        return Error{url + ": " + describeFailure(done, errbuf, *u, o)};
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    resp.status = static_cast<int>(status);
    return resp;
}

void SseParser::feed(std::string_view bytes, const std::function<void(const std::string& data)>& onEvent) {
    for (char c : bytes) {
        if (c != '\n') {
            m_line.push_back(c);
            continue;
        }
        if (!m_line.empty() && m_line.back() == '\r') m_line.pop_back();
        if (m_line.empty()) {
            if (m_hasData) onEvent(m_data);
            m_data.clear();
            m_hasData = false;
        } else if (m_line.rfind("data:", 0) == 0) {
            std::string_view v(m_line);
            v.remove_prefix(5);
            if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
            if (m_hasData) m_data.push_back('\n');
            m_data.append(v);
            m_hasData = true;
        }  // other fields (event:, id:, retry:, comments) are not needed here
        m_line.clear();
    }
}

}  // namespace verdict::core::net
