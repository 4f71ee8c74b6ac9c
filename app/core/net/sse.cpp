// Server-Sent Events framing (net::SseParser in http.h): own code, apart from the libcurl client so
// that it can be fuzzed alone (tests/fuzz/fuzz_sse.cpp) and used on any byte source.
#include "core/net/http.h"

namespace verdict::core::net {

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
