#include "core/endpoints/provider_catalog.h"

#include "core/endpoints/endpoint_cost.h"

#include "core/catalog/catalog_file.h"

#include <algorithm>
#include <regex>
#include <set>

namespace verdict::core {

// Defined in the file CMake generates from resources/providers.json (provider_catalog_data.cpp).
namespace detail {
extern const unsigned char kProvidersJsonData[];
extern const std::size_t kProvidersJsonSize;
}  // namespace detail

namespace {

using nlohmann::json;

constexpr const char* kBuiltinOrigin = "built-in provider catalog (resources/providers.json)";

using catalog::fieldError;
using catalog::isHttpUrl;
using catalog::isId;
using catalog::ParseMode;
using catalog::stringAt;

constexpr catalog::FigureRules kPriceRules{
    /*allowZero=*/true,
    /*allowRuntimeDate=*/false,
    "must be a number >= 0 (USD per 1M tokens)",
    "must be a number >= 0 (USD per 1M tokens) or null",
    "missing (use null when no price was found)",
    "missing: every price names its source (or why there is none)",
    "missing: every price carries the date it is valid for",
    "must be a string starting with https:// or http://",
    "must be a string starting with https:// or http://",
};

bool isEnvName(const std::string& s) {
    static const std::regex kEnv(R"(^[A-Za-z_][A-Za-z0-9_]*$)");
    return std::regex_match(s, kEnv);
}

// A string or null ("" for null).
Result<std::string> optionalStringAt(const json& e, const char* key, const std::string& path, const ParseMode& mode) {
    if (e.at(key).is_null()) return std::string();
    return stringAt(e, key, path, mode);
}

// Applies one price entry onto `price` (a new one when `complete`: input and output required).
Result<void> applyPrice(const json& p, const std::string& path, const ParseMode& mode, bool complete, ModelPrice& price) {
    for (const auto& [key, _] : p.items())
        if (key != "model" && key != "input" && key != "cached_input" && key != "output")
            return fieldError(mode, path + "." + key, "unknown field (expected model, input, cached_input, output)");
    const std::pair<const char*, PriceFigure ModelPrice::*> figures[] = {
        {"input", &ModelPrice::input}, {"cached_input", &ModelPrice::cachedInput}, {"output", &ModelPrice::output}};
    for (const auto& [name, member] : figures) {
        const std::string fpath = path + "." + name;
        if (!p.contains(name)) {
            if (!complete) continue;
            if (!mode.user || std::string(name) != "cached_input")
                return fieldError(mode, fpath, std::string("missing") + (mode.user ? "" : " (use {\"value\": null, ...} when not found)"));
            price.cachedInput = PriceFigure{std::nullopt, "not given in user file " + mode.origin, mode.fileDate, "", ""};
            continue;
        }
        auto f = catalog::parseFigureAs<PriceFigure>(p.at(name), fpath, mode, kPriceRules);
        if (!f) return f.error();
        price.*member = std::move(*f);
    }
    return okResult();
}

Result<void> applyPrices(const json& list, const std::string& path, const ParseMode& mode, ProviderPreset& preset) {
    if (!list.is_array()) return fieldError(mode, path, "must be an array of {model, input, cached_input, output}");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& p = list[i];
        const std::string ppath = path + "[" + std::to_string(i) + "]";
        if (!p.is_object()) return fieldError(mode, ppath, "must be an object");
        if (!p.contains("model") || !p.at("model").is_string() || p.at("model").get<std::string>().empty())
            return fieldError(mode, ppath + ".model", "missing or not a non-empty string");
        const std::string model = p.at("model").get<std::string>();
        if (!seen.insert(model).second) return fieldError(mode, ppath + ".model", "duplicate model '" + model + "'");
        auto it = std::find_if(preset.prices.begin(), preset.prices.end(), [&](const ModelPrice& m) { return m.model == model; });
        if (it != preset.prices.end() && mode.user) {
            if (auto r = applyPrice(p, ppath, mode, false, *it); !r) return r.error();
            continue;
        }
        ModelPrice price;
        price.model = model;
        if (auto r = applyPrice(p, ppath, mode, true, price); !r) return r.error();
        preset.prices.push_back(std::move(price));
    }
    return okResult();
}

Result<std::optional<bool>> optionalBool(const json& s, const char* key, const std::string& path, const ParseMode& mode) {
    const json& v = s.at(key);
    if (v.is_null()) return std::optional<bool>();
    if (!v.is_boolean()) return fieldError(mode, path + "." + key, "must be true, false or null (not checked)");
    return std::optional<bool>(v.get<bool>());
}

Result<void> applySupports(const json& s, const std::string& path, const ParseMode& mode, bool complete,
                           ProviderSupports& out) {
    if (!s.is_object()) return fieldError(mode, path, "must be an object {stream_usage, logprobs, echo, tool_calls, reasoning_field}");
    const std::pair<const char*, std::optional<bool> ProviderSupports::*> flags[] = {
        {"stream_usage", &ProviderSupports::streamUsage},
        {"logprobs", &ProviderSupports::logprobs},
        {"echo", &ProviderSupports::echo},
        {"tool_calls", &ProviderSupports::toolCalls}};
    for (const auto& [key, _] : s.items()) {
        bool known = std::string(key) == "reasoning_field";
        for (const auto& f : flags) known = known || key == f.first;
        if (!known) return fieldError(mode, path + "." + key, "unknown field (expected stream_usage, logprobs, echo, tool_calls, reasoning_field)");
    }
    for (const auto& [name, member] : flags) {
        if (!s.contains(name)) {
            if (complete && !mode.user) return fieldError(mode, path + "." + name, "missing (null when not checked)");
            continue;
        }
        auto b = optionalBool(s, name, path, mode);
        if (!b) return b.error();
        out.*member = *b;
    }
    if (s.contains("reasoning_field")) {
        const json& v = s.at("reasoning_field");
        if (v.is_null()) {
            out.reasoningField.reset();
        } else if (v.is_string() && (v == "reasoning_content" || v == "reasoning" || v == "none")) {
            out.reasoningField = v.get<std::string>();
        } else {
            return fieldError(mode, path + ".reasoning_field", "must be \"reasoning_content\", \"reasoning\", \"none\" or null");
        }
    } else if (complete && !mode.user) {
        return fieldError(mode, path + ".reasoning_field", "missing (null when not checked)");
    }
    return okResult();
}

Result<void> applyRoutes(const json& r, const std::string& path, const ParseMode& mode, ProviderPreset& preset) {
    if (!r.is_object()) return fieldError(mode, path, "must be an object {chat, completions, models}");
    const std::pair<const char*, std::string ProviderPreset::*> routes[] = {
        {"chat", &ProviderPreset::chatRoute},
        {"completions", &ProviderPreset::completionsRoute},
        {"models", &ProviderPreset::modelsRoute}};
    for (const auto& [key, _] : r.items())
        if (key != "chat" && key != "completions" && key != "models")
            return fieldError(mode, path + "." + key, "unknown field (expected chat, completions, models)");
    for (const auto& [name, member] : routes) {
        if (!r.contains(name)) continue;
        const json& v = r.at(name);
        const std::string rpath = path + "." + name;
        if (v.is_null() && std::string(name) != "chat") {
            preset.*member = "";
            continue;
        }
        if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>()[0] != '/')
            return fieldError(mode, rpath, std::string("must be a path starting with '/'") + (std::string(name) == "chat" ? "" : " or null (none)"));
        preset.*member = v.get<std::string>();
    }
    return okResult();
}

