#include "core/report/report_data.h"

#include "core/endpoints/endpoint_cost.h"

#include "core/models/model_card_json.h"
#include "core/report/report_decision.h"
#include "core/report/report_format.h"
#include "core/report/report_perf_cost.h"
#include "core/judge/judge_runner.h"
#include "core/perf/load_runner.h"
#include "core/run/backend_factory.h"
#include "core/services/quant_compare.h"
#include "core/services/soak.h"
#include "core/stats/run_summary.h"
#include "core/store/run_repository.h"
#include "core/store/study_repository.h"
#include "core/store/store.h"
#include "core/store/suite_repository.h"
#include "core/tco/hardware_catalog.h"
#include "verdict/engine/model_card.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace verdict::core {
namespace {

ReportModel describeRunModel(const RunRecord& run, char side) {
    ReportModel m;
    m.side = side;
    m.runId = run.id;
    m.path = run.modelPath;
    m.sha256 = run.modelSha256;
    m.fileBytes = run.modelBytes;
    m.chatTemplateHash = run.chatTemplateHash;
    m.chatTemplateMode = run.chatTemplateMode;
    m.label = std::filesystem::path(run.modelPath).filename().string();
    m.license = kLicenseUnknown;
    auto card = describeModelFile(run.modelPath);
    if (!card) {
        m.cardError = card.error().message;
        return m;
    }
    m.cardAvailable = true;
    // general.name, unless it only repeats the architecture ("llama"): the file name says more then.
    std::string lowerName = card->name, lowerArch = card->arch;
    for (auto* s : {&lowerName, &lowerArch})
        for (char& ch : *s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!card->name.empty() && lowerName != lowerArch) m.label = card->name;
    else m.label = std::filesystem::path(run.modelPath).stem().string();
    m.arch = card->arch;
    m.paramsTotal = card->nParams;
    m.paramsActive = card->nParamsActive;
    m.contextTrain = card->nCtxTrain;
    m.weightsBytes = card->memoryTrained.weightsBytes;
    m.kvBytesPerToken = card->memoryTrained.kvBytesPerToken;
    if (m.fileBytes == 0) m.fileBytes = static_cast<int64_t>(card->fileBytes);
    // Quantization: the tensor type holding most bytes, with the average bits per weight.
    std::string dominant;
    uint64_t most = 0;
    for (const auto& [type, bytes] : card->tensorTypeBytes)
        if (bytes > most) {
            most = bytes;
            dominant = type;
        }
    char bpw[32];
    std::snprintf(bpw, sizeof bpw, "%.2f", card->bitsPerWeight);
    m.quantization = (dominant.empty() ? std::string("unknown") : dominant) + " (" + bpw + " bits/weight)";
    for (const char* key : {"license", "license.name"}) {
        auto it = card->provenance.find(key);
        if (it != card->provenance.end() && !it->second.empty()) {
            m.license = it->second;
            m.licenseKnown = true;
            break;
        }
    }
    m.chatTemplateFamily = card->hasChatTemplate ? card->chatTemplateFamily : "none";
    m.tokenizer = card->tokenizerModel + (card->tokenizerPre.empty() ? "" : " (" + card->tokenizerPre + ")");
    return m;
}

std::string joinTurns(const SuiteItem& item) {
    if (!item.prompt.empty() || item.messages.empty()) return item.prompt;
    std::string s;
    for (const auto& t : item.messages) {
        if (!s.empty()) s += '\n';
        s += t.role;
        s += ": ";
        s += t.content;
    }
    return s;
}

std::string referenceOf(const SuiteItem& item) {
    std::string s;
    auto add = [&](const std::string& r) {
        if (!s.empty()) s += " | ";
        s += r;
    };
    if (item.gold && *item.gold >= 0 && static_cast<size_t>(*item.gold) < item.choices.size())
        add(std::string(1, static_cast<char>('A' + *item.gold)) + ". " + item.choices[static_cast<size_t>(*item.gold)]);
    for (const auto& r : item.references) add(r);
    return s.empty() ? std::string(kDash) : s;
}

Result<void> gatherAccuracy(Database& db, const ReportRequest& req, const RunRecord& a, const RunRecord& b,
                            const std::vector<RunItemRecord>& itemsA, const std::vector<RunItemRecord>& itemsB,
                            ReportAccuracy* acc) {
    SuiteRepository suites(db);
    auto sa = suites.findById(a.suiteId);
    if (!sa) return sa.error();
    if (a.suiteId != b.suiteId) {
        auto sb = suites.findById(b.suiteId);
        if (!sb) return sb.error();
        auto name = [](const std::optional<SuiteRecord>& s, int64_t id) {
            return s ? "'" + s->name + "' (#" + std::to_string(id) + ")" : "#" + std::to_string(id);
        };
        acc->refused = true;
        acc->refusedReason = "runs " + std::to_string(a.id) + " and " + std::to_string(b.id) +
                             " evaluated different suites, " + name(*sa, a.suiteId) + " and " + name(*sb, b.suiteId) +
                             "; accuracy is compared only on the same items";
        return {};
    }
    if (*sa) {
        acc->suiteName = (*sa)->name;
        acc->suiteHash = (*sa)->contentHash;
        acc->suiteItems = (*sa)->nItems;
    }
    acc->suiteId = a.suiteId;
    acc->a = summarizeRun(itemsA).accuracy;
    acc->b = summarizeRun(itemsB).accuracy;
    acc->classificationA = classificationOfRun(itemsA);
    acc->classificationB = classificationOfRun(itemsB);
    const RunPairing pairing = pairRuns(itemsA, itemsB);
    acc->onlyInA = pairing.onlyInA;
    acc->onlyInB = pairing.onlyInB;
    acc->unscored = pairing.unscored;
    acc->nothingScored = nothingScoredReason(pairing);
    acc->paired = comparePaired(pairing.pairs);
    acc->significant = acc->paired->nPairs > 0 && acc->paired->mcnemarP < 0.05;

    // Disagreements: alternate A-only and B-only items so both kinds show.
    std::map<std::string, const RunItemRecord*> byIdA, byIdB;
    for (const auto& r : itemsA) byIdA[r.itemId] = &r;
    for (const auto& r : itemsB) byIdB[r.itemId] = &r;
    auto suiteItems = suites.items(a.suiteId);
    if (!suiteItems) return suiteItems.error();
    acc->needleA = needleGridOfRun(*suiteItems, itemsA);
    acc->needleB = needleGridOfRun(*suiteItems, itemsB);
    acc->turnsA = turnAccuracyOfRun(itemsA);
    acc->turnsB = turnAccuracyOfRun(itemsB);
    acc->toolsA = toolCallStatsOfRun(itemsA);
    acc->toolsB = toolCallStatsOfRun(itemsB);
    const auto& onlyA = acc->paired->aRightBWrong;
    const auto& onlyB = acc->paired->bRightAWrong;
    for (size_t i = 0; acc->disagreements.size() < static_cast<size_t>(std::max(0, req.maxDisagreements)) &&
                       (i < onlyA.size() || i < onlyB.size());
         ++i) {
        for (const auto* list : {&onlyA, &onlyB}) {
            if (i >= list->size() || acc->disagreements.size() >= static_cast<size_t>(req.maxDisagreements)) continue;
            const std::string& id = (*list)[i];
            const RunItemRecord* ra = byIdA[id];
            const RunItemRecord* rb = byIdB[id];
            if (!ra || !rb) continue;
            ReportDisagreement d;
            d.itemId = id;
            d.category = ra->category;
            d.outputA = ra->output;
            d.outputB = rb->output;
            d.aCorrect = ra->correct.value_or(false);
            d.bCorrect = rb->correct.value_or(false);
            d.prompt = ra->prompt;
            d.reference = kDash;
            if (ra->itemIdx >= 0 && static_cast<size_t>(ra->itemIdx) < suiteItems->size()) {
                const SuiteItem& si = (*suiteItems)[static_cast<size_t>(ra->itemIdx)];
                if (std::string p = joinTurns(si); !p.empty()) d.prompt = p;
                d.reference = referenceOf(si);
            }
            acc->disagreements.push_back(std::move(d));
        }
    }
    return {};
}

// The judged preference of A and B (people and judge models, `verdict judge`), when the runs
// share a suite.
Result<void> gatherPreference(Database& db, const ReportRequest& req, const ReportAccuracy& acc, ReportPreference* pref) {
    constexpr const char* kHow = "verdict judge A B --judge MODEL|URL, or --human NAME";
    if (acc.refused) {
        pref->missing = "runs of different suites cannot be judged item by item";
        return {};
    }
    auto sum = summarizeJudgments(db, req.runA, req.runB);
    if (!sum) return sum.error();
    // Whole items only (turn 0): a multi-turn item's per-turn verdicts stay in `verdict judge`.
    std::erase_if(sum->pairwise, [](const PairwiseJudgeSummary& s) { return s.turn != 0; });
    std::erase_if(sum->agreement, [](const JudgeSummaries::Agreement& a) { return a.turn != 0; });
    std::map<std::string, std::string> labelOf;
    for (const PairwiseJudgeSummary& s : sum->pairwise) {
        ReportJudge j;
        j.judge = s.judge;
        j.human = s.mode == JudgeMode::Human;
        j.label = j.human ? "person " + s.judge.substr(std::string("human:").size())
                          : "judge " + std::filesystem::path(s.judge).filename().string();
        if (!j.human && isEndpointRef(s.judge)) j.label = "judge " + s.judge;
        j.winRate = s.winRate;
        j.positionBias = s.positionBias;
        j.bothBad = s.bothBad;
        labelOf[s.judge] = j.label;
        pref->judges.push_back(std::move(j));
    }
    std::stable_sort(pref->judges.begin(), pref->judges.end(),
                     [](const ReportJudge& x, const ReportJudge& y) { return x.human && !y.human; });
    for (size_t k = 0; k < pref->judges.size(); ++k) {
        const ReportJudge& j = pref->judges[k];
        if (j.winRate.decided + j.winRate.ties == 0) continue;
        if (!pref->primary) {
            pref->primary = k;
            continue;
        }
        const ReportJudge& best = pref->judges[*pref->primary];
        if (j.human == best.human && j.winRate.items - j.winRate.errors > best.winRate.items - best.winRate.errors) pref->primary = k;
    }
    if (!pref->primary) {
        pref->missing = pref->judges.empty() ? std::string("nobody has judged these runs (") + kHow + ")"
                                             : "no judge gave a readable verdict yet";
        return {};
    }
    for (const auto& a : sum->agreement) pref->agreement.push_back({labelOf[a.judge1], labelOf[a.judge2], a.kappa});

    // Items the judges did not agree on (some said A, some B or tie), with every verdict.
    if (sum->pairwise.size() < 2 || req.maxDisagreements <= 0) return {};
    auto items = judgeableItems(db, req.runA, req.runB);
    if (!items) return items.error();
    std::map<std::string, const PairwiseJudgeSummary*> byJudge;
    for (const PairwiseJudgeSummary& s : sum->pairwise) byJudge[s.judge] = &s;
    for (const JudgeItem& it : items->items) {
        std::set<int> seen;
        std::vector<std::pair<std::string, std::string>> verdicts;
        for (const ReportJudge& j : pref->judges) {  // in the report's order: people first
            const PairwiseJudgeSummary& s = *byJudge[j.judge];
            auto o = s.outcomes.find(it.itemIdx);
            if (o == s.outcomes.end()) continue;
            if (o->second) seen.insert(static_cast<int>(*o->second));
            verdicts.emplace_back(j.label, o->second ? pairwiseChoiceName(*o->second) : "unreadable");
        }
        if (seen.size() < 2) continue;
        ReportJudgeDisagreement d;
        d.category = it.category;
        d.prompt = it.question;
        d.outputA = it.answerA;
        d.outputB = it.answerB;
        d.itemId = it.itemId;
        d.verdicts = std::move(verdicts);
        pref->disagreements.push_back(std::move(d));
        if (pref->disagreements.size() >= static_cast<size_t>(req.maxDisagreements)) break;
    }
    return {};
}

std::string shellQuote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") ==
                          std::string::npos)
        return s;
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

