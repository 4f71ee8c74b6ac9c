// Builtin filters over sequences and mappings (jinja2 3.1 semantics). Filters that are lazy
// in jinja2 (map, select, reject, selectattr, rejectattr, unique, items, batch, slice) return
// Generator values: iterable, but len() and tojson fail on them exactly as in Python.
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <algorithm>
#include <unordered_map>

namespace verdict::tok::jinja {

void registerSequenceFilters(std::unordered_map<std::string_view, FilterFn>& table);

namespace {

Value generator(std::vector<Value> items) { return Value::list(std::move(items), ListKind::Generator); }

Value lowerIfString(const Value& v) { return v.isString() ? Value::string(pyLower(v.str())) : v; }

// jinja2's make_attrgetter: dotted path (or integer index), getitem semantics, optional default.
Value attributeOf(Interpreter& in, const Value& item, const Value& attribute) {
    if (attribute.isInt()) return in.getItem(item, attribute);
    return in.getAttributePath(item, toStr(attribute));
}

// Sort/min/max/unique key: the item or its attribute(s), lower-cased unless case_sensitive.
Value keyOf(Interpreter& in, const Value& item, const Value* attribute, bool caseSensitive) {
    auto post = [&](const Value& v) { return caseSensitive ? v : lowerIfString(v); };
    if (!attribute || attribute->isNone()) return post(item);
    if (attribute->isString() && attribute->str().find(',') != std::string::npos) {
        std::vector<Value> parts;
        for (const auto& name : pySplit(attribute->str(), std::string(","), -1))
            parts.push_back(post(in.getAttributePath(item, name)));
        return Value::list(std::move(parts), ListKind::Tuple);
    }
    return post(attributeOf(in, item, *attribute));
}

Value fFirst(Interpreter&, const Value& v, CallArgs&) {
    const std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value fLast(Interpreter&, const Value& v, CallArgs&) {
    if (v.isList() && (v.listKind() == ListKind::Generator || v.listKind() == ListKind::Reversed))
        fail(ErrorKind::Type, "'" + typeName(v) + "' object is not reversible");
    const std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value fList(Interpreter&, const Value& v, CallArgs&) { return Value::list(iterate(v)); }

Value fJoin(Interpreter& in, const Value& v, CallArgs& a) {
    const std::string sep = toStr(a.get(0, "d", Value::string("")));
    const Value* attribute = a.find(1, "attribute");
    std::string out;
    bool first = true;
    for (const auto& item : iterate(v)) {
        const std::size_t before = out.size();
        if (!first) out += sep;
        first = false;
        appendStr(out, attribute && !attribute->isNone() ? attributeOf(in, item, *attribute) : item);
        in.chargeWork(out.size() - before);  // as it grows: [big] * 100000 joins to far more than any input
        in.checkSize(out.size());
    }
    return Value::string(std::move(out));
}

Value fMap(Interpreter& in, const Value& v, CallArgs& a) {
    std::vector<Value> out;
    if (!truthy(v)) return generator({});  // jinja2: `if value:` before iterating
    if (a.positional.empty()) {
        const Value* attribute = a.find(0, "attribute");
        if (!attribute) fail(ErrorKind::Type, "map() needs a filter name or attribute=");
        const Value fallback = a.get(1000, "default", Value::none());
        for (const auto& item : iterate(v)) {
            Value r = attributeOf(in, item, *attribute);
            if (r.isUndefined() && !fallback.isNone()) r = fallback;
            out.push_back(std::move(r));
        }
        return generator(std::move(out));
    }
    if (!a.positional[0].isString()) fail(ErrorKind::Type, "map() filter name must be a string");
    const std::string name = a.positional[0].str();
    CallArgs rest;
    rest.positional.assign(a.positional.begin() + 1, a.positional.end());
    rest.keyword = a.keyword;
    for (const auto& item : iterate(v)) {
        CallArgs callArgs = rest;
        out.push_back(in.applyFilter(name, item, callArgs));
    }
    return generator(std::move(out));
}

// select/reject/selectattr/rejectattr share jinja2's prepare_select_or_reject.
Value selectOrReject(Interpreter& in, const Value& v, CallArgs& a, bool byAttribute, bool keep) {
    if (!truthy(v)) return generator({});  // jinja2: `if value:` before iterating (None gives nothing)
    std::size_t off = 0;
    Value attribute;
    if (byAttribute) {
        if (a.positional.empty()) fail(ErrorKind::Type, "missing attribute argument");
        attribute = a.positional[0];
        off = 1;
    }
    std::string test;
    CallArgs testArgs;
    const bool hasTest = a.positional.size() > off;
    if (hasTest) {
        test = toStr(a.positional[off]);
        testArgs.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(off + 1), a.positional.end());
        testArgs.keyword = a.keyword;
    }
    std::vector<Value> out;
    for (const auto& item : iterate(v)) {
        const Value subject = byAttribute ? attributeOf(in, item, attribute) : item;
        bool pass = false;
        if (hasTest) {
            CallArgs copy = testArgs;
            pass = in.applyTest(test, subject, copy);
        } else {
            pass = truthy(subject);
        }
        if (pass == keep) out.push_back(item);
    }
    return generator(std::move(out));
}

Value fSelect(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, false, true); }
Value fReject(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, false, false); }
Value fSelectattr(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, true, true); }
Value fRejectattr(Interpreter& in, const Value& v, CallArgs& a) { return selectOrReject(in, v, a, true, false); }