// Applies the fields present in `e` onto `preset`. `complete`: a new preset (required fields).
Result<void> applyPresetFields(const json& e, const std::string& path, const ParseMode& mode, bool complete,
                               ProviderPreset& preset) {
    static const std::set<std::string> kKnown = {"id",       "name",        "kind",     "base_url",  "auth",
                                                 "key_env",  "routes",      "query",    "api_version", "supports",
                                                 "max_concurrency", "docs_url", "notes", "prices",   "prices_note"};
    for (const auto& [key, _] : e.items())
        if (!kKnown.count(key)) return fieldError(mode, path + "." + key, "unknown field");
    const auto required = [&](const char* key, const char* hint) -> Result<bool> {
        if (e.contains(key)) return true;
        if (complete) return fieldError(mode, path + "." + key, std::string("missing") + hint);
        return false;
    };
    auto has = required("name", "");
    if (!has) return has.error();
    if (*has) {
        auto s = stringAt(e, "name", path, mode);
        if (!s) return s.error();
        if (s->empty()) return fieldError(mode, path + ".name", "must not be empty");
        preset.name = *s;
    }
    if (has = required("kind", " (\"hosted\" or \"self-hosted\")"); !has) return has.error();
    if (*has) {
        auto s = stringAt(e, "kind", path, mode);
        if (!s) return s.error();
        if (*s == "hosted") preset.kind = ProviderKind::Hosted;
        else if (*s == "self-hosted") preset.kind = ProviderKind::SelfHosted;
        else return fieldError(mode, path + ".kind", "'" + *s + "' is neither \"hosted\" nor \"self-hosted\"");
    }
    if (has = required("base_url", " (https://host/v1)"); !has) return has.error();
    if (*has) {
        auto s = stringAt(e, "base_url", path, mode);
        if (!s) return s.error();
        if (!isHttpUrl(*s) || s->find(' ') != std::string::npos)
            return fieldError(mode, path + ".base_url", "must start with https:// or http:// and hold no spaces");
        std::string rest = *s;
        for (size_t at = rest.find("{resource}"); at != std::string::npos; at = rest.find("{resource}")) rest.erase(at, 10);
        if (rest.find('{') != std::string::npos || rest.find('}') != std::string::npos)
            return fieldError(mode, path + ".base_url", "the only placeholder a base URL may hold is {resource}");
        preset.baseUrl = *s;
    }
    if (has = required("auth", " (\"bearer\", \"api-key\" or \"none\")"); !has) return has.error();
    if (*has) {
        auto s = stringAt(e, "auth", path, mode);
        if (!s) return s.error();
        if (*s == "bearer") preset.auth = EndpointAuth::Bearer;
        else if (*s == "api-key") preset.auth = EndpointAuth::ApiKeyHeader;
        else if (*s == "none") preset.auth = EndpointAuth::None;
        else return fieldError(mode, path + ".auth", "'" + *s + "' is not \"bearer\", \"api-key\" or \"none\"");
    }
    if (e.contains("key_env")) {
        auto s = optionalStringAt(e, "key_env", path, mode);
        if (!s) return s.error();
        if (!s->empty() && !isEnvName(*s))
            return fieldError(mode, path + ".key_env", "'" + *s + "' is not an environment variable name");
        preset.keyEnv = *s;
    } else if (complete && !mode.user) {
        return fieldError(mode, path + ".key_env", "missing (null when the provider takes no key)");
    }
    if (e.contains("routes"))
        if (auto r = applyRoutes(e.at("routes"), path + ".routes", mode, preset); !r) return r.error();
    for (const char* key : {"query", "api_version", "docs_url", "notes", "prices_note"}) {
        if (!e.contains(key)) continue;
        auto s = stringAt(e, key, path, mode);
        if (!s) return s.error();
        const std::string k = key;
        if (k == "query") preset.query = *s;
        else if (k == "api_version") preset.apiVersion = *s;
        else if (k == "docs_url") {
            if (!s->empty() && !isHttpUrl(*s)) return fieldError(mode, path + ".docs_url", "must start with https:// or http://");
            preset.docsUrl = *s;
        } else if (k == "notes") preset.notes = *s;
        else preset.pricesNote = *s;
    }
    if (e.contains("supports")) {
        if (auto r = applySupports(e.at("supports"), path + ".supports", mode, complete, preset.supports); !r) return r.error();
    } else if (complete && !mode.user) {
        return fieldError(mode, path + ".supports", "missing");
    }
    if (e.contains("max_concurrency")) {
        const json& v = e.at("max_concurrency");
        if (v.is_null()) preset.maxConcurrency.reset();
        else if (v.is_number_integer() && v.get<int64_t>() > 0) preset.maxConcurrency = v.get<int64_t>();
        else return fieldError(mode, path + ".max_concurrency", "must be a positive integer or null (unknown)");
    }
    if (e.contains("prices")) {
        if (auto r = applyPrices(e.at("prices"), path + ".prices", mode, preset); !r) return r.error();
    } else if (complete && !mode.user) {
        return fieldError(mode, path + ".prices", "missing ([] with a prices_note when none)");
    }
    // Whole-preset rules, checked on the result of the merge.
    if (preset.query.find("{api_version}") != std::string::npos && preset.apiVersion.empty())
        return fieldError(mode, path + ".api_version", "missing: the query uses {api_version}");
    if (preset.kind == ProviderKind::SelfHosted && !preset.prices.empty())
        return fieldError(mode, path + ".prices",
                          "a self-hosted preset has no per-token prices: its cost is the TCO of its hardware (verdict tco)");
    if (!mode.user && preset.kind == ProviderKind::Hosted && preset.prices.empty() && preset.pricesNote.empty())
        return fieldError(mode, path + ".prices_note", "missing: a hosted preset without prices says why");
    return okResult();
}