// The `verdict run` command that repeats a stored run (its stored settings as options).
std::string runCommand(const RunRecord& r, const std::string& suiteName) {
    std::string c = "verdict run " + shellQuote(r.modelPath) + " --suite " + shellQuote(suiteName.empty() ? "#" + std::to_string(r.suiteId) : suiteName);
    if (r.itemLimit) c += " --limit " + std::to_string(*r.itemLimit);
    c += " --seed " + std::to_string(r.seed);
    const auto& g = r.generation;
    auto numOpt = [&](const char* key, const char* opt) {
        if (g.is_object() && g.contains(key) && g[key].is_number()) c += std::string(" ") + opt + " " + g[key].dump();
    };
    numOpt("temperature", "--temp");
    numOpt("max_tokens", "--max-tokens");
    numOpt("top_k", "--top-k");
    numOpt("top_p", "--top-p");
    numOpt("min_p", "--min-p");
    numOpt("repeat_penalty", "--repeat-penalty");
    if (g.is_object() && g.contains("stop") && g["stop"].is_array())
        for (const auto& s : g["stop"])
            if (s.is_string()) c += " --stop " + shellQuote(s.get<std::string>());
    const auto& p = r.prompting;
    if (p.is_object()) {
        if (p.contains("shots") && p["shots"].is_number() && p["shots"].get<int64_t>() > 0) c += " --shots " + p["shots"].dump();
        if (p.contains("system") && p["system"].is_string() && !p["system"].get<std::string>().empty())
            c += " --system " + shellQuote(p["system"].get<std::string>());
        if (p.contains("chat_template") && p["chat_template"].is_boolean() && !p["chat_template"].get<bool>())
            c += " --no-chat-template";
        if (p.contains("mc_mode") && p["mc_mode"].is_string() && !p["mc_mode"].get<std::string>().empty())
            c += " --mc-mode " + shellQuote(p["mc_mode"].get<std::string>());
    }
    return c;
}