Value fUnique(Interpreter& in, const Value& v, CallArgs& a) {
    const bool caseSensitive = boolArg(a, 0, "case_sensitive", false);
    const Value* attribute = a.find(1, "attribute");
    std::vector<Value> seen;
    std::vector<Value> out;
    for (const auto& item : iterate(v)) {
        const Value key = keyOf(in, item, attribute, caseSensitive);
        bool dup = false;
        for (const auto& s : seen) dup = dup || equals(s, key);
        if (dup) continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return generator(std::move(out));
}

std::vector<Value> sortedItems(Interpreter& in, std::vector<Value> items, const Value* attribute, bool caseSensitive,
                               bool reverse) {
    std::vector<std::pair<Value, Value>> keyed;
    keyed.reserve(items.size());
    for (auto& item : items) keyed.emplace_back(keyOf(in, item, attribute, caseSensitive), std::move(item));
    std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& x, const auto& y) {
        return reverse ? lessThan(y.first, x.first) : lessThan(x.first, y.first);
    });
    std::vector<Value> out;
    out.reserve(keyed.size());
    for (auto& [k, item] : keyed) out.push_back(std::move(item));
    return out;
}

Value fSort(Interpreter& in, const Value& v, CallArgs& a) {
    const bool reverse = boolArg(a, 0, "reverse", false);
    const bool caseSensitive = boolArg(a, 1, "case_sensitive", false);
    return Value::list(sortedItems(in, iterate(v), a.find(2, "attribute"), caseSensitive, reverse));
}

Value fDictsort(Interpreter& in, const Value& v, CallArgs& a) {
    if (!v.isDict()) fail(ErrorKind::Type, "dictsort requires a mapping");
    const bool caseSensitive = boolArg(a, 0, "case_sensitive", false);
    const std::string by = toStr(a.get(1, "by", Value::string("key")));
    const bool reverse = boolArg(a, 2, "reverse", false);
    if (by != "key" && by != "value") fail(ErrorKind::Value, "You can only sort by either \"key\" or \"value\"");
    std::vector<Value> pairs;
    for (const auto& [k, val] : v.dictData().entries) pairs.push_back(Value::list({k, val}, ListKind::Tuple));
    const Value index = Value::integer(by == "key" ? 0 : 1);
    return Value::list(sortedItems(in, std::move(pairs), &index, caseSensitive, reverse));
}

Value fReverse(Interpreter&, const Value& v, CallArgs&) {
    if (v.isString()) {
        const std::vector<std::size_t> b = utf8Boundaries(v.str());
        std::string out;
        out.reserve(v.str().size());
        for (std::size_t k = b.size() - 1; k > 0; --k) out.append(v.str(), b[k - 1], b[k] - b[k - 1]);
        return Value::string(std::move(out));
    }
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    const bool lazyInput = v.isList() && (v.listKind() == ListKind::Generator || v.listKind() == ListKind::Reversed);
    return Value::list(std::move(items), lazyInput ? ListKind::List : ListKind::Reversed);
}

