// verdict template MODEL --messages FILE.json [--template FILE] [--no-generation-prompt] [--json]
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "verdict/engine/chat_render.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace verdict::cli {
namespace {

Result<std::string> readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open"};
    return std::string(std::istreambuf_iterator<char>(in), {});
}

struct TemplateOptions {
    std::optional<std::string> messagesPath;  // required; "-": stdin
    std::optional<std::string> templatePath;  // unset: the model's own template
    bool generationPrompt = true;             // append the assistant turn opener
};

const OptionTable<TemplateOptions>& templateOptions() {
    using S = TemplateOptions;
    static const OptionTable<S> table = {
        optionalTextOption<S>("messages", "FILE",
                              "JSON: an array of {role, content} or {\"messages\": [...], \"tools\": [...]} (- for stdin)",
                              [](auto& s) -> auto& { return s.messagesPath; }),
        optionalTextOption<S>("template", "FILE", "render this Jinja template instead of the model's own",
                              [](auto& s) -> auto& { return s.templatePath; }),
        flagOption<S>("no-generation-prompt", "do not append the assistant turn opener", [](S& s) { s.generationPrompt = false; }),
    };
    return table;
}

}  // namespace

int runTemplate(const std::vector<std::string>& argv) {
    std::vector<OptionSpec> specs = specsOf(templateOptions(), TemplateOptions{});
    for (OptionSpec spec : {jsonOption("print {text, source, family, template_hash, fell_back, fallback_reason}"), helpOption()})
        specs.push_back(std::move(spec));
    auto args = Args::parse(argv, specs);
    if (!args) return fail("template", args.error().message, kExitUsage);
    if (args->has("help")) {
        printHelp("verdict template MODEL.gguf --messages FILE.json [--template FILE] [--json]", formatOptions(specs));
        return kExitOk;
    }
    if (args->positionals().size() != 1) return fail("template", "expected exactly one model file", kExitUsage);
    TemplateOptions o;
    if (auto e = applyOptions(templateOptions(), *args, o)) return fail("template", *e, kExitUsage);
    const auto& messagesPath = o.messagesPath;
    if (!messagesPath) return fail("template", "--messages FILE is required", kExitUsage);

    std::string text;
    if (*messagesPath == "-") {
        text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
        auto r = readFile(*messagesPath);
        if (!r) return fail("template", r.error().message, kExitBadInput);
        text = std::move(*r);
    }
    nlohmann::ordered_json doc = nlohmann::ordered_json::parse(text, nullptr, false);
    if (doc.is_discarded()) return fail("template", *messagesPath + ": not valid JSON", kExitBadInput);
    nlohmann::ordered_json messages = doc, tools;
    if (doc.is_object() && doc.contains("messages")) {
        messages = doc["messages"];
        if (doc.contains("tools")) tools = doc["tools"];
    }
    if (!messages.is_array()) return fail("template", *messagesPath + ": messages must be a JSON array", kExitBadInput);
    for (size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            return fail("template", *messagesPath + ": message " + std::to_string(i) + " has no string \"role\"", kExitBadInput);
    }

    std::optional<std::string> overrideTemplate;
    if (const auto& t = o.templatePath) {
        auto r = readFile(*t);
        if (!r) return fail("template", r.error().message, kExitBadInput);
        overrideTemplate = std::move(*r);
    }
    auto rendered = renderChatTemplate(args->positionals()[0], messages.dump(),
                                       tools.is_null() ? std::string() : tools.dump(),
                                       o.generationPrompt, overrideTemplate);
    if (!rendered) return fail("template", rendered.error().message, kExitBadInput);

    if (args->has("json")) {
        nlohmann::ordered_json j;
        j["text"] = rendered->text;
        j["source"] = rendered->source;
        j["family"] = rendered->family;
        j["template_hash"] = rendered->templateHash;
        j["fell_back"] = rendered->fellBack;
        j["fallback_reason"] = rendered->fallbackReason;
        std::cout << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
        return kExitOk;
    }
    if (rendered->fellBack) std::cerr << "verdict template: note: " << rendered->fallbackReason << "; used the built-in "
                                      << rendered->family << " format\n";
    std::cout << rendered->text;
    return kExitOk;
}

}  // namespace verdict::cli
