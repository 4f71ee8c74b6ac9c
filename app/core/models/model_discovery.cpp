#include "core/models/model_discovery.h"

#include "verdict/engine/gguf_split.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sys/stat.h>
#include <system_error>
#include <utility>

namespace verdict::core {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOllamaModelLayer = "application/vnd.ollama.image.model";
constexpr uint64_t kMaxManifestBytes = 1 << 20;  // real manifests are ~1 KB; refuse anything huge

std::string envOr(const char* name, const std::string& fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string(v) : fallback;
}

bool endsWithGguf(const std::string& name) {
    if (name.size() < 5) return false;
    std::string ext = name.substr(name.size() - 5);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    return ext == ".gguf";
}

bool isDirectory(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

uint64_t fileSize(const fs::path& p) {
    std::error_code ec;
    const auto n = fs::file_size(p, ec);
    return ec ? 0 : static_cast<uint64_t>(n);
}

std::string canonicalKey(const std::string& p) {
    std::error_code ec;
    const fs::path c = fs::canonical(p, ec);
    return ec ? p : c.string();
}

// A file found by a walk: its path and its path below the walk's root ("a/b.gguf").
struct FoundFile {
    std::string path;
    std::string relative;
};

// Depth-first walk of one root with the limits of the header: each directory (by device and
// inode, so symlinked loops and bind mounts end) is entered once, at most kMaxDepth levels down,
// at most kMaxEntries entries in all. Unreadable directories and broken links are skipped.
class Walker {
public:
    Walker(std::string root, std::vector<std::string>& warnings) : m_root(std::move(root)), m_warnings(warnings) {}

    // Calls onFile for every regular file (after following links) accepted by `accept(name)`.
    void walk(int maxDepth, const std::function<bool(const std::string&)>& accept,
              const std::function<void(const FoundFile&)>& onFile) {
        visit(fs::path(m_root), "", 0, maxDepth, accept, onFile);
    }

private:
    bool enterOnce(const fs::path& dir) {
        struct stat st {};
        if (::stat(dir.c_str(), &st) != 0) return false;
        return m_visited.insert({static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)}).second;
    }

    void visit(const fs::path& dir, const std::string& rel, int depth, int maxDepth,
               const std::function<bool(const std::string&)>& accept, const std::function<void(const FoundFile&)>& onFile) {
        if (!enterOnce(dir)) return;
        std::error_code ec;
        fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
        if (ec) return;  // unreadable: skipped
        // Sorted, so that output and "first wins" do not depend on the file system's order.
        std::vector<fs::directory_entry> entries;
        for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
            if (++m_entries > kMaxEntries) {
                if (!m_limitWarned)
                    m_warnings.push_back(m_root + ": stopped after " + std::to_string(kMaxEntries) +
                                         " directory entries (some models may be missing)");
                m_limitWarned = true;
                return;
            }
            entries.push_back(*it);
        }
        std::sort(entries.begin(), entries.end(),
                  [](const fs::directory_entry& a, const fs::directory_entry& b) { return a.path() < b.path(); });
        for (const auto& e : entries) {
            const std::string name = e.path().filename().string();
            const std::string childRel = rel.empty() ? name : rel + "/" + name;
            std::error_code sec;
            const fs::file_status st = fs::status(e.path(), sec);  // follows links; broken link -> error
            if (sec) continue;
            if (fs::is_directory(st)) {
                if (depth + 1 > maxDepth) {
                    if (!m_depthWarned && maxDepth == kMaxDepth)
                        m_warnings.push_back(m_root + ": folders more than " + std::to_string(kMaxDepth) +
                                             " levels deep were not scanned");
                    m_depthWarned = true;
                    continue;
                }
                visit(e.path(), childRel, depth + 1, maxDepth, accept, onFile);
            } else if (fs::is_regular_file(st) && accept(name)) {
                onFile({e.path().string(), childRel});
            }
        }
    }