Value fSum(Interpreter& in, const Value& v, CallArgs& a) {
    const Value* attribute = a.find(0, "attribute");
    Value total = a.get(1, "start", Value::integer(0));
    if (total.isString()) fail(ErrorKind::Type, "sum() can't sum strings [use ''.join(seq) instead]");
    for (const auto& item : iterate(v))
        total = pyAdd(in, total, attribute && !attribute->isNone() ? attributeOf(in, item, *attribute) : item);
    return total;
}

Value minOrMax(Interpreter& in, const Value& v, CallArgs& a, bool wantMax) {
    const bool caseSensitive = boolArg(a, 0, "case_sensitive", false);
    const Value* attribute = a.find(1, "attribute");
    const std::vector<Value> items = iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    std::size_t best = 0;
    Value bestKey = keyOf(in, items[0], attribute, caseSensitive);
    for (std::size_t i = 1; i < items.size(); ++i) {
        Value key = keyOf(in, items[i], attribute, caseSensitive);
        if (wantMax ? lessThan(bestKey, key) : lessThan(key, bestKey)) {
            best = i;
            bestKey = std::move(key);
        }
    }
    return items[best];
}

Value fMin(Interpreter& in, const Value& v, CallArgs& a) { return minOrMax(in, v, a, false); }
Value fMax(Interpreter& in, const Value& v, CallArgs& a) { return minOrMax(in, v, a, true); }

Value fItems(Interpreter&, const Value& v, CallArgs&) {
    if (v.isUndefined()) return generator({});
    if (!v.isDict()) fail(ErrorKind::Type, "Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, val] : v.dictData().entries) out.push_back(Value::list({k, val}, ListKind::Tuple));
    return generator(std::move(out));
}

Value fBatch(Interpreter& in, const Value& v, CallArgs& a) {
    const std::int64_t n = intArg(a, 0, "linecount", 0);
    if (n <= 0) fail(ErrorKind::Value, "batch size must be positive");
    const Value* fill = a.find(1, "fill_with");
    std::vector<Value> out;
    std::vector<Value> cur;
    for (const auto& item : iterate(v)) {
        cur.push_back(item);
        if (static_cast<std::int64_t>(cur.size()) == n) {
            out.push_back(Value::list(std::move(cur)));
            cur.clear();
        }
    }
    if (!cur.empty()) {
        if (fill && !fill->isNone()) {
            in.chargeIterations(static_cast<std::uint64_t>(n) - cur.size());  // the padding is made, item by item
            while (static_cast<std::int64_t>(cur.size()) < n) cur.push_back(*fill);
        }
        out.push_back(Value::list(std::move(cur)));
    }
    return generator(std::move(out));
}

Value fSlice(Interpreter& in, const Value& v, CallArgs& a) {
    const std::int64_t slices = intArg(a, 0, "slices", 0);
    if (slices <= 0) fail(ErrorKind::Value, "slice count must be positive");
    in.chargeIterations(static_cast<std::uint64_t>(slices));  // one list per slice, however short the input
    const Value* fill = a.find(1, "fill_with");
    const std::vector<Value> seq = iterate(v);
    const auto length = static_cast<std::int64_t>(seq.size());
    const std::int64_t perSlice = length / slices;
    const std::int64_t withExtra = length % slices;
    std::int64_t offset = 0;
    std::vector<Value> out;
    for (std::int64_t k = 0; k < slices; ++k) {
        const std::int64_t start = offset + k * perSlice;
        if (k < withExtra) ++offset;
        const std::int64_t end = offset + (k + 1) * perSlice;
        std::vector<Value> part(seq.begin() + start, seq.begin() + end);
        if (fill && !fill->isNone() && k >= withExtra) part.push_back(*fill);
        out.push_back(Value::list(std::move(part)));
    }
    return generator(std::move(out));
}

}  // namespace

void registerSequenceFilters(std::unordered_map<std::string_view, FilterFn>& t) {
    t.insert({{"first", fFirst},       {"last", fLast},           {"list", fList},       {"join", fJoin},
              {"map", fMap},           {"select", fSelect},       {"reject", fReject},   {"selectattr", fSelectattr},
              {"rejectattr", fRejectattr}, {"unique", fUnique},   {"sort", fSort},       {"dictsort", fDictsort},
              {"reverse", fReverse},   {"sum", fSum},             {"min", fMin},         {"max", fMax},
              {"items", fItems},       {"batch", fBatch},         {"slice", fSlice}});
}

}  // namespace verdict::tok::jinja
