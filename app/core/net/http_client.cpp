// The HTTP client on libcurl (see http.h and curl_request.h). Each request has its own easy
// handle; each thread has one multi handle, kept between requests, which owns the pool of
// kept-alive connections (and TLS sessions) so that the next request to the same host reuses one.
// The multi interface is used even for one transfer so that the loop wakes every 100 ms to see a
// cancel flag and to enforce the idle timeout in milliseconds (libcurl's own low-speed limit
// counts whole seconds).
#include "core/net/curl_request.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <mutex>

namespace verdict::core::net {
namespace {

using Clock = std::chrono::steady_clock;

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// This thread's multi handle. Destroyed when the thread ends, closing its pooled connections.
struct CurlThreadState {
    CURLM* multi = nullptr;
    CurlThreadState() {
        CurlRequest::initGlobal();
        multi = curl_multi_init();
        if (multi) curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 16L);
    }
    ~CurlThreadState() {
        if (multi) curl_multi_cleanup(multi);
    }
    CurlThreadState(const CurlThreadState&) = delete;
    CurlThreadState& operator=(const CurlThreadState&) = delete;
};

CURLM* threadMulti() {
    thread_local CurlThreadState state;
    return state.multi;
}

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

void CurlRequest::initGlobal() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });  // never cleaned up: threads may outlive main
}

size_t CurlRequest::onHeader(char* data, size_t size, size_t n, void* self) {
    auto* r = static_cast<CurlRequest*>(self);
    const size_t len = size * n;
    r->m_lastActivity = Clock::now();
    std::string_view line(data, len);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.rfind("HTTP/", 0) == 0) {  // a new response head (after a 100 Continue, say): start over
        r->m_resp.headers.clear();
        return len;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return len;
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    r->m_resp.headers[lower(std::string(line.substr(0, colon)))] = std::string(v);
    return len;
}

size_t CurlRequest::onBody(char* data, size_t size, size_t n, void* self) {
    auto* r = static_cast<CurlRequest*>(self);
    const size_t len = size * n;
    r->m_lastActivity = Clock::now();
    r->m_total += len;
    if (r->m_total > r->m_options.maxBodyBytes) {
        r->m_overLimit = true;
        return 0;  // CURLE_WRITE_ERROR
    }
    if (r->m_onData) {
        if (!r->m_onData(std::string_view(data, len))) {
            r->m_stopped = true;
            return 0;
        }
    } else {
        r->m_resp.body.append(data, len);
    }
    return len;
}

Result<std::unique_ptr<CurlRequest>> CurlRequest::make(const std::string& method, const std::string& url,
                                                       const std::map<std::string, std::string>& headers,
                                                       std::string_view body, const HttpClientOptions& o,
                                                       std::function<bool(std::string_view)> onData) {
    auto u = parseHttpUrl(url);
    if (!u) return u.error();
    initGlobal();
    std::unique_ptr<CurlRequest> r(new CurlRequest);
    r->m_easy = curl_easy_init();
    if (!r->m_easy) return Error{url + ": cannot initialise libcurl"};
    r->m_url = url;
    r->m_parsed = *u;
    r->m_options = o;
    r->m_body = body;
    r->m_onData = std::move(onData);
    r->m_lastActivity = Clock::now();
    for (const auto& [k, v] : headers)
        if (curl_slist* l = curl_slist_append(r->m_headers, (k + ": " + v).c_str())) r->m_headers = l;
    if (curl_slist* l = curl_slist_append(r->m_headers, "Expect:")) r->m_headers = l;  // no 100-continue round trip

    CURL* h = r->m_easy;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r->m_errbuf);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, r->m_headers);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max(1, o.connectTimeoutMs)));
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(std::min<size_t>(o.maxBodyBytes, INT64_MAX)));
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &CurlRequest::onHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r.get());
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &CurlRequest::onBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r.get());
    curl_easy_setopt(h, CURLOPT_PRIVATE, r.get());
    if (u->tls) {
        if (!o.tls.caFile.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, r->m_options.tls.caFile.c_str());
        if (o.tls.insecure) {
            curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
            curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
        }
    }
    if (method == "GET") {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
        if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r->m_body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->m_body.data());
    }
    return r;
}

CurlRequest::~CurlRequest() {
    if (m_easy) curl_easy_cleanup(m_easy);
    curl_slist_free_all(m_headers);
}

Result<HttpResponse> CurlRequest::finish(CURLcode done) {
    if (done != CURLE_OK && !(done == CURLE_WRITE_ERROR && m_stopped)) {
        if (done == CURLE_WRITE_ERROR && m_overLimit)
            return Error{m_url + ": response body larger than " + std::to_string(m_options.maxBodyBytes) + " bytes"};
        return Error{m_url + ": " + describeFailure(done, m_errbuf, m_parsed, m_options)};
    }
    long status = 0;
    curl_easy_getinfo(m_easy, CURLINFO_RESPONSE_CODE, &status);
    m_resp.status = static_cast<int>(status);
    return std::move(m_resp);
}

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
    auto made = CurlRequest::make(method, url, headers, body, o, onData);
    if (!made) return made.error();
    CurlRequest& r = **made;
    CURLM* multi = threadMulti();
    if (!multi || curl_multi_add_handle(multi, r.easy()) != CURLM_OK) return Error{url + ": cannot start the request (libcurl)"};
    struct Detach {  // before the request is destroyed (declared after it)
        CURLM* m;
        CURL* e;
        ~Detach() { curl_multi_remove_handle(m, e); }
    } detach{multi, r.easy()};

    for (;;) {
        int running = 0;
        if (const CURLMcode mc = curl_multi_perform(multi, &running); mc != CURLM_OK)
            return Error{url + ": " + curl_multi_strerror(mc)};
        int left = 0;
        while (CURLMsg* m = curl_multi_info_read(multi, &left))
            if (m->msg == CURLMSG_DONE && m->easy_handle == r.easy()) return r.finish(m->data.result);
        if (o.cancel && o.cancel->load()) return Error{url + ": cancelled"};
        const auto idleMs = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - r.lastActivity()).count();
        if (idleMs >= o.readTimeoutMs)
            return Error{url + ": no data for " + std::to_string(o.readTimeoutMs) + " ms (read timeout)"};
        curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::min<long long>(100, o.readTimeoutMs - idleMs)), nullptr);
    }
}

}  // namespace verdict::core::net
