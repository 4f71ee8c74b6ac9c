// One HTTP request as a libcurl easy handle, set up the way httpRequest() sets up its own, for
// callers that drive many requests at once on one curl multi handle (the load generator,
// core/perf/load_loop.cpp). Internal to verdict_core: the only other place that sees libcurl.
//
//   auto r = CurlRequest::make("POST", url, headers, body, options, onData);
//   curl_multi_add_handle(multi, (*r)->easy());   ... drive the multi handle ...
//   on CURLMSG_DONE: curl_multi_remove_handle(multi, (*r)->easy()); auto resp = (*r)->finish(msg->data.result);
#pragma once

#include "core/net/http.h"

#include <curl/curl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace verdict::core::net {

class CurlRequest {
public:
    using Clock = std::chrono::steady_clock;

    // Fails for a URL that is not http(s) or when libcurl cannot make a handle. The body is
    // copied (the request may outlive the caller's buffer); onData as in httpRequest().
    static Result<std::unique_ptr<CurlRequest>> make(const std::string& method, const std::string& url,
                                                     const std::map<std::string, std::string>& headers, std::string_view body,
                                                     const HttpClientOptions& options,
                                                     std::function<bool(std::string_view)> onData = {});
    ~CurlRequest();
    CurlRequest(const CurlRequest&) = delete;
    CurlRequest& operator=(const CurlRequest&) = delete;

    CURL* easy() const { return m_easy; }
    // When a header or body byte last arrived (the request's creation before any): for idle timeouts.
    Clock::time_point lastActivity() const { return m_lastActivity; }
    // The transfer's outcome once libcurl reports it done: the response (status, headers, and the
    // body unless onData took it), or an error naming the URL, worded as httpRequest's are. A
    // transfer stopped by onData returning false is a response.
    Result<HttpResponse> finish(CURLcode result);

    // libcurl's one-time global set-up (thread-safe; never cleaned up).
    static void initGlobal();

private:
    CurlRequest() = default;
    static size_t onHeader(char* data, size_t size, size_t n, void* self);
    static size_t onBody(char* data, size_t size, size_t n, void* self);

    CURL* m_easy = nullptr;
    curl_slist* m_headers = nullptr;
    std::string m_url;
    HttpUrl m_parsed;
    HttpClientOptions m_options;
    std::string m_body;
    std::function<bool(std::string_view)> m_onData;
    HttpResponse m_resp;
    size_t m_total = 0;
    bool m_stopped = false;
    bool m_overLimit = false;
    Clock::time_point m_lastActivity;
    char m_errbuf[CURL_ERROR_SIZE] = {};
};

}  // namespace verdict::core::net
