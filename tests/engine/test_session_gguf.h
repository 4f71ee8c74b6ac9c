// Test helper: writes a modified copy of a GGUF fixture (metadata and tensors edited) into a
// temporary directory, so load errors can be provoked from a real file.
#pragma once

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

#include <QTemporaryDir>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace verdict::test {

struct GgufEdit {
    std::map<std::string, gguf::Value> setKeys;   // added or replaced
    std::set<std::string> dropKeys;
    std::set<std::string> dropTensors;
    struct NewTensor {
        std::string name;
        tensor::TensorType type;
        std::vector<uint64_t> ne;
        std::vector<uint8_t> data;
    };
    std::vector<NewTensor> replaceTensors;         // replaces a tensor of that name (or adds it)
};

// Returns the path of the written file, or an empty string (with a warning) on failure.
inline std::string writeEdited(const std::string& src, const QTemporaryDir& dir, const std::string& name,
                               GgufEdit& edit) {
    auto f = gguf::GgufFile::open(src);
    if (!f) {
        qWarning("%s", f.error().message.c_str());
        return {};
    }
    gguf::GgufWriter w;
    for (const auto& [k, v] : (*f)->metadata()) {
        if (edit.dropKeys.count(k)) continue;
        auto it = edit.setKeys.find(k);
        w.set(k, it != edit.setKeys.end() ? it->second : v);
    }
    for (const auto& [k, v] : edit.setKeys)
        if (!(*f)->find(k)) w.set(k, v);
    std::set<std::string> replaced;
    for (const auto& t : (*f)->tensors()) {
        if (edit.dropTensors.count(t.name)) continue;
        bool done = false;
        for (auto& r : edit.replaceTensors)
            if (r.name == t.name) {
                w.addTensor(r.name, r.type, r.ne, r.data.data(), r.data.size());
                replaced.insert(r.name);
                done = true;
            }
        if (!done) {
            std::vector<uint64_t> ne(t.ne.begin(), t.ne.begin() + t.nDims);
            w.addTensor(t.name, t.type, ne, t.data, t.nBytes);
        }
    }
    for (auto& r : edit.replaceTensors)
        if (!replaced.count(r.name)) w.addTensor(r.name, r.type, r.ne, r.data.data(), r.data.size());
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    if (auto r = w.write(path); !r) {
        qWarning("%s", r.error().message.c_str());
        return {};
    }
    return path;
}

}  // namespace verdict::test
