// libFuzzer entry for the server's request-head parser (core/net/http.h): any bytes must give a
// parsed request or a 4xx status with a reason, never a crash, a hang or a huge allocation. The
// input is cut where a real head ends ("\r\n\r\n"), as the server does before parsing.
#include "core/net/http.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    if (const size_t end = in.find("\r\n\r\n"); end != std::string_view::npos) in = in.substr(0, end);
    verdict::core::net::HttpRequest req;
    size_t length = 0;
    std::string why;
    const int status = verdict::core::net::parseHttpRequestHead(in, 1 << 20, req, length, why);
    if (status == 200) {
        // What the server then relies on: a bounded body length and a path that is a prefix of the target.
        if (length > (1u << 20) || req.target.compare(0, req.path.size(), req.path) != 0) __builtin_trap();
    } else if (status < 400 || status > 499 || why.empty()) {
        __builtin_trap();
    }
    return 0;
}