std::string listText(const nlohmann::json& j) {
    if (!j.is_array()) return j.dump();
    std::string s;
    for (const auto& v : j) {
        if (!s.empty()) s += ',';
        s += v.dump();
    }
    return s;
}

std::string sweepCommand(const SweepRecord& s) {
    std::string c = "verdict sweep " + shellQuote(s.modelPath);
    const auto& sp = s.spec;
    if (sp.is_object()) {
        if (sp.contains("prompt_tokens")) c += " --prompt " + listText(sp["prompt_tokens"]);
        if (sp.contains("gen_tokens")) c += " --gen " + listText(sp["gen_tokens"]);
        if (sp.contains("batch")) c += " --batch " + listText(sp["batch"]);
        if (sp.contains("reps")) c += " --reps " + sp["reps"].dump();
        if (sp.contains("warmups")) c += " --warmup " + sp["warmups"].dump();
    }
    if (s.environment.is_object() && s.environment.contains("bandwidth_probe") && s.environment["bandwidth_probe"].is_null() &&
        s.environment.contains("bandwidth_gb_per_s") && s.environment["bandwidth_gb_per_s"].is_number())
        c += " --bandwidth " + s.environment["bandwidth_gb_per_s"].dump();
    return c;
}

std::string osDescription() {
    struct utsname u {};
    if (uname(&u) != 0) return "unknown";
    return std::string(u.sysname) + " " + u.release + " (" + u.machine + ")";
}