// The document's top level; returns the "providers" array.
Result<const json*> providerList(const json& doc, const ParseMode& mode) {
    return catalog::documentEntries(doc, mode, "providers", kProvidersSchemaVersion, "presets");
}

// Applies the "providers" presets onto `presets` by id (new ids need the complete preset).
Result<void> mergePresets(const json& list, const ParseMode& mode, std::vector<ProviderPreset>& presets) {
    return catalog::mergeEntries(list, "providers", mode, ProviderOrigin::User, presets,
                                 [&](const json& e, const std::string& path, bool complete, ProviderPreset& preset) {
                                     return applyPresetFields(e, path, mode, complete, preset);
                                 });
}

json optionalBoolJson(const std::optional<bool>& b) { return b ? json(*b) : json(nullptr); }

}  // namespace

const char* providerKindName(ProviderKind kind) { return kind == ProviderKind::Hosted ? "hosted" : "self-hosted"; }
const char* providerOriginName(ProviderOrigin origin) { return origin == ProviderOrigin::Builtin ? "builtin" : "user"; }

const char* endpointAuthName(EndpointAuth auth) {
    switch (auth) {
    case EndpointAuth::Bearer: return "bearer";
    case EndpointAuth::ApiKeyHeader: return "api-key";
    case EndpointAuth::None: return "none";
    }
    return "bearer";
}

