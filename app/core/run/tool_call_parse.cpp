// Tool calls in a local model's raw output (see tool_call_parse.h). Each format has one small
// parser that looks for its markers in a copy of the text where reasoning is blanked out (same
// offsets), records the calls it read and the byte ranges of their markup; the content is the
// original text without those ranges. Every search moves forward only (Finder), so the work is
// linear in the text's length even when end markers are missing.
#include "core/run/tool_call_parse.h"

#include <algorithm>
#include <utility>

namespace verdict::core {
namespace {

using nlohmann::json;
using Range = std::pair<size_t, size_t>;  // [begin, end) in the text
constexpr size_t npos = std::string_view::npos;

// '\0' is what blanked reasoning is made of: it counts as space.
bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '\0';
}

std::string_view trimView(std::string_view s) {
    size_t b = 0, e = s.size();
    while (b < e && isSpace(s[b])) ++b;
    while (e > b && isSpace(s[e - 1])) --e;
    return s.substr(b, e - b);
}

size_t skipSpace(std::string_view s, size_t pos) {
    while (pos < s.size() && isSpace(s[pos])) ++pos;
    return pos;
}

// The next occurrence of a marker at or after a position; the positions asked for must never
// decrease, so each marker is searched for over the text at most once in all.
class Finder {
public:
    Finder(std::string_view text, std::string_view marker) : text_(text), marker_(marker) {}
    size_t from(size_t pos) {
        if (!searched_ || (next_ != npos && next_ < pos)) {
            next_ = pos > text_.size() ? npos : text_.find(marker_, pos);
            searched_ = true;
        }
        return next_;
    }

private:
    std::string_view text_;
    std::string_view marker_;
    size_t next_ = npos;
    bool searched_ = false;
};

json parseJson(std::string_view s) {
    return json::parse(s.begin(), s.end(), nullptr, false);
}

std::string dumpJson(const json& v) {
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Why a text is not JSON, from the parser's own message (SAX: nothing is built, nothing thrown).
class ErrorSax : public json::json_sax_t {
public:
    std::string message;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(json::number_integer_t) override { return true; }
    bool number_unsigned(json::number_unsigned_t) override { return true; }
    bool number_float(json::number_float_t, const json::string_t&) override { return true; }
    bool string(json::string_t&) override { return true; }
    bool binary(json::binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(json::string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
        message = ex.what();
        return false;
    }
};

std::string jsonError(std::string_view s) {
    ErrorSax sax;
    json::sax_parse(s.begin(), s.end(), &sax);
    std::string m = sax.message.empty() ? std::string("not JSON") : sax.message;
    const size_t tagEnd = m.rfind("] ", m.find(' '));  // drop "[json.exception.parse_error.101] "
    return m.front() == '[' && tagEnd != std::string::npos ? m.substr(tagEnd + 2) : m;
}

// End (one past) of the JSON object or array that opens at `pos`, scanning no further than
// `limit`; npos when it does not close there. Strings and escapes are skipped over.
size_t jsonExtent(std::string_view s, size_t pos, size_t limit) {
    int depth = 0;
    bool inString = false;
    for (size_t i = pos; i < limit; ++i) {
        const char c = s[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return npos;
}

// The body of a ``` fence (the first line is the fence and its language); the text itself when
// it has no fence.
std::string_view unfence(std::string_view s) {
    s = trimView(s);
    if (s.substr(0, 3) != "```") return s;
    const size_t nl = s.find('\n');
    if (nl == npos) return {};
    std::string_view body = s.substr(nl + 1);
    const size_t close = body.rfind("```");
    return trimView(close == npos ? body : body.substr(0, close));
}

const json* field(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

std::string stringField(const json& obj, const char* key) {
    const json* v = field(obj, key);
    if (v == nullptr) return {};
    if (v->is_string()) return v->get<std::string>();
    return v->is_number() ? dumpJson(*v) : std::string();
}

// {"name": ..., "arguments"|"parameters": ...}: what Llama 3 and the plain-JSON fallback accept.
bool isCallObject(const json& v) {
    if (!v.is_object()) return false;
    if (const json* fn = field(v, "function"); fn != nullptr && fn->is_object()) return isCallObject(*fn);
    const json* name = field(v, "name");
    return name != nullptr && name->is_string() && (v.contains("arguments") || v.contains("parameters"));
}

// Best effort on a body that is not JSON: the "name" string's value, else "".
std::string salvageName(std::string_view body) {
    size_t p = body.find("\"name\"");
    if (p == npos) return {};
    p = skipSpace(body, p + 6);
    if (p >= body.size() || body[p] != ':') return {};
    p = skipSpace(body, p + 1);
    if (p >= body.size() || body[p] != '"') return {};
    const size_t e = body.find('"', p + 1);
    return e == npos ? std::string() : std::string(body.substr(p + 1, e - p - 1));
}

// Best effort: the raw text after "arguments": (or "parameters":), less the body's closing brace.
std::string_view salvageArguments(std::string_view body) {
    size_t p = body.find("\"arguments\"");
    size_t keyLen = 11;
    if (p == npos) {
        p = body.find("\"parameters\"");
        keyLen = 12;
    }
    if (p == npos) return body;
    p = skipSpace(body, p + keyLen);
    if (p >= body.size() || body[p] != ':') return body;
    std::string_view rest = trimView(body.substr(p + 1));
    if (body.front() == '{' && !rest.empty() && rest.back() == '}') rest = trimView(rest.substr(0, rest.size() - 1));
    return rest;
}

// What the parsers gather: calls, problems, the markup ranges to cut from the content.
struct Collector {
    ParsedToolCalls out;
    std::vector<Range> removed;
    std::string current;  // the format of the call being read (problems are labelled with it)
    bool hasContent = false;
    std::string content;  // the content, when the format says what it is (harmony's final channel)

    void setFormat(std::string_view f) {
        current = f;
        if (out.format.empty()) out.format = f;
    }
    std::string formatOr(std::string_view f) const { return current.empty() ? std::string(f) : current; }

    void problem(const std::string& what) {
        out.problems.push_back("call " + std::to_string(out.calls.size()) + " (" + current + "): " + what);
    }
    void unreadable(std::string_view raw, const std::string& why) {
        out.calls.push_back({"", "", std::string(raw)});
        problem(why);
    }

    // A call whose name and arguments text the markup gives apart.
    void addNamed(std::string id, std::string name, std::string_view argsText) {
        argsText = trimView(argsText);
        if (name.empty()) {
            unreadable(argsText, "no function name");
            return;
        }
        if (argsText.empty()) {
            out.calls.push_back({std::move(id), std::move(name), "{}"});
            return;
        }
        const json v = parseJson(argsText);
        if (v.is_discarded()) {
            out.calls.push_back({std::move(id), std::move(name), std::string(argsText)});
            problem("arguments are not JSON: " + jsonError(argsText));
            return;
        }
        bool ok = true;
        out.calls.push_back({std::move(id), std::move(name), toolArgumentsText(v, &ok)});
        if (!ok) problem("arguments are not JSON");
    }

    // A call given as one JSON object ({"name", "arguments"}, OpenAI's {"id", "function": {...}},
    // Command R7B's {"tool_call_id", "tool_name", "parameters"}); `raw` is kept when it is unreadable.
    void addObject(const json& v, std::string_view raw) {
        if (!v.is_object()) {
            unreadable(raw, "not a JSON object");
            return;
        }
        const json* fn = field(v, "function");
        const json& spec = fn != nullptr && fn->is_object() ? *fn : v;
        std::string name = stringField(spec, "name");
        if (name.empty()) name = stringField(spec, "tool_name");
        if (name.empty() && fn != nullptr && fn->is_string()) name = fn->get<std::string>();
        if (name.empty()) {
            unreadable(raw, "no function name");
            return;
        }
        std::string id = stringField(v, "id");
        if (id.empty()) id = stringField(v, "tool_call_id");
        const json* args = field(spec, "arguments");
        if (args == nullptr) args = field(spec, "parameters");
        bool ok = true;
        std::string argsText = args == nullptr ? std::string("{}") : toolArgumentsText(*args, &ok);
        out.calls.push_back({std::move(id), std::move(name), std::move(argsText)});
        if (!ok) problem("arguments are not JSON");
    }

    // A body holding one call object, or an array of them.
    void addJsonBody(std::string_view body) {
        body = trimView(body);
        const json v = parseJson(body);
        if (v.is_discarded()) {
            const std::string why = "body is not JSON: " + jsonError(body);
            std::string name = salvageName(body);
            if (name.empty()) {
                unreadable(body, why);
            } else {
                out.calls.push_back({"", std::move(name), std::string(salvageArguments(body))});
                problem(why);
            }
        } else if (v.is_array()) {
            for (const json& el : v) addObject(el, dumpJson(el));
        } else {
            addObject(v, body);
        }
    }

    // The JSON value that starts (after space) at `pos`, up to `limit`; returns where it ended
    // (`limit` when it did not close there: the rest is taken as the unreadable body).
    size_t addJsonAt(std::string_view s, size_t pos, size_t limit) {
        const size_t p = skipSpace(s, pos);
        const size_t e = p < limit && (s[p] == '{' || s[p] == '[') ? jsonExtent(s, p, limit) : npos;
        if (e == npos) {
            addJsonBody(s.substr(pos, limit - pos));
            return limit;
        }
        addJsonBody(s.substr(p, e - p));
        return e;
    }
};

// ---- GLM-4.5: <tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call> ----

json glmValue(std::string_view text) {
    json v = parseJson(text);
    return v.is_discarded() ? json(std::string(text)) : v;
}

void addGlmBody(std::string_view body, Collector& c) {
    constexpr std::string_view kKey = "<arg_key>", kKeyEnd = "</arg_key>";
    constexpr std::string_view kVal = "<arg_value>", kValEnd = "</arg_value>";
    size_t k = body.find(kKey);
    std::string name(trimView(body.substr(0, k)));
    const bool oneWord =
        std::none_of(name.begin(), name.end(), [](char ch) { return isSpace(ch) || ch == '{' || ch == '<'; });
    if (name.empty() || !oneWord) {
        c.unreadable(body, "no function name");
        return;
    }
    json args = json::object();
    const size_t argsStart = k;
    while (k != npos) {
        const size_t ks = k + kKey.size();
        const size_t ke = body.find(kKeyEnd, ks);
        const size_t vs = ke == npos ? npos : skipSpace(body, ke + kKeyEnd.size());
        if (vs == npos || body.substr(vs, kVal.size()) != kVal) {
            c.out.calls.push_back({"", std::move(name), std::string(trimView(body.substr(argsStart)))});
            c.problem("unreadable <arg_key>/<arg_value> markup");
            return;
        }
        const size_t ve = body.find(kValEnd, vs + kVal.size());  // unclosed at the end: to the end
        const std::string_view value = body.substr(vs + kVal.size(), ve == npos ? npos : ve - vs - kVal.size());
        args[std::string(trimView(body.substr(ks, ke - ks)))] = glmValue(value);
        k = ve == npos ? npos : body.find(kKey, ve + kValEnd.size());
    }
    c.out.calls.push_back({"", std::move(name), dumpJson(args)});
}

// ---- Hermes / Qwen (JSON body) and GLM-4.5 (NAME body) share <tool_call>...</tool_call> ----

bool parseToolCallTags(std::string_view s, Collector& c) {
    constexpr std::string_view kOpen = "<tool_call>", kClose = "</tool_call>";
    Finder opens(s, kOpen), closes(s, kClose);
    size_t pos = opens.from(0);
    if (pos == npos) return false;
    while (pos != npos) {
        const size_t bodyStart = pos + kOpen.size();
        const size_t close = closes.from(bodyStart);
        const size_t next = opens.from(bodyStart);
        const bool closed = close != npos && (next == npos || close < next);
        const size_t bodyEnd = closed ? close : (next == npos ? s.size() : next);
        const size_t end = closed ? close + kClose.size() : bodyEnd;
        const std::string_view body = trimView(s.substr(bodyStart, bodyEnd - bodyStart));
        if (body.empty() || body.front() == '{' || body.front() == '[') {
            c.setFormat("hermes");
            c.addJsonBody(body);
        } else {
            c.setFormat("glm4");
            addGlmBody(body, c);
        }
        c.removed.emplace_back(pos, end);
        pos = opens.from(end);
    }
    return true;
}

// ---- Mistral: [TOOL_CALLS] [{...}, ...]  or  [TOOL_CALLS]NAME[CALL_ID]id[ARGS]{...} ----

size_t addMistralNamed(std::string_view s, size_t pos, size_t limit, Collector& c) {
    constexpr std::string_view kArgs = "[ARGS]", kId = "[CALL_ID]";
    const std::string_view span = s.substr(pos, limit - pos);
    const size_t a = span.find(kArgs);
    if (a == npos) {
        c.unreadable(trimView(span), "no [ARGS] after the function name");
        return limit;
    }
    std::string_view head = span.substr(0, a);
    std::string id;
    if (const size_t i = head.find(kId); i != npos) {
        id = std::string(trimView(head.substr(i + kId.size())));
        head = head.substr(0, i);
    }
    const size_t argsStart = skipSpace(s, pos + a + kArgs.size());
    size_t end = argsStart < limit && s[argsStart] == '{' ? jsonExtent(s, argsStart, limit) : npos;
    if (end == npos) end = limit;
    c.addNamed(std::move(id), std::string(trimView(head)), s.substr(argsStart, end - argsStart));
    return end;
}

bool parseMistral(std::string_view s, Collector& c) {
    constexpr std::string_view kTag = "[TOOL_CALLS]";
    Finder tags(s, kTag);
    size_t pos = tags.from(0);
    if (pos == npos) return false;
    c.setFormat("mistral");
    while (pos != npos) {
        const size_t after = pos + kTag.size();
        const size_t next = tags.from(after);
        const size_t limit = next == npos ? s.size() : next;
        const size_t p = skipSpace(s, after);
        const size_t end =
            p < limit && (s[p] == '[' || s[p] == '{') ? c.addJsonAt(s, p, limit) : addMistralNamed(s, after, limit, c);
        c.removed.emplace_back(pos, end);
        pos = tags.from(end);
    }
    return true;
}

// ---- Sectioned formats (DeepSeek, Kimi): BEGIN (CALL_BEGIN head SEP body CALL_END)* END ----

struct SectionMarkers {
    std::string_view sectionBegin, callBegin, sep, callEnd, sectionEnd;
};

// Calls `onCall(callText)` for each call's text between its markers. End markers missing at
// the end of the text are accepted.
template <class OnCall>
bool forEachSectionCall(std::string_view s, const SectionMarkers& m, Collector& c, OnCall onCall) {
    Finder secBegin(s, m.sectionBegin), callBegin(s, m.callBegin), callEnd(s, m.callEnd), secEnd(s, m.sectionEnd);
    bool any = false;
    size_t pos = 0;
    while (true) {
        const size_t sb = secBegin.from(pos), cb = callBegin.from(pos);
        const size_t start = std::min(sb, cb);
        if (start == npos) break;
        any = true;
        size_t cur = start == sb ? sb + m.sectionBegin.size() : start;
        const size_t secClose = secEnd.from(cur);
        const size_t regionEnd = secClose == npos ? s.size() : secClose;
        size_t last = cur;
        for (size_t b = callBegin.from(cur); b != npos && b < regionEnd; b = callBegin.from(cur)) {
            const size_t bs = b + m.callBegin.size();
            const size_t e = callEnd.from(bs), nb = callBegin.from(bs);
            const size_t bodyEnd = std::min({e, nb, regionEnd});
            onCall(s.substr(bs, bodyEnd - bs));
            cur = last = bodyEnd == e ? e + m.callEnd.size() : bodyEnd;
        }
        const size_t end = secClose == npos ? last : secClose + m.sectionEnd.size();
        c.removed.emplace_back(start, end);
        pos = std::max(end, cur);
    }
    return any;
}

void addDeepseekCall(std::string_view call, std::string_view sep, Collector& c) {
    const size_t sp = call.find(sep);
    if (sp == npos) {
        c.setFormat(c.formatOr("deepseek-v3"));
        c.unreadable(trimView(call), "no separator between the function name and its arguments");
        return;
    }
    const std::string_view head = trimView(call.substr(0, sp));
    const std::string_view rest = trimView(call.substr(sp + sep.size()));
    if (head == "function" && !rest.empty() && rest.front() != '{') {  // V3: type, NAME \n ```json {...} ```
        c.setFormat("deepseek-v3");
        const size_t nl = rest.find('\n');
        const std::string_view name = trimView(rest.substr(0, nl));
        c.addNamed("", std::string(name), nl == npos ? std::string_view() : unfence(rest.substr(nl + 1)));
    } else {  // V3.1: NAME, then the arguments' JSON
        c.setFormat("deepseek-v3.1");
        c.addNamed("", std::string(head), rest);
    }
}

bool parseDeepseek(std::string_view s, Collector& c) {
    static constexpr SectionMarkers m{"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                                      "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"};
    return forEachSectionCall(s, m, c, [&](std::string_view call) { addDeepseekCall(call, m.sep, c); });
}

// Kimi's call head: "functions.NAME:INDEX" (the prefix is optional); it is also the call's id.
void addKimiCall(std::string_view call, std::string_view sep, Collector& c) {
    c.setFormat("kimi-k2");
    const size_t sp = call.find(sep);
    if (sp == npos) {
        c.unreadable(trimView(call), "no <|tool_call_argument_begin|> after the function id");
        return;
    }
    const std::string_view head = trimView(call.substr(0, sp));
    std::string_view name = head;
    if (name.substr(0, 10) == "functions.") name.remove_prefix(10);
    if (const size_t colon = name.rfind(':'); colon != npos) name = name.substr(0, colon);
    c.addNamed(std::string(head), std::string(name), call.substr(sp + sep.size()));
}

bool parseKimi(std::string_view s, Collector& c) {
    static constexpr SectionMarkers m{"<|tool_calls_section_begin|>", "<|tool_call_begin|>",
                                      "<|tool_call_argument_begin|>", "<|tool_call_end|>",
                                      "<|tool_calls_section_end|>"};
    return forEachSectionCall(s, m, c, [&](std::string_view call) { addKimiCall(call, m.sep, c); });
}

// ---- Harmony (gpt-oss): <|start|>assistant<|channel|>commentary to=functions.NAME ... <|message|>{...}<|call|> ----

bool startsWith(std::string_view s, size_t pos, std::string_view prefix) {
    return s.substr(pos, prefix.size()) == prefix;
}

// Where the message whose header holds the recipient at `to` begins: its <|start|> (else its
// <|channel|>), looked for back to `floor` only, and only where no other message lies between.
size_t harmonyHeaderStart(std::string_view s, size_t floor, size_t to) {
    const std::string_view window = s.substr(floor, to - floor);
    size_t h = window.rfind("<|start|>");
    if (h == npos) h = window.rfind("<|channel|>");
    if (h == npos || window.find("<|message|>", h) != npos || window.find("<|end|>", h) != npos) return to;
    return floor + h;
}

// The message body after `bodyStart` ends at the first of <|call|>, <|end|>, <|return|> (all
// eaten) or <|start|>, <|channel|> (kept), else at the end. Returns {body end, markup end}.
Range harmonyBodyEnd(std::string_view s, size_t bodyStart, Finder& specials) {
    for (size_t q = specials.from(bodyStart); q != npos; q = specials.from(q + 2)) {
        for (std::string_view t : {"<|call|>", "<|end|>", "<|return|>"})
            if (startsWith(s, q, t)) return {q, q + t.size()};
        if (startsWith(s, q, "<|start|>") || startsWith(s, q, "<|channel|>")) return {q, q};
    }
    return {s.size(), s.size()};
}

void harmonyFinalContent(std::string_view s, Collector& c) {
    constexpr std::string_view kFinal = "<|channel|>final<|message|>";
    const size_t f = s.find(kFinal);
    if (f == npos) return;
    const size_t bs = f + kFinal.size();
    Finder specials(s, "<|");
    c.content = std::string(trimView(s.substr(bs, harmonyBodyEnd(s, bs, specials).first - bs)));
    c.hasContent = true;
}

bool parseHarmony(std::string_view s, Collector& c) {
    constexpr std::string_view kTo = "to=functions.", kMessage = "<|message|>";
    Finder tos(s, kTo), messages(s, kMessage), specials(s, "<|");
    size_t to = tos.from(0);
    if (to == npos) return false;
    c.setFormat("harmony");
    size_t floor = 0;
    while (to != npos) {
        const size_t ns = to + kTo.size();
        size_t ne = ns;
        while (ne < s.size() && !isSpace(s[ne]) && s[ne] != '<') ++ne;
        const size_t start = harmonyHeaderStart(s, floor, to);
        const size_t m = messages.from(ne);
        if (m == npos) {
            c.addNamed("", std::string(s.substr(ns, ne - ns)), {});
            c.problem("no <|message|> after the recipient");
            c.removed.emplace_back(start, s.size());
            break;
        }
        const size_t bs = m + kMessage.size();
        const Range body = harmonyBodyEnd(s, bs, specials);
        c.addNamed("", std::string(s.substr(ns, ne - ns)), s.substr(bs, body.first - bs));
        c.removed.emplace_back(start, body.second);
        floor = body.second;
        to = tos.from(floor);
    }
    harmonyFinalContent(s, c);
    return true;
}

// ---- Granite: <|tool_call|>[{...}]   Command R7B: <|START_ACTION|>[{...}]<|END_ACTION|> ----

bool parseGranite(std::string_view s, Collector& c) {
    constexpr std::string_view kTag = "<|tool_call|>";
    Finder tags(s, kTag);
    size_t pos = tags.from(0);
    if (pos == npos) return false;
    c.setFormat("granite");
    while (pos != npos) {
        const size_t after = pos + kTag.size();
        const size_t next = tags.from(after);
        const size_t end = c.addJsonAt(s, after, next == npos ? s.size() : next);
        c.removed.emplace_back(pos, end);
        pos = tags.from(end);
    }
    return true;
}

bool parseCommandR(std::string_view s, Collector& c) {
    constexpr std::string_view kStart = "<|START_ACTION|>", kEnd = "<|END_ACTION|>";
    Finder starts(s, kStart), ends(s, kEnd);
    size_t pos = starts.from(0);
    if (pos == npos) return false;
    c.setFormat("command-r7b");
    while (pos != npos) {
        const size_t bs = pos + kStart.size();
        const size_t e = ends.from(bs);
        const size_t be = e == npos ? s.size() : e;
        c.addJsonBody(s.substr(bs, be - bs));
        const size_t end = e == npos ? s.size() : e + kEnd.size();
        c.removed.emplace_back(pos, end);
        pos = starts.from(end);
    }
    return true;
}

// ---- Llama 3.x: [<|python_tag|>] {"name": ..., "parameters": {...}} [; {...}] ----

struct JsonRun {
    std::vector<std::pair<json, std::string_view>> items;
    size_t end;
};

// JSON objects one after another from `pos`, separated by space or ';'.
JsonRun jsonObjectRun(std::string_view s, size_t pos) {
    JsonRun run{{}, pos};
    while (true) {
        size_t q = pos;
        while (q < s.size() && (isSpace(s[q]) || s[q] == ';')) ++q;
        if (q >= s.size() || s[q] != '{') break;
        const size_t e = jsonExtent(s, q, s.size());
        if (e == npos) break;
        json v = parseJson(s.substr(q, e - q));
        if (v.is_discarded()) break;
        run.items.emplace_back(std::move(v), s.substr(q, e - q));
        run.end = pos = e;
    }
    return run;
}

bool parseLlama3(std::string_view s, Collector& c) {
    constexpr std::string_view kTag = "<|python_tag|>";
    if (const size_t t = s.find(kTag); t != npos) {
        c.setFormat("llama3");
        const size_t after = t + kTag.size();
        JsonRun run = jsonObjectRun(s, after);
        if (run.items.empty()) {  // not JSON (a built-in tool's Python call, or broken): up to the next special token
            const size_t special = s.find("<|", after);
            const size_t end = special == npos ? s.size() : special;
            c.addJsonBody(s.substr(after, end - after));
            c.removed.emplace_back(t, end);
            return true;
        }
        for (const auto& [v, raw] : run.items) c.addObject(v, raw);
        c.removed.emplace_back(t, run.end);
        return true;
    }
    const std::string_view whole = trimView(s);
    if (whole.empty() || whole.front() != '{') return false;
    const size_t b = static_cast<size_t>(whole.data() - s.data());
    JsonRun run = jsonObjectRun(s, b);
    if (run.end != b + whole.size()) return false;
    for (const auto& item : run.items)
        if (!isCallObject(item.first)) return false;
    c.setFormat("llama3");
    for (const auto& [v, raw] : run.items) c.addObject(v, raw);
    c.removed.emplace_back(b, run.end);
    return true;
}

// ---- Plain JSON: the whole text (or one ```json block that is the whole text) ----

bool parseJsonFallback(std::string_view s, Collector& c) {
    const std::string_view whole = trimView(s);
    std::string_view body = whole;
    if (whole.substr(0, 3) == "```") {
        const size_t nl = whole.find('\n');
        if (nl == npos || whole.size() < 6 || whole.find("```", nl) != whole.size() - 3) return false;
        body = whole.substr(nl + 1, whole.size() - 3 - nl - 1);
    }
    const json v = parseJson(body);
    if (v.is_discarded()) return false;
    const json* list = v.is_object() ? field(v, "tool_calls") : (v.is_array() ? &v : nullptr);
    if (list == nullptr) {
        if (!isCallObject(v)) return false;
    } else if (!list->is_array() || list->empty() ||
               !std::all_of(list->begin(), list->end(), [](const json& e) { return isCallObject(e); })) {
        return false;
    }
    c.setFormat("json");
    if (list == nullptr) {
        c.addObject(v, body);
    } else {
        for (const json& e : *list) c.addObject(e, dumpJson(e));
        if (v.is_object() && v.contains("content") && v["content"].is_string()) {
            c.content = std::string(trimView(v["content"].get<std::string>()));
            c.hasContent = true;
        }
    }
    const size_t b = static_cast<size_t>(whole.data() - s.data());
    c.removed.emplace_back(b, b + whole.size());
    return true;
}

// ---- Reasoning, and putting it together ----

// A copy of the text where reasoning is '\0' (offsets kept): <think>...</think> blocks,
// everything before a </think> that comes first (the template opened the block), and
// everything after a <think> that never closes.
std::string blankReasoning(std::string_view text) {
    constexpr std::string_view kOpen = "<think>", kClose = "</think>";
    std::string scan(text);
    auto blank = [&](size_t b, size_t e) { std::fill(scan.begin() + b, scan.begin() + e, '\0'); };
    size_t pos = 0;
    const size_t firstOpen = text.find(kOpen), firstClose = text.find(kClose);
    if (firstClose != npos && (firstOpen == npos || firstClose < firstOpen)) {
        pos = firstClose + kClose.size();
        blank(0, pos);
    }
    for (size_t o = text.find(kOpen, pos); o != npos; o = text.find(kOpen, pos)) {
        const size_t e = text.find(kClose, o + kOpen.size());
        pos = e == npos ? text.size() : e + kClose.size();
        blank(o, pos);
    }
    return scan;
}

std::string withoutRanges(std::string_view text, std::vector<Range> ranges) {
    std::sort(ranges.begin(), ranges.end());
    std::string out;
    out.reserve(text.size());
    size_t pos = 0;
    for (const auto& [b, e] : ranges) {
        if (b > pos) out.append(text.substr(pos, b - pos));
        pos = std::max(pos, e);
    }
    if (pos < text.size()) out.append(text.substr(pos));
    return std::string(trimView(out));
}

ParsedToolCalls parseUnguarded(std::string_view text) {
    using Parser = bool (*)(std::string_view, Collector&);
    static constexpr Parser kParsers[] = {parseToolCallTags, parseKimi,    parseDeepseek,
                                          parseHarmony,      parseMistral, parseGranite,
                                          parseCommandR,     parseLlama3,  parseJsonFallback};
    const std::string scan = blankReasoning(text);
    for (const Parser parser : kParsers) {
        Collector c;
        if (!parser(scan, c) || c.out.calls.empty()) continue;
        c.out.content = c.hasContent ? std::move(c.content) : withoutRanges(text, c.removed);
        return std::move(c.out);
    }
    ParsedToolCalls none;
    none.content = std::string(trimView(text));
    return none;
}

}  // namespace

std::string toolArgumentsText(const nlohmann::json& value, bool* isJson) {
    bool ok = true;
    std::string out;
    if (value.is_string()) {
        const auto& s = value.get_ref<const std::string&>();
        const json inner = trimView(s).empty() ? json::object() : parseJson(s);
        ok = !inner.is_discarded();
        out = ok ? dumpJson(inner) : s;
    } else {
        out = value.is_null() ? std::string("{}") : dumpJson(value);
    }
    if (isJson != nullptr) *isJson = ok;
    return out;
}

ParsedToolCalls parseToolCalls(std::string_view text) {
    try {
        return parseUnguarded(text);
    } catch (...) {  // allocation failure or the like: no calls rather than no answer
        ParsedToolCalls none;
        try {
            none.content = std::string(trimView(text));
        } catch (...) {
        }
        return none;
    }
}

}  // namespace verdict::core