ReportReproducibility gatherReproducibility(const ReportRequest& req, const ReportData& d, const RunRecord* runs,
                                            const std::vector<SweepRecord>& sweeps) {
    ReportReproducibility r;
    auto row = [&](std::string k, std::string v) { r.rows.emplace_back(std::move(k), std::move(v)); };
    row("Report generated", d.generatedAt);
    row("Tool", (req.toolVersion.empty() ? std::string("verdict") : req.toolVersion) + ", build " +
                    (req.buildCommit.empty() ? std::string("unknown") : req.buildCommit));
    const MachineInfo mi = probeThisMachine();
    row("Report machine", osDescription() + "; " + (mi.cpuModel.empty() ? "unknown CPU" : mi.cpuModel) + ", " +
                              std::to_string(mi.logicalCores) + " logical CPUs");
    for (int k = 0; k < 2; ++k) {
        const RunRecord& run = runs[k];
        const std::string side = k == 0 ? "A" : "B";
        row("Run " + side, "#" + std::to_string(run.id) + " " + std::string(runStatusName(run.status)) + ", started " +
                               run.startedAt + (run.finishedAt.empty() ? "" : ", finished " + run.finishedAt));
        row("Run " + side + " device", run.device + "; engine " + run.engineVersion);
        row("Model " + side + " file", run.modelPath + "; " + std::to_string(run.modelBytes) + " bytes; SHA-256 " + run.modelSha256);
        row("Run " + side + " generation", run.generation.dump());
        row("Run " + side + " prompting", run.prompting.dump());
        row("Run " + side + " chat template", run.chatTemplateMode +
                                                  (run.chatTemplateHash.empty() ? "" : "; SHA-256 " + run.chatTemplateHash));
        row("Run " + side + " seed", std::to_string(run.seed) + " (item i samples with seed + i)" +
                                         (run.itemLimit ? "; limit " + std::to_string(*run.itemLimit) + " items" : ""));
    }
    if (!d.accuracy.refused)
        row("Suite", "'" + d.accuracy.suiteName + "' #" + std::to_string(d.accuracy.suiteId) + ", " +
                         std::to_string(d.accuracy.suiteItems) + " items; content SHA-256 " + d.accuracy.suiteHash);
    if (d.accuracy.paired)
        row("Statistics", "Wilson 95 % intervals; McNemar exact test; paired percentile bootstrap, " +
                              std::to_string(d.accuracy.paired->resamples) + " resamples, seed " +
                              std::to_string(d.accuracy.paired->seed));
    for (const auto& s : sweeps) {
        std::string seed = s.spec.is_object() && s.spec.contains("seed") ? s.spec["seed"].dump() : std::string("?");
        row("Sweep #" + std::to_string(s.id), s.name + "; " + s.device + "; " + s.engineVersion + "; created " + s.createdAt +
                                                  (s.finishedAt.empty() ? "" : ", finished " + s.finishedAt) + "; seed " + seed +
                                                  "; spec " + s.spec.dump());
    }
    for (int k = 0; k < 2; ++k) r.commands.push_back(runCommand(runs[k], d.accuracy.suiteName));
    for (const auto& s : sweeps) r.commands.push_back(sweepCommand(s));
    if (!req.commandLine.empty()) r.commands.push_back(req.commandLine);
    return r;
}

}  // namespace

