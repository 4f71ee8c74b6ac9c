// One way to open a model for generation, whatever it is: a GGUF file (Verdict's own engine,
// EngineBackend) or an OpenAI-compatible endpoint (EndpointBackend). The CLI (`verdict run`,
// `verdict compare`) and the window call this instead of choosing a backend themselves.
//
// A model reference (modelRef) is one string, as runs and votes store it:
//   "/path/model.gguf"                    a GGUF file (a split model by its first part)
//   "http://host:port" or ".../v1"        an endpoint; the served model is the first of GET /v1/models
//   "http://host:port/v1 MODEL"           an endpoint and the served model's name (after one space)
// https:// is accepted the same way (the HTTP client decides whether it can speak it).
#pragma once

#include "core/endpoints/endpoint_api.h"
#include "core/run/model_backend.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace verdict::core {

struct BackendOpenOptions {
    int threads = 0;                 // engine: compute threads; <= 0: physical cores
    int64_t nCtx = 0;                // engine: context tokens; <= 0: min(training context, 4096)
    std::string device = "cpu";      // engine: "cpu", "cuda", "cuda:N" (ModelOptions::device); endpoints ignore it
    int gpuLayers = -1;              // engine: blocks on that GPU, the rest on the CPU; < 0: all (ModelOptions::gpuLayers)
    std::string engineVersion;       // recorded with runs ("verdict 0.1.0")
    const std::atomic<bool>* cancelLoad = nullptr;  // engine: stops loading and template renders when set (Ctrl-C, a Cancel button)
    std::string endpointModel;       // endpoint: served model name; non-empty overrides the ref's " MODEL"
    std::string apiKey;              // endpoint: Bearer token (memory only, never stored)
    std::string caFile;              // endpoint over https: trust this PEM file (EndpointConfig::caFile)
    bool insecure = false;           // endpoint over https: no certificate check (recorded as the device)
    EndpointApi endpointApi;         // endpoint: routes, query and key header (a provider preset's; OpenAI's by default)
    std::string tokenizer;           // endpoint: a GGUF whose tokenizer counts tokens beside the server's usage ("" none)
    int parallel = 1;                // calls served at once (ModelBackend::maxConcurrentCalls); 0: the backend chooses
};

// True for "http://..." and "https://..." references.
bool isEndpointRef(const std::string& modelRef);

// Splits an endpoint reference into its URL and the model name after the first space ("" when
// none). Meaningless for file references.
struct EndpointRef {
    std::string url;
    std::string model;
};
EndpointRef parseEndpointRef(const std::string& modelRef);

// The reference as it should be stored so that two spellings of one file compare equal: a file
// path made absolute and lexically normal ("./m.gguf" -> "/home/u/m.gguf"); endpoint references
// unchanged. Does not touch the file system beyond the current directory.
std::string normalizeModelRef(const std::string& modelRef);

// Opens the model behind modelRef. Fails (never throws) with the backend's message: for a file,
// the engine's (it names the file, key or tensor; a missing file reads "PATH: ..."); for an
// endpoint, the client's (it names the URL). An empty reference fails with "no model given".
// When options.cancelLoad is set during loading, the engine fails; the caller checks its flag to
// tell a cancellation from a bad file.
Result<std::unique_ptr<ModelBackend>> openModelBackend(const std::string& modelRef, const BackendOpenOptions& options);

}  // namespace verdict::core