const ModelPrice* ProviderPreset::priceOf(const std::string& model) const {
    for (const ModelPrice& p : prices)
        if (p.model == model) return &p;
    return nullptr;
}

std::string defaultUserProvidersPath() { return catalog::defaultUserConfigPath("providers.json"); }

Result<ProviderCatalog> ProviderCatalog::parse(const std::string& text, const std::string& origin) {
    auto doc = catalog::parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{false, origin, ""};
    auto list = providerList(*doc, mode);
    if (!list) return list.error();
    ProviderCatalog catalog;
    if (auto r = mergePresets(**list, mode, catalog.m_entries); !r) return r.error();
    return catalog;
}

Result<ProviderCatalog> ProviderCatalog::builtin() {
    const std::string text(reinterpret_cast<const char*>(detail::kProvidersJsonData), detail::kProvidersJsonSize);
    return parse(text, kBuiltinOrigin);
}

Result<void> ProviderCatalog::mergeUser(const std::string& text, const std::string& origin, const std::string& fileDate) {
    auto doc = catalog::parseJsonText(text, origin);
    if (!doc) return doc.error();
    const ParseMode mode{true, origin, fileDate};
    auto list = providerList(*doc, mode);
    if (!list) return list.error();
    std::vector<ProviderPreset> merged = m_entries;  // all or nothing
    if (auto r = mergePresets(**list, mode, merged); !r) return r.error();
    m_entries = std::move(merged);
    return okResult();
}

Result<void> ProviderCatalog::mergeUserFile(const std::string& path) {
    auto text = catalog::readFile(path, "providers");
    if (!text) return text.error();
    return mergeUser(*text, path, catalog::fileDateUtc(path));
}

const ProviderPreset* ProviderCatalog::find(const std::string& id) const { return catalog::findById(m_entries, id); }