    std::string m_root;
    std::vector<std::string>& m_warnings;
    std::set<std::pair<uint64_t, uint64_t>> m_visited;
    uint64_t m_entries = 0;
    bool m_limitWarned = false;
    bool m_depthWarned = false;
};

// Turns GGUF candidates into models: drops non-GGUF files, folds split parts into their first
// part (all parts must exist), sums the bytes.
void addCandidate(const std::string& source, const std::string& name, const std::string& path,
                  std::vector<DiscoveredModel>& out, std::vector<std::string>& warnings) {
    uint64_t bytes = 0;
    if (auto split = gguf::parseSplitName(path)) {
        if (split->part != 1) return;  // listed through part 1
        for (uint32_t k = 1; k <= split->count; ++k) {
            const std::string part = gguf::splitPath(split->prefix, k, split->count);
            std::error_code ec;
            if (!fs::exists(part, ec)) {
                warnings.push_back(path + ": split model part " + std::to_string(k) + " of " +
                                   std::to_string(split->count) + " is missing (" + part + "); skipped");
                return;
            }
            bytes += fileSize(part);
        }
    } else {
        bytes = fileSize(path);
    }
    if (!hasGgufMagic(path)) return;
    out.push_back({source, name, path, bytes});
}

void scanLmStudio(const std::string& root, std::vector<DiscoveredModel>& out, std::vector<std::string>& warnings) {
    if (!isDirectory(root)) return;
    Walker w(root, warnings);
    w.walk(kMaxDepth, endsWithGguf, [&](const FoundFile& f) { addCandidate("lmstudio", f.relative, f.path, out, warnings); });
}

void scanGpt4All(const std::string& root, std::vector<DiscoveredModel>& out, std::vector<std::string>& warnings) {
    if (!isDirectory(root)) return;
    Walker w(root, warnings);
    w.walk(0, endsWithGguf, [&](const FoundFile& f) { addCandidate("gpt4all", f.relative, f.path, out, warnings); });
}

// "sha256:<64 hex>" -> "sha256-<hex>"; "" when malformed (never a path with separators).
std::string ollamaBlobName(const std::string& digest) {
    const std::string prefix = "sha256:";
    if (digest.rfind(prefix, 0) != 0) return "";
    const std::string hex = digest.substr(prefix.size());
    if (hex.size() != 64) return "";
    for (char c : hex)
        if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    return "sha256-" + hex;
}

void scanOllama(const std::string& root, std::vector<DiscoveredModel>& out, std::vector<std::string>& warnings) {
    const fs::path manifests = fs::path(root) / "manifests";
    if (!isDirectory(manifests)) return;
    Walker w(manifests.string(), warnings);
    // manifests/<registry>/<namespace>/<model>/<tag>: files exactly four levels down.
    w.walk(3, [](const std::string&) { return true; }, [&](const FoundFile& f) {
        std::vector<std::string> parts;
        for (const auto& p : fs::path(f.relative)) parts.push_back(p.string());
        if (parts.size() != 4) return;
        const std::string& host = parts[0];
        const std::string& ns = parts[1];
        const std::string name = (host == "registry.ollama.ai" ? (ns == "library" ? "" : ns + "/") : host + "/" + ns + "/") +
                                 parts[2] + ":" + parts[3];
        if (fileSize(f.path) > kMaxManifestBytes) {
            warnings.push_back("ollama manifest " + f.path + ": larger than 1 MB, not a manifest; skipped");
            return;
        }
        std::ifstream in(f.path, std::ios::binary);
        if (!in) {
            warnings.push_back("ollama manifest " + f.path + ": cannot be read; skipped");
            return;
        }
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            warnings.push_back("ollama manifest " + f.path + ": not a JSON object; skipped");
            return;
        }
        auto layers = j.find("layers");
        if (layers == j.end() || !layers->is_array()) {
            warnings.push_back("ollama manifest " + f.path + ": no \"layers\" array; skipped");
            return;
        }
        std::string digest;
        bool found = false;
        for (const auto& layer : *layers) {
            if (!layer.is_object()) continue;
            auto mt = layer.find("mediaType");
            if (mt == layer.end() || !mt->is_string() || mt->get<std::string>() != kOllamaModelLayer) continue;
            found = true;
            auto d = layer.find("digest");
            if (d != layer.end() && d->is_string()) digest = d->get<std::string>();
            break;
        }
        if (!found) {
            warnings.push_back("ollama manifest " + f.path + ": no layer with mediaType " + kOllamaModelLayer + "; skipped");
            return;
        }
        const std::string blob = ollamaBlobName(digest);
        if (blob.empty()) {
            warnings.push_back("ollama manifest " + f.path + ": model layer digest '" + digest +
                               "' is not sha256:<64 hex digits>; skipped");
            return;
        }
        const fs::path blobPath = fs::path(root) / "blobs" / blob;
        std::error_code ec;
        if (!fs::is_regular_file(blobPath, ec)) {
            warnings.push_back("ollama manifest " + f.path + ": blob " + blobPath.string() + " is missing; skipped");
            return;
        }
        if (!hasGgufMagic(blobPath.string())) {
            warnings.push_back("ollama manifest " + f.path + ": blob " + blobPath.string() + " is not a GGUF file; skipped");
            return;
        }
        out.push_back({"ollama", name, blobPath.string(), fileSize(blobPath)});
    });
}

