#include "core/services/quant_compare.h"

#include "core/perf/engine_sweep_target.h"
#include "core/run/device_check.h"
#include "core/services/suite_run.h"
#include "core/stats/run_summary.h"
#include "core/store/model_repository.h"
#include "core/store/run_repository.h"
#include "core/store/study_repository.h"
#include "core/store/store.h"
#include "core/version.h"
#include "util/quote.h"

#include <verdict/engine/model.h>
#include <verdict/engine/model_card.h>
#include <verdict/engine/perplexity.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace verdict::core {

namespace {

using nlohmann::json;

constexpr const char* kQuantStudy = "quant_compare";

ServiceError bad(std::string m) { return {ServiceFailure::BadInput, std::move(m)}; }
ServiceError storage(std::string m) { return {ServiceFailure::Storage, std::move(m)}; }

Result<std::string> readText(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error{"text file " + util::quoteFileText(path) + ": cannot open"};
    f.seekg(0, std::ios::end);
    if (f.tellg() > std::streamoff(64) << 20) return Error{"text file " + util::quoteFileText(path) + ": larger than 64 MiB"};
    f.seekg(0);
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().empty()) return Error{"text file " + util::quoteFileText(path) + ": empty"};
    return ss.str();
}

// What the file is, from its header (no weights read).
json fileJson(const std::string& path, std::string* error) {
    json j = {{"path", path}};
    auto card = describeModelFile(path);
    if (!card) {
        *error = card.error().message;
        return j;
    }
    std::string type = card->fileType ? fileTypeName(*card->fileType) : "";
    if (type.empty()) {  // the tensor type holding most bytes
        uint64_t most = 0;
        for (const auto& [t, bytes] : card->tensorTypeBytes)
            if (bytes > most) most = bytes, type = t;
    }
    j["file_type"] = type;
    j["arch"] = card->arch;
    j["bytes"] = card->fileBytes;
    j["params"] = card->nParams;
    j["bits_per_weight"] = card->bitsPerWeight;
    j["n_vocab"] = card->nVocab;
    return j;
}

json quantilesJson(const Quantiles& q) {
    return {{"p50", q.median}, {"p90", q.p90}, {"p99", q.p99}, {"max", q.max}};
}

json numberOr(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key] : json(nullptr);
}

// file / base - 1, null when either is missing or the base is 0.
json change(const json& file, const json& base) {
    if (!file.is_number() || !base.is_number()) return nullptr;
    const double b = base.get<double>();
    if (b == 0) return nullptr;
    return file.get<double>() / b - 1.0;
}

const json& at(const json& j, std::initializer_list<const char*> path) { return studyField(j, path); }

}  // namespace

