// Finds GGUF models already on disk where the popular local-LLM tools keep them, so that the
// Models screen and `verdict discover` can offer them without a download:
//
//   lmstudio     ~/.lmstudio/models, ~/.cache/lm-studio/models      publisher/repo/*.gguf
//   ollama       $OLLAMA_MODELS, else ~/.ollama/models (and the Linux service's
//                /usr/share/ollama/.ollama/models): manifests/<registry>/<ns>/<model>/<tag> is JSON
//                whose layer with mediaType "application/vnd.ollama.image.model" has the digest
//                "sha256:<hex>" of the weights, stored as blobs/sha256-<hex>
//   huggingface  $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub:
//                models--<org>--<name>/snapshots/<revision>/**.gguf (symlinks into ../../blobs)
//   gpt4all      ~/.local/share/nomic.ai/GPT4All/*.gguf
//   folder       any folder the user adds (scanFolder)
//
// Only files whose first four bytes are "GGUF" are reported. A split model
// (name-00001-of-0000N.gguf) is listed once, by its first part, with the bytes of all parts; one
// with a missing part is skipped with a warning. The same file reached twice (an Ollama blob under
// two tags, one Hugging Face blob in two snapshots, a folder inside a tool's folder) is listed
// once: the first source in the order above wins. For Hugging Face, when several snapshots of a
// repository hold a file of the same name, the snapshot refs/main names wins, else the newest.
//
// Robustness: nothing here throws or fails as a whole. Unreadable folders and broken symlinks are
// skipped silently (they are common: half-finished downloads); malformed Ollama manifests, split
// models with missing parts and limits reached are reported as warnings naming the file. Walks
// stop at kMaxDepth levels and kMaxEntries directory entries per root, and never enter a
// directory twice (symlink loops end).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace verdict::core {

struct DiscoveredModel {
    std::string source;   // "lmstudio" | "ollama" | "huggingface" | "gpt4all" | "folder"
    std::string name;     // lmstudio "publisher/repo/file.gguf"; ollama "model:tag" ("ns/model:tag"
                          // outside the library namespace, "host/ns/model:tag" for other registries);
                          // huggingface "org/name/file.gguf"; gpt4all and folder: path below the root
    std::string path;     // the file to open (first part of a split model; HF: the snapshot path)
    uint64_t bytes = 0;   // all parts together
};

// Where to look. Empty lists are skipped; folders that do not exist are skipped silently except
// in `folders` (the user named them: a warning).
struct DiscoveryRoots {
    std::vector<std::string> lmStudio;     // folders holding publisher/repo/*.gguf
    std::vector<std::string> ollama;       // folders holding manifests/ and blobs/
    std::vector<std::string> huggingFace;  // hub caches holding models--org--name/
    std::vector<std::string> gpt4all;      // folders holding *.gguf
    std::vector<std::string> folders;      // user folders, scanned recursively (source "folder")
};

struct DiscoveryResult {
    std::vector<DiscoveredModel> models;
    std::vector<std::string> warnings;     // one line each, naming the file or folder
};

inline constexpr int kMaxDepth = 8;               // directory levels below a root
inline constexpr uint64_t kMaxEntries = 200000;   // directory entries examined per root

// The standard locations under $HOME, with $OLLAMA_MODELS, $HF_HUB_CACHE and $HF_HOME honoured.
DiscoveryRoots defaultDiscoveryRoots();

// The standard locations under `home` only (environment variables ignored): `verdict discover
// --root DIR` and tests.
DiscoveryRoots discoveryRootsUnder(const std::string& home);

// Walks every root. Never fails; see the header comment for what is skipped and warned about.
DiscoveryResult discoverModels(const DiscoveryRoots& roots);

// One folder ("add a folder"): its GGUF files (recursive: every level down to kMaxDepth), with
// source "folder" and names relative to `path`. A path that is not a readable directory gives no
// models and a warning.
DiscoveryResult scanFolder(const std::string& path, bool recursive);

// True when the file's first four bytes are "GGUF" (follows symlinks; false when unreadable).
bool hasGgufMagic(const std::string& path);

}  // namespace verdict::core