// The quantization trade-off: the one asked for, else the newest that measured A's or B's file.
Result<void> gatherQuant(Database& db, const ReportRequest& req, const RunRecord* runs, ReportData* d) {
    auto sideOf = [&](const nlohmann::json& c) -> char {
        for (int k = 0; k < 2; ++k) {
            if (c.value("base", "") == runs[k].modelPath) return k == 0 ? 'A' : 'B';
            for (const auto& row : c.value("rows", nlohmann::json::array()))
                if (row.is_object() && row.contains("file") && row["file"].value("path", "") == runs[k].modelPath)
                    return k == 0 ? 'A' : 'B';
        }
        return 0;
    };
    if (req.quantCompareId) {
        auto c = loadQuantCompare(db, *req.quantCompareId);
        if (!c) return c.error();
        if (!*c) return Error{"quant comparison " + std::to_string(*req.quantCompareId) + " does not exist (see verdict quant-compare list)"};
        d->quantSide = sideOf(**c);
        d->quant = std::move(**c);
        return {};
    }
    if (!req.autoQuant) return {};
    auto list = listQuantCompares(db);
    if (!list) return list.error();
    for (const QuantCompareSummary& s : *list) {
        if (s.status == "failed") continue;
        auto c = loadQuantCompare(db, s.id);
        if (!c) return c.error();
        if (!*c) continue;
        if (const char side = sideOf(**c)) {
            d->quantSide = side;
            d->quant = std::move(**c);
            return {};
        }
    }
    return {};
}

// "http://h:8000/v1/ m" and "http://h:8000 m" are one endpoint; a file path stays as it is.
std::string soakKey(const std::string& ref) {
    if (!isEndpointRef(ref)) return ref;
    const EndpointRef e = parseEndpointRef(ref);
    return endpointApiRoot(e.url) + " " + e.model;
}