std::string fileTypeName(uint32_t t) {
    // llama.h, enum llama_ftype (ggml-org/llama.cpp); 4-6 and 33-35 were removed there.
    static const std::map<uint32_t, const char*> kNames = {
        {0, "F32"},      {1, "F16"},      {2, "Q4_0"},     {3, "Q4_1"},     {7, "Q8_0"},    {8, "Q5_0"},
        {9, "Q5_1"},     {10, "Q2_K"},    {11, "Q3_K_S"},  {12, "Q3_K_M"},  {13, "Q3_K_L"}, {14, "Q4_K_S"},
        {15, "Q4_K_M"},  {16, "Q5_K_S"},  {17, "Q5_K_M"},  {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},
        {21, "Q2_K_S"},  {22, "IQ3_XS"},  {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"}, {26, "IQ3_S"},
        {27, "IQ3_M"},   {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},  {31, "IQ1_M"},  {32, "BF16"},
        {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"}};
    auto it = kNames.find(t & ~1024u);  // LLAMA_FTYPE_GUESSED
    return it == kNames.end() ? "" : it->second;
}

Result<void> validateQuantCompareRequest(const QuantCompareRequest& r) {
    if (r.basePath.empty()) return Error{"base: a base GGUF file is required"};
    if (r.files.empty()) return Error{"files: at least one file to compare with the base is required"};
    if (r.files.size() > 16) return Error{"files: at most 16 files (got " + std::to_string(r.files.size()) + ")"};
    auto normal = [](const std::string& p) {
        std::error_code ec;
        const auto a = std::filesystem::absolute(p, ec);
        return (ec ? std::filesystem::path(p) : a).lexically_normal().string();
    };
    std::set<std::string> seen{normal(r.basePath)};
    for (size_t k = 0; k < r.files.size(); ++k) {
        if (r.files[k].empty()) return Error{"files: file " + std::to_string(k + 1) + " is an empty path"};
        if (!seen.insert(normal(r.files[k])).second) return Error{"files: " + r.files[k] + " is given twice (or is the base)"};
    }
    if (r.ctx < 4 || r.ctx > (1 << 20)) return Error{"ctx: must be between 4 and 1048576"};
    if (r.chunks < 0) return Error{"chunks: must not be negative"};
    if (r.textPath.empty() && r.suite.empty() && !r.sweep)
        return Error{"nothing to measure: give a text (KLD), a suite (accuracy) or keep the speed sweep"};
    if (r.limit && *r.limit < 1) return Error{"limit: must be at least 1"};
    if (r.sweep)
        if (auto v = validateSweepSpec(r.sweepSpec, 32); !v) return Error{"sweep: " + v.error().message};
    return {};
}

void addQuantDeltas(json& c) {
    if (!c.contains("rows") || !c["rows"].is_array() || c["rows"].empty()) return;
    const json base = c["rows"][0];
    for (size_t k = 0; k < c["rows"].size(); ++k) {
        json& row = c["rows"][k];
        if (k == 0) {
            row["vs_base"] = nullptr;
            continue;
        }
        json d;
        d["size_ratio"] = [&]() -> json {
            json f = at(row, {"file", "bytes"}), b = at(base, {"file", "bytes"});
            if (!f.is_number() || !b.is_number() || b.get<double>() == 0) return nullptr;
            return f.get<double>() / b.get<double>();
        }();
        d["mean_kld"] = numberOr(row["fidelity"], "mean_kld");
        d["same_top_p"] = numberOr(row["fidelity"], "same_top_p");
        d["ppl_ratio"] = numberOr(row["fidelity"], "ppl_ratio");
        d["accuracy_delta"] = at(row, {"accuracy", "delta"});
        d["mcnemar_p"] = at(row, {"accuracy", "mcnemar_p"});
        d["decode_change"] = change(at(row, {"speed", "decode_tok_per_s"}), at(base, {"speed", "decode_tok_per_s"}));
        d["prefill_change"] = change(at(row, {"speed", "prefill_tok_per_s"}), at(base, {"speed", "prefill_tok_per_s"}));
        d["tpot_p50_change"] = change(at(row, {"speed", "tpot_ms_p50"}), at(base, {"speed", "tpot_ms_p50"}));
        d["itl_p99_change"] = change(at(row, {"speed", "itl_ms_p99"}), at(base, {"speed", "itl_ms_p99"}));
        d["memory_change"] = change(at(row, {"memory", "engine_bytes"}), at(base, {"memory", "engine_bytes"}));
        row["vs_base"] = std::move(d);
    }
}

ServiceResult<QuantCompareDone> runQuantCompare(Database& db, const QuantCompareRequest& r, const QuantCompareEvents& events,
                                                std::stop_token stop) {
    if (auto v = validateQuantCompareRequest(r); !v) return bad(v.error().message);
    std::vector<std::string> paths{r.basePath};
    paths.insert(paths.end(), r.files.begin(), r.files.end());
    for (const std::string& p : paths)
        if (!std::filesystem::is_regular_file(p)) return bad(util::quoteFileText(p) + ": no such file");

    std::string text;
    if (!r.textPath.empty()) {
        auto t = readText(r.textPath);
        if (!t) return bad(t.error().message);
        text = std::move(*t);
    }
    if (!r.suite.empty()) {  // fail before any work when the suite does not exist
        SuiteRunSettings probe;
        probe.modelRef = r.basePath;
        probe.suite = r.suite;
        auto plan = planSuiteRun(db, probe);
        if (!plan) return plan.error();
    }

    const int fileCount = static_cast<int>(paths.size());
    json c = {{"name", r.name.empty() ? std::filesystem::path(r.basePath).filename().string() : r.name},
              {"base", r.basePath},
              {"settings", {{"suite", r.suite.empty() ? json(nullptr) : json(r.suite)},
                            {"limit", r.limit ? json(*r.limit) : json(nullptr)},
                            {"text", r.textPath.empty() ? json(nullptr) : json(r.textPath)},
                            {"ctx", r.ctx},
                            {"chunks", r.chunks},
                            {"sweep", r.sweep ? toJson(r.sweepSpec) : json(nullptr)},
                            {"threads", r.threads},
                            {"device", r.device},
                            {"gpu_layers", r.gpuLayers},
                            {"engine_version", toolVersion()}}},
              {"rows", json::array()}};
    for (const std::string& p : paths) {
        std::string error;
        json row = {{"file", fileJson(p, &error)}, {"errors", json::object()}};
        if (!error.empty()) row["errors"]["file"] = error;
        row["fidelity"] = nullptr;
        row["accuracy"] = nullptr;
        row["speed"] = nullptr;
        row["memory"] = {{"file_bytes", row["file"].value("bytes", json(nullptr))}};
        c["rows"].push_back(std::move(row));
    }
    StudyRepository store(db);
    auto id = store.create(kQuantStudy, c["name"], r.basePath, c);
    if (!id) return storage(id.error().message);
    c["id"] = *id;
    auto save = [&](const std::string& status = "running") -> Result<void> {
        addQuantDeltas(c);
        c["status"] = status;
        if (auto u = store.update(*id, c, status); !u) return u;
        if (events.stored) events.stored(c);
        return {};
    };
    auto progress = [&](int k, const std::string& stage, const std::string& detail) {
        if (events.progress) events.progress({k, fileCount, paths[static_cast<size_t>(k)], stage, detail});
    };
    auto finish = [&](const std::string& status) -> ServiceResult<QuantCompareDone> {
        if (auto u = save(status); !u) return storage(u.error().message);
        return QuantCompareDone{*id, c, status == "cancelled"};
    };
    // A failure after the row exists leaves it as "failed" with the reason.
    auto failed = [&](ServiceError e) -> ServiceResult<QuantCompareDone> {
        c["error"] = e.message;
        (void)save("failed");  // best effort: the error the caller gets is the first one
        return e;
    };
    std::atomic<bool> cancelFlag{false};
    std::stop_callback onStop(stop, [&] { cancelFlag = true; });

    auto open = [&](const std::string& path) { return openLocalModel(path, r.threads, r.device, r.gpuLayers, &cancelFlag); };

    // Fidelity: the base's PPL, then each file's KLD against it (the base stays loaded).
    if (!text.empty()) {
        progress(0, "fidelity", "loading");
        auto base = open(r.basePath);
        if (stop.stop_requested()) return finish("cancelled");
        if (!base) return failed({ServiceFailure::ModelOpen, base.error().message});
        if (!(*base)->hasTokenizer()) return failed(bad(r.basePath + " has no usable tokenizer: KLD needs one"));
        auto ids = (*base)->tokenize(text, true, false);
        if (!ids) return failed(bad(r.textPath + ": " + ids.error().message));
        if (static_cast<int64_t>(ids->size()) < 2 * r.ctx)
            return failed(bad(r.textPath + " tokenizes to only " + std::to_string(ids->size()) + " tokens; a context of " +
                              std::to_string(r.ctx) + " needs at least " + std::to_string(2 * r.ctx) +
                              " (use a longer text or a smaller ctx)"));
        const bool addBos = addsBos(**base);
        PerplexityOptions po;
        po.nCtx = r.ctx;
        po.maxChunks = r.chunks;
        int current = 0;
        po.progress = [&](int64_t done, int64_t total) {
            progress(current, "fidelity", "chunk " + std::to_string(done) + "/" + std::to_string(total));
            return !stop.stop_requested();
        };
        auto ppl = computePerplexity(*base, *ids, addBos, po);
        if (stop.stop_requested()) return finish("cancelled");
        if (!ppl) c["rows"][0]["errors"]["fidelity"] = ppl.error().message;
        else
            c["rows"][0]["fidelity"] = {{"ppl", ppl->ppl}, {"ppl_stderr", ppl->pplStderr}, {"chunks", ppl->chunks},
                                        {"tokens_scored", ppl->tokensScored}, {"mean_kld", 0.0}, {"same_top_p", 1.0}};
        if (auto s = save(); !s) return storage(s.error().message);
        for (int k = 1; k < fileCount; ++k) {
            current = k;
            json& row = c["rows"][static_cast<size_t>(k)];
            progress(k, "fidelity", "loading");
            auto m = open(paths[static_cast<size_t>(k)]);
            if (stop.stop_requested()) return finish("cancelled");
            if (!m) {
                row["errors"]["fidelity"] = m.error().message;
            } else if ((*m)->shape().nVocab != (*base)->shape().nVocab) {
                row["errors"]["fidelity"] = "vocabulary differs from the base's (" + std::to_string((*m)->shape().nVocab) +
                                            " vs " + std::to_string((*base)->shape().nVocab) + " tokens): not the same model";
            } else if (!(*m)->hasTokenizer()) {
                row["errors"]["fidelity"] = "has no usable tokenizer: KLD needs one";
            } else if (auto mine = (*m)->tokenize(text, true, false); !mine || *mine != *ids) {
                row["errors"]["fidelity"] = "tokenizes the text differently from the base: not the same vocabulary";
            } else {
                auto kl = computeKlDivergence(*m, *base, *ids, addBos, po);
                if (stop.stop_requested()) return finish("cancelled");
                if (!kl) {
                    row["errors"]["fidelity"] = kl.error().message;
                } else {
                    row["fidelity"] = {{"ppl", kl->model.ppl},
                                       {"ppl_stderr", kl->model.pplStderr},
                                       {"ppl_ratio", kl->pplRatio},
                                       {"ppl_ratio_stderr", kl->pplRatioStderr},
                                       {"mean_kld", kl->meanKld},
                                       {"mean_kld_stderr", kl->meanKldStderr},
                                       {"kld", quantilesJson(kl->kld)},
                                       {"same_top_p", kl->sameTopP},
                                       {"same_top_p_stderr", kl->sameTopPStderr},
                                       {"rms_delta_p", kl->rmsDeltaP},
                                       {"chunks", kl->chunks},
                                       {"tokens_scored", kl->tokensScored}};
                }
            }
            if (auto s = save(); !s) return storage(s.error().message);
        }
    }

    // Accuracy: one ordinary suite run per file, paired with the base's.
    if (!r.suite.empty()) {
        std::vector<RunItemRecord> baseItems;
        for (int k = 0; k < fileCount; ++k) {
            json& row = c["rows"][static_cast<size_t>(k)];
            SuiteRunSettings s;
            s.modelRef = paths[static_cast<size_t>(k)];
            s.suite = r.suite;
            s.limit = r.limit;
            s.backend.threads = r.threads;
            s.backend.device = r.device;
            s.backend.gpuLayers = r.gpuLayers;
            s.backend.engineVersion = toolVersion();
            s.backend.cancelLoad = &cancelFlag;
            SuiteRunEvents ev;
            ev.loading = [&] { progress(k, "accuracy", "loading"); };
            ev.progress = [&](const RunProgress& p) {
                progress(k, "accuracy", "item " + std::to_string(p.done) + "/" + std::to_string(p.total));
            };
            auto done = runSuite(db, s, ev, stop);
            if (stop.stop_requested()) return finish("cancelled");
            if (!done) {
                if (done.error().kind == ServiceFailure::Storage) return failed(done.error());
                row["errors"]["accuracy"] = done.error().message;
                if (auto u = save(); !u) return storage(u.error().message);
                if (k == 0) break;  // nothing to pair with
                continue;
            }
            auto items = RunRepository(db).items(done->prepared.run.id);
            if (!items) return failed(storage(items.error().message));
            const AccuracyCell& all = done->summary.accuracy.overall;
            json acc = {{"run_id", done->prepared.run.id}, {"cell", accuracyCellJson(all)}};
            if (k == 0) {
                baseItems = *items;
            } else {
                const RunPairing pairing = pairRuns(*items, baseItems);
                const PairedComparison pc = comparePaired(pairing.pairs);
                acc["pairs"] = pc.nPairs;
                acc["delta"] = pc.nPairs > 0 ? json(pc.difference) : json(nullptr);
                acc["delta_ci"] = pc.nPairs > 0 ? json{pc.differenceCi.lo, pc.differenceCi.hi} : json(nullptr);
                acc["mcnemar_p"] = pc.nPairs > 0 ? json(pc.mcnemarP) : json(nullptr);
                acc["file_only_right"] = pc.aOnly;
                acc["base_only_right"] = pc.bOnly;
                if (pc.nPairs == 0) acc["why_no_delta"] = nothingScoredReason(pairing);
            }
            row["accuracy"] = std::move(acc);
            if (auto u = save(); !u) return storage(u.error().message);
        }
    }

    // Speed and memory: a one-point sweep per file.
    if (r.sweep) {
        for (int k = 0; k < fileCount; ++k) {
            json& row = c["rows"][static_cast<size_t>(k)];
            const std::string& path = paths[static_cast<size_t>(k)];
            progress(k, "speed", "loading");
            EngineSweepTargetOptions to;
            to.threads = r.threads;
            to.maxBatch = 32;
            to.cancelLoad = &cancelFlag;
            to.device = r.device;
            to.gpuLayers = r.gpuLayers;
            auto target = EngineSweepTarget::open(path, to);
            if (stop.stop_requested()) return finish("cancelled");
            if (!target) {
                row["errors"]["speed"] = target.error().message;
                if (auto u = save(); !u) return storage(u.error().message);
                continue;
            }
            auto identity = ModelRepository(db).identifyFile({path});
            SweepOptions so;
            so.name = "quant-compare #" + std::to_string(*id) + " " + std::filesystem::path(path).filename().string();
            so.engineVersion = toolVersion();
            if (identity) {
                so.modelSha256 = identity->sha256;
                so.modelBytes = identity->bytes;
            }
            so.cancel = &cancelFlag;
            so.purpose = "quant-compare #" + std::to_string(*id);  // one point: not the report's sweep of this model
            so.progress = [&](const SweepProgress& p) {
                progress(k, "speed", "point " + std::to_string(p.pointIndex + 1) + "/" + std::to_string(p.pointCount) + " " + p.phase);
            };
            auto out = runSweep(db, **target, r.sweepSpec, so);
            if (!out) return failed(storage(out.error().message));
            if (out->cancelled) return finish("cancelled");
            json speed = {{"sweep_id", out->sweep.id}};
            const SweepPointRecord* point = nullptr;
            for (const SweepPointRecord& p : out->points)
                if (p.error.empty()) {
                    point = &p;
                    break;
                }
            if (!point) {
                row["errors"]["speed"] = out->points.empty() ? "no point measured" : out->points.front().error;
            } else {
                const json& m = point->metrics;
                speed["prompt_tokens"] = point->promptTokens;
                speed["gen_tokens"] = point->genTokens;
                speed["batch"] = point->batch;
                speed["decode_tok_per_s"] = numberOr(m, "decode_tok_per_s");
                speed["prefill_tok_per_s"] = numberOr(m, "prefill_tok_per_s");
                speed["ttft_ms_p50"] = at(m, {"ttft_ms", "p50"});
                speed["tpot_ms_p50"] = at(m, {"tpot_ms", "p50"});
                speed["itl_ms_p50"] = at(m, {"itl_ms", "p50"});
                speed["itl_ms_p99"] = at(m, {"itl_ms", "p99"});
                speed["itl_samples"] = at(m, {"itl_ms", "n"});
                row["memory"]["weights_bytes"] = at(m, {"memory", "weights_bytes"});
                row["memory"]["kv_bytes"] = at(m, {"memory", "kv_bytes"});
                row["memory"]["scratch_bytes"] = at(m, {"memory", "scratch_bytes"});
                // The engine's own ledger, not the process's peak RSS: one process measures every
                // file in turn, so its high-water mark would carry the earlier files' peaks.
                uint64_t engine = 0;
                for (const char* k : {"weights_bytes", "kv_bytes", "scratch_bytes"})
                    if (at(m, {"memory", k}).is_number_unsigned()) engine += at(m, {"memory", k}).get<uint64_t>();
                row["memory"]["engine_bytes"] = engine;
                row["memory"]["vram_peak_bytes"] = at(m, {"memory", "vram_peak_bytes"});
            }
            row["speed"] = std::move(speed);
            if (auto u = save(); !u) return storage(u.error().message);
        }
    }
    progress(fileCount - 1, "done", "");
    return finish("completed");
}

Result<std::vector<QuantCompareSummary>> listQuantCompares(Database& db) {
    auto list = StudyRepository(db).list(kQuantStudy);
    if (!list) return list.error();
    std::vector<QuantCompareSummary> out;
    for (const StudyRecord& s : *list) {
        const json rows = s.result.value("rows", json::array());
        out.push_back({s.id, s.name, s.createdAt, s.status, s.subject,
                       std::max<int64_t>(0, static_cast<int64_t>(rows.is_array() ? rows.size() : 0) - 1)});
    }
    return out;
}

Result<std::optional<json>> loadQuantCompare(Database& db, int64_t id) {
    auto s = StudyRepository(db).find(id, kQuantStudy);
    if (!s) return s.error();
    if (!*s) return std::optional<json>{};
    return std::optional<json>(studyDocument(**s));
}

}  // namespace verdict::core