std::string readFirstLine(const fs::path& p) {
    std::ifstream in(p);
    std::string line;
    if (in) std::getline(in, line);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    return line;
}

void scanHuggingFace(const std::string& root, std::vector<DiscoveredModel>& out, std::vector<std::string>& warnings) {
    if (!isDirectory(root)) return;
    std::error_code ec;
    std::vector<fs::path> repos;
    for (fs::directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (n.rfind("models--", 0) == 0 && isDirectory(it->path())) repos.push_back(it->path());
        if (repos.size() > kMaxEntries) break;
    }
    std::sort(repos.begin(), repos.end());
    for (const fs::path& repo : repos) {
        // "models--org--name" -> "org/name" (the hub cache's encoding of "/" as "--").
        const std::string dirName = repo.filename().string().substr(8);
        std::string repoName;
        if (const size_t sep = dirName.find("--"); sep != std::string::npos) {
            // Built by appending: GCC 12 warns falsely (-Wrestrict) on replace() here.
            repoName.append(dirName, 0, sep);
            repoName.push_back('/');
            repoName.append(dirName, sep + 2, std::string::npos);
        } else {
            repoName = dirName;
        }
        const std::string mainRev = readFirstLine(repo / "refs" / "main");
        const fs::path snapshots = repo / "snapshots";
        if (!isDirectory(snapshots)) continue;

        // relative file name -> (preference, path); preference: refs/main first, then newest snapshot.
        struct Pick {
            bool isMain = false;
            fs::file_time_type mtime{};
            std::string path;
        };
        std::map<std::string, Pick> picks;
        std::error_code sec;
        std::vector<fs::path> revs;
        for (fs::directory_iterator it(snapshots, fs::directory_options::skip_permission_denied, sec);
             !sec && it != fs::directory_iterator(); it.increment(sec))
            if (isDirectory(it->path())) revs.push_back(it->path());
        std::sort(revs.begin(), revs.end());
        for (const fs::path& rev : revs) {
            const bool isMain = !mainRev.empty() && rev.filename().string() == mainRev;
            std::error_code tec;
            const auto mtime = fs::last_write_time(rev, tec);
            Walker w(rev.string(), warnings);
            w.walk(kMaxDepth, endsWithGguf, [&](const FoundFile& f) {
                auto [it, inserted] = picks.try_emplace(f.relative, Pick{isMain, mtime, f.path});
                if (inserted) return;
                Pick& p = it->second;
                if ((isMain && !p.isMain) || (isMain == p.isMain && mtime > p.mtime)) p = Pick{isMain, mtime, f.path};
            });
        }
        for (const auto& [rel, pick] : picks) addCandidate("huggingface", repoName + "/" + rel, pick.path, out, warnings);
    }
}