// The soak tests: the ones asked for, each on the run of its model, else the newest of each model.
Result<void> gatherSoaks(Database& db, const ReportRequest& req, const RunRecord* runs, ReportData* d) {
    const std::string keys[2] = {soakKey(runs[0].modelPath), soakKey(runs[1].modelPath)};
    nlohmann::json* sides[2] = {&d->soakA, &d->soakB};
    auto place = [&](nlohmann::json soak, bool must) -> Result<void> {
        auto text = [&](std::initializer_list<const char*> path) {
            const nlohmann::json& v = studyField(soak, path);
            return v.is_string() ? v.get<std::string>() : std::string();
        };
        const bool servedHere = studyField(soak, {"endpoint", "served_here"}) == true;
        const std::string subject =
            soakKey(servedHere ? text({"target"}) : text({"endpoint", "url"}) + " " + text({"endpoint", "model"}));
        for (int k = 0; k < 2; ++k)
            if (subject == keys[k] && sides[k]->is_null()) {
                *sides[k] = std::move(soak);
                return {};
            }
        if (must)
            return Error{"soak " + std::to_string(soak.value("id", int64_t(0))) + " soaked " + subject +
                         ", which is neither run's model (or that model already has a soak given)"};
        return {};
    };
    for (int64_t id : req.soakIds) {
        auto s = loadSoak(db, id);
        if (!s) return s.error();
        if (!*s) return Error{"soak " + std::to_string(id) + " does not exist (see verdict soak list)"};
        if (auto r = place(std::move(**s), true); !r) return r;
    }
    if (!req.soakIds.empty() || !req.autoSoak) return {};
    auto list = listSoaks(db);
    if (!list) return list.error();
    for (const auto& entry : *list) {
        if (!d->soakA.is_null() && !d->soakB.is_null()) break;
        if (entry.value("status", "") == "failed") continue;
        auto s = loadSoak(db, entry.value("id", int64_t(0)));
        if (!s) return s.error();
        if (*s) (void)place(std::move(**s), false);
    }
    return {};
}

