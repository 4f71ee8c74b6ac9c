#include "core/run/model_backend.h"

namespace verdict::core {

std::vector<std::vector<Result<ContinuationScore>>> ModelBackend::logprobsMany(const std::vector<LoglikRequest>& requests) {
    std::vector<std::vector<Result<ContinuationScore>>> out(requests.size());
    for (size_t i = 0; i < requests.size(); ++i)
        for (const std::string& continuation : requests[i].continuations) {
            out[i].push_back(logprobs(requests[i].context, continuation));
            if (!out[i].back()) break;
        }
    return out;
}

}  // namespace verdict::core
