#include "core/run/backend_factory.h"

#include "core/run/endpoint_backend.h"
#include "core/run/engine_backend.h"

#include <filesystem>
#include <system_error>

namespace verdict::core {

bool isEndpointRef(const std::string& modelRef) {
    return modelRef.rfind("http://", 0) == 0 || modelRef.rfind("https://", 0) == 0;
}

EndpointRef parseEndpointRef(const std::string& modelRef) {
    const size_t space = modelRef.find(' ');
    if (space == std::string::npos) return {modelRef, ""};
    return {modelRef.substr(0, space), modelRef.substr(space + 1)};
}

std::string normalizeModelRef(const std::string& modelRef) {
    if (modelRef.empty() || isEndpointRef(modelRef)) return modelRef;
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(modelRef, ec);
    if (ec) return modelRef;
    return abs.lexically_normal().string();
}

Result<std::unique_ptr<ModelBackend>> openModelBackend(const std::string& modelRef, const BackendOpenOptions& options) {
    if (modelRef.empty()) return Error{"no model given (a GGUF file or an http:// endpoint)"};
    if (isEndpointRef(modelRef)) {
        const EndpointRef ref = parseEndpointRef(modelRef);
        EndpointConfig ep;
        ep.baseUrl = ref.url;
        ep.model = options.endpointModel.empty() ? ref.model : options.endpointModel;
        ep.apiKey = options.apiKey;
        ep.caFile = options.caFile;
        ep.insecure = options.insecure;
        ep.api = options.endpointApi;
        auto eb = EndpointBackend::open(ep, options.engineVersion, options.parallel);
        if (!eb) return eb.error();
        return std::unique_ptr<ModelBackend>(std::move(*eb));
    }
    EngineBackendOptions eo;
    eo.threads = options.threads;
    eo.nCtx = options.nCtx;
    eo.device = options.device;
    eo.gpuLayers = options.gpuLayers;
    eo.engineVersion = options.engineVersion;
    eo.cancelLoad = options.cancelLoad;
    eo.parallel = options.parallel;
    auto eb = EngineBackend::open(modelRef, eo);
    if (!eb) return eb.error();
    return std::unique_ptr<ModelBackend>(std::move(*eb));
}

}  // namespace verdict::core