Result<ReportData> buildReportData(Database& db, const ReportRequest& req) {
    std::map<std::string, double> weights = defaultCriterionWeights();
    if (auto v = validateCriterionWeights(req.weights); !v) return v.error();
    for (const auto& [k, w] : req.weights) weights[k] = w;
    for (auto [name, v] : {std::pair{"SLA TTFT", req.sla.ttftMs}, std::pair{"SLA TPOT", req.sla.tpotMs}})
        if (v && !(std::isfinite(*v) && *v > 0)) return Error{std::string(name) + " must be a positive number of ms"};
    if (req.quality.minAccuracy && !(*req.quality.minAccuracy >= 0 && *req.quality.minAccuracy <= 1))
        return Error{"the quality gate's minimum accuracy must be between 0 and 100 %"};

    RunRepository runs(db);
    RunRecord rec[2];
    std::vector<RunItemRecord> items[2];
    const int64_t ids[2] = {req.runA, req.runB};
    for (int k = 0; k < 2; ++k) {
        auto r = runs.find(ids[k]);
        if (!r) return r.error();
        if (!*r) return Error{"run " + std::to_string(ids[k]) + " does not exist (see verdict results)"};
        rec[k] = std::move(**r);
        auto it = runs.items(ids[k]);
        if (!it) return it.error();
        items[k] = std::move(*it);
    }

    ReportData d;
    d.generatedAt = req.generatedAt.empty() ? utcTimestamp() : req.generatedAt;
    d.sla = req.sla;
    d.quality = req.quality;
    d.a = describeRunModel(rec[0], 'A');
    d.b = describeRunModel(rec[1], 'B');

    if (auto r = gatherAccuracy(db, req, rec[0], rec[1], items[0], items[1], &d.accuracy); !r) return r.error();
    if (auto r = gatherPreference(db, req, d.accuracy, &d.preference); !r) return r.error();

    std::vector<SweepRecord> sweepsUsed;
    if (auto r = gatherPerformance(db, req, rec[0], rec[1], &d.perfA, &d.perfB, &sweepsUsed); !r) return r.error();
    selectPerfSeries(&d.perfA, &d.perfB);

    if (req.tco && !req.tco->hardwareId.empty()) {
        auto cost = gatherCost(*req.tco, rec[0], rec[1], items[0], items[1], d.perfA, d.perfB, d.a, d.b);
        if (!cost) return cost.error();
        d.cost = std::move(*cost);
    } else {
        d.cost.missing = "no cost analysis given (pass --hardware ID, and --tokens-per-day N for the 3-year TCO)";
    }

    // Runs through a provider preset: their API cost (the catalog is read only when one is).
    std::optional<ProviderCatalog> providers;
    for (int side = 0; side < 2; ++side) {
        if (!rec[side].generation.is_object() || !rec[side].generation.contains("provider")) continue;
        if (!providers) {
            auto c = loadProviderCatalog(std::nullopt);
            providers.emplace(c ? std::move(*c) : ProviderCatalog{});  // no catalog: recorded prices only
        }
        if (auto cost = runCostJson(rec[side], items[side], *providers)) (side == 0 ? d.apiCostA : d.apiCostB) = std::move(*cost);
    }

    if (auto r = gatherQuant(db, req, rec, &d); !r) return r.error();
    if (auto r = gatherSoaks(db, req, rec, &d); !r) return r.error();

    d.title = d.a.label + " vs " + d.b.label + (d.accuracy.suiteName.empty() ? "" : " on " + d.accuracy.suiteName);
    d.decision = buildDecisionTable(d, weights);
    d.recommendation = recommend(d.decision, d.a, d.b, d.quality);
    d.checklist = buildChecklist(d);
    d.reproducibility = gatherReproducibility(req, d, rec, sweepsUsed);

    if (d.accuracy.refused) d.missing.push_back("Accuracy comparison refused: " + d.accuracy.refusedReason + ".");
    else if (!d.accuracy.nothingScored.empty() && !d.preference.missing.empty())
        d.missing.push_back("No quality criterion: no item was scored (" + d.accuracy.nothingScored + ") and " +
                            d.preference.missing + ".");
    for (const ReportModel* m : {&d.a, &d.b})
        if (!m->cardAvailable) d.missing.push_back(std::string("Model ") + m->side + " card: " + m->cardError + ".");
    if (!d.perfA.missing.empty()) d.missing.push_back("Performance data missing for A: " + d.perfA.missing + ".");
    if (!d.perfB.missing.empty()) d.missing.push_back("Performance data missing for B: " + d.perfB.missing + ".");
    if (!d.cost.missing.empty()) d.missing.push_back("Cost: " + d.cost.missing + ".");
    else {
        if (!d.cost.a.missing.empty()) d.missing.push_back("Cost of A: " + d.cost.a.missing + ".");
        if (!d.cost.b.missing.empty()) d.missing.push_back("Cost of B: " + d.cost.b.missing + ".");
        if (!d.cost.tokensPerDay) d.missing.push_back("No daily token volume given: no fleet size or 3-year TCO curve.");
    }
    if (!req.sla.ttftMs && !req.sla.tpotMs) d.missing.push_back("No SLA entered (--sla-ttft-ms, --sla-tpot-ms).");
    return d;
}

Result<ReportData> buildSweepComparison(Database& db, int64_t sweepA, int64_t sweepB) {
    ReportData d;
    SweepRecord ra, rb;
    if (auto r = loadSweepPerformance(db, sweepA, &d.perfA, &ra); !r) return r.error();
    if (auto r = loadSweepPerformance(db, sweepB, &d.perfB, &rb); !r) return r.error();
    auto label = [](const SweepRecord& s) {
        return !s.name.empty() ? s.name : std::filesystem::path(s.modelPath).stem().string();
    };
    d.a.side = 'A';
    d.a.label = label(ra);
    d.a.path = ra.modelPath;
    d.b.side = 'B';
    d.b.label = label(rb);
    d.b.path = rb.modelPath;
    d.title = d.a.label + " vs " + d.b.label;
    selectPerfSeries(&d.perfA, &d.perfB);
    return d;
}

}  // namespace verdict::core