void scanFolderInto(const std::string& path, bool recursive, std::vector<DiscoveredModel>& out,
                    std::vector<std::string>& warnings) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
        warnings.push_back(path + ": not a folder (or not readable); nothing scanned");
        return;
    }
    fs::directory_iterator probe(path, ec);
    if (ec) {
        warnings.push_back(path + ": cannot be read (" + ec.message() + "); nothing scanned");
        return;
    }
    Walker w(path, warnings);
    w.walk(recursive ? kMaxDepth : 0, endsWithGguf,
           [&](const FoundFile& f) { addCandidate("folder", f.relative, f.path, out, warnings); });
}

}  // namespace

bool hasGgufMagic(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    if (!in.read(magic, 4)) return false;
    return magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U' && magic[3] == 'F';
}

DiscoveryRoots discoveryRootsUnder(const std::string& home) {
    const fs::path h(home);
    DiscoveryRoots r;
    r.lmStudio = {(h / ".lmstudio" / "models").string(), (h / ".cache" / "lm-studio" / "models").string()};
    r.ollama = {(h / ".ollama" / "models").string()};
    r.huggingFace = {(h / ".cache" / "huggingface" / "hub").string()};
    r.gpt4all = {(h / ".local" / "share" / "nomic.ai" / "GPT4All").string()};
    return r;
}

DiscoveryRoots defaultDiscoveryRoots() {
    DiscoveryRoots r = discoveryRootsUnder(envOr("HOME", "/nonexistent-home"));
    if (const std::string m = envOr("OLLAMA_MODELS", ""); !m.empty()) r.ollama = {m};
    else r.ollama.push_back("/usr/share/ollama/.ollama/models");  // the Linux install script's service user
    // huggingface_hub's order: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub.
    if (const std::string c = envOr("HF_HUB_CACHE", ""); !c.empty()) r.huggingFace = {c};
    else if (const std::string hf = envOr("HF_HOME", ""); !hf.empty()) r.huggingFace = {(fs::path(hf) / "hub").string()};
    return r;
}

DiscoveryResult discoverModels(const DiscoveryRoots& roots) {
    DiscoveryResult res;
    std::vector<DiscoveredModel> found;
    auto section = [&](const std::vector<std::string>& dirs, auto scan) {
        std::vector<DiscoveredModel> part;
        for (const auto& d : dirs) scan(d, part, res.warnings);
        std::stable_sort(part.begin(), part.end(),
                         [](const DiscoveredModel& a, const DiscoveredModel& b) { return a.name < b.name; });
        found.insert(found.end(), part.begin(), part.end());
    };
    section(roots.lmStudio, scanLmStudio);
    section(roots.ollama, scanOllama);
    section(roots.huggingFace, scanHuggingFace);
    section(roots.gpt4all, scanGpt4All);
    section(roots.folders, [](const std::string& d, std::vector<DiscoveredModel>& out, std::vector<std::string>& w) {
        scanFolderInto(d, true, out, w);
    });
    std::set<std::string> seen;
    for (auto& m : found)
        if (seen.insert(canonicalKey(m.path)).second) res.models.push_back(std::move(m));
    return res;
}

DiscoveryResult scanFolder(const std::string& path, bool recursive) {
    DiscoveryResult res;
    std::vector<DiscoveredModel> found;
    scanFolderInto(path, recursive, found, res.warnings);
    std::set<std::string> seen;
    for (auto& m : found)
        if (seen.insert(canonicalKey(m.path)).second) res.models.push_back(std::move(m));
    return res;
}

}  // namespace verdict::core