Result<const ProviderPreset*> ProviderCatalog::lookup(const std::string& id) const {
    if (const ProviderPreset* p = find(id)) return p;
    return Error{"unknown provider '" + id + "'; known providers: " + catalog::joinIds(ids())};
}

std::vector<std::string> ProviderCatalog::ids() const { return catalog::idsOf(m_entries); }

Result<ProviderCatalog> loadProviderCatalog(const std::optional<std::string>& userFile, std::string* usedUserFile) {
    auto catalog = ProviderCatalog::builtin();
    if (!catalog) return catalog.error();
    const std::string path = catalog::chooseUserFile(userFile, defaultUserProvidersPath());
    if (!path.empty())
        if (auto r = catalog->mergeUserFile(path); !r) return r.error();
    if (usedUserFile) *usedUserFile = path;
    return catalog;
}

json providerPresetJson(const ProviderPreset& p) {
    const auto orNull = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
    json prices = json::array();
    for (const ModelPrice& m : p.prices)
        prices.push_back({{"model", m.model},
                          {"input", catalog::figureJson(m.input)},
                          {"cached_input", catalog::figureJson(m.cachedInput)},
                          {"output", catalog::figureJson(m.output)}});
    json j = {{"id", p.id},
              {"name", p.name},
              {"kind", providerKindName(p.kind)},
              {"base_url", p.baseUrl},
              {"auth", endpointAuthName(p.auth)},
              {"key_env", orNull(p.keyEnv)},
              {"routes", {{"chat", p.chatRoute}, {"completions", orNull(p.completionsRoute)}, {"models", orNull(p.modelsRoute)}}},
              {"query", orNull(p.query)},
              {"api_version", orNull(p.apiVersion)},
              {"supports",
               {{"stream_usage", optionalBoolJson(p.supports.streamUsage)},
                {"logprobs", optionalBoolJson(p.supports.logprobs)},
                {"echo", optionalBoolJson(p.supports.echo)},
                {"tool_calls", optionalBoolJson(p.supports.toolCalls)},
                {"reasoning_field", p.supports.reasoningField ? json(*p.supports.reasoningField) : json(nullptr)}}},
              {"max_concurrency", p.maxConcurrency ? json(*p.maxConcurrency) : json(nullptr)},
              {"docs_url", orNull(p.docsUrl)},
              {"notes", p.notes},
              {"prices", prices},
              {"prices_note", orNull(p.pricesNote)},
              {"origin", providerOriginName(p.origin)}};
    return j;
}

Result<ProviderEndpoint> providerEndpoint(const ProviderPreset& preset, const ProviderEndpointOptions& o) {
    ProviderEndpoint out;
    out.baseUrl = o.baseUrl.empty() ? preset.baseUrl : o.baseUrl;
    if (out.baseUrl.find("{resource}") != std::string::npos) {
        if (o.resource.empty())
            return Error{"provider " + preset.id + ": its base URL " + preset.baseUrl +
                         " needs --resource NAME (or give the full URL as MODEL)"};
        if (!isId(o.resource)) return Error{"provider " + preset.id + ": --resource '" + o.resource + "' is not a resource name"};
        for (size_t at = out.baseUrl.find("{resource}"); at != std::string::npos; at = out.baseUrl.find("{resource}"))
            out.baseUrl.replace(at, 10, o.resource);
    }
    out.api.auth = preset.auth;
    out.api.chatRoute = preset.chatRoute;
    out.api.completionsRoute = preset.completionsRoute;
    out.api.modelsRoute = preset.modelsRoute;
    out.api.query = preset.query;
    const std::string version = o.apiVersion.empty() ? preset.apiVersion : o.apiVersion;
    for (size_t at = out.api.query.find("{api_version}"); at != std::string::npos; at = out.api.query.find("{api_version}"))
        out.api.query.replace(at, 13, version);
    out.api.provider = preset.id;
    out.api.maxConcurrency = preset.maxConcurrency.value_or(0);
    for (const ModelPrice& price : preset.prices) out.api.prices.push_back(modelPriceJson(price));
    return out;
}

}  // namespace verdict::core
