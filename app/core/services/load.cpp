#include "core/services/load.h"

#include "core/version.h"

#include <map>

namespace verdict::core {

ServiceResult<LoadDone> runEndpointLoad(Database* db, EndpointConfig endpoint, const LoadSettings& settings,
                                        const std::function<void(const LoadProgress&)>& progress,
                                        const std::atomic<bool>* cancel) {
    if (auto r = validateLoadSpec(endpoint, settings.spec); !r) return ServiceError{ServiceFailure::BadInput, r.error().message};
    auto resolved = resolveEndpoint(std::move(endpoint));
    if (!resolved) return ServiceError{ServiceFailure::ModelOpen, resolved.error().message};

    LoadDone done;
    done.endpoint = std::move(*resolved);
    auto levels = runLoad(done.endpoint, settings.spec, progress, cancel);
    if (!levels) return ServiceError{ServiceFailure::Runtime, levels.error().message};
    done.levels = std::move(*levels);
    done.cancelled = cancel && cancel->load();

    // Not one request answered: nothing was measured. Say why instead of a table of zeros.
    int64_t completed = 0, failed = 0;
    std::map<std::string, int64_t> kinds;
    std::string first;
    for (const auto& r : done.levels) {
        completed += r.metrics.requests;
        failed += r.metrics.failed;
        for (const auto& [k, n] : r.errors) kinds[k] += n;
        for (const auto& t : r.requests)
            if (first.empty() && !t.error.empty()) first = t.error;
    }
    if (completed == 0 && failed > 0 && !done.cancelled) {
        std::string why;
        for (const auto& [k, n] : kinds) why += (why.empty() ? "" : ", ") + k + " " + std::to_string(n);
        return ServiceError{ServiceFailure::Runtime,
                            "all " + std::to_string(failed) + " requests failed (" + why + "); nothing was measured or stored" +
                                (first.empty() ? std::string() : "; the first error: " + first)};
    }
    if (db) {
        auto stored = storeLoadResults(*db, done.endpoint, settings.spec, done.levels, settings.name, toolVersion(),
                                       done.cancelled);
        if (!stored) return ServiceError{ServiceFailure::Storage, stored.error().message};
        done.stored = std::move(*stored);
    }
    return done;
}

}  // namespace verdict::core
