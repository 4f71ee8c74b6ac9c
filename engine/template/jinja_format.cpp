// String formatting the templates can reach: Python's `%` operator, str.format() and
// time.strftime (C locale, as strftime_now uses it).
#include "template/jinja_builtins.h"
#include "template/jinja_error.h"
#include "template/jinja_string.h"

#include <cmath>
#include <cstdio>

namespace verdict::tok::jinja {

namespace {

// The widest field and the longest precision a format may ask for, for '%' and str.format alike.
// A chat template has no use for a field of a million characters; a width of 40 million (found by
// fuzz_jinja) built a 40 MB string per field, seconds of work that no step is counted for.
constexpr std::int64_t kMaxFormatWidth = std::int64_t{1} << 20;
constexpr std::int64_t kMaxFormatPrecision = 400;

std::string padTo(std::string s, std::int64_t width, bool leftAlign, char fill = ' ') {
    const auto len = static_cast<std::int64_t>(utf8Length(s));
    if (width <= len) return s;
    const std::string padding(static_cast<std::size_t>(width - len), fill);
    return leftAlign ? s + padding : padding + s;
}

// printf of one number; as long as it comes out (a width or a %.400f of 1e300 exceeds any
// fixed buffer; the caller has bounded the width by kMaxFormatWidth).
template <class T>
std::string cFormat(const std::string& spec, T v) {
    char buf[512];
    const int n = std::snprintf(buf, sizeof buf, spec.c_str(), v);
    if (n < 0) return {};
    if (static_cast<std::size_t>(n) < sizeof buf) return std::string(buf, static_cast<std::size_t>(n));
    std::string out(static_cast<std::size_t>(n) + 1, '\0');
    std::snprintf(out.data(), out.size(), spec.c_str(), v);
    out.resize(static_cast<std::size_t>(n));
    return out;
}

// Decimal digits at fmt[i...] (a width or precision), saturating far above any allowed value.
std::int64_t scanCount(std::string_view fmt, std::size_t& i) {
    std::int64_t n = 0;
    for (; i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9'; ++i)
        if (n < (std::int64_t{1} << 50)) n = n * 10 + (fmt[i] - '0');
    return n;
}

std::string truncateUnits(const std::string& s, std::int64_t precision) {
    if (precision < 0) return s;
    return s.substr(0, utf8OffsetOfUnit(s, static_cast<std::size_t>(precision)));
}

void requireNumber(const Value& v, char type) {
    if (v.isUndefined()) failUndefined(v);
    if (!v.isNumber()) {
        fail(ErrorKind::Type, std::string("%") + type + " format: a real number is required, not " + typeName(v));
    }
}

}  // namespace

std::string pyPercentFormat(Interpreter& interp, std::string_view fmt, const Value& args) {
    std::vector<Value> positional;
    const DictData* mapping = nullptr;
    if (args.isList() && args.listKind() == ListKind::Tuple) positional = args.items();
    else positional.push_back(args);
    if (args.isDict()) mapping = &args.dictData();

    std::string out;
    std::size_t next = 0;
    bool usedMapping = false;
    auto nextArg = [&]() -> const Value& {
        if (next >= positional.size()) fail(ErrorKind::Type, "not enough arguments for format string");
        return positional[next++];
    };
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) fail(ErrorKind::Value, "incomplete format");
        if (fmt[i] == '%') {
            out += '%';
            continue;
        }
        const Value* keyed = nullptr;
        if (fmt[i] == '(') {
            const std::size_t close = fmt.find(')', i);
            if (close == std::string_view::npos) fail(ErrorKind::Value, "incomplete format key");
            if (!mapping) fail(ErrorKind::Type, "format requires a mapping");
            const std::string key(fmt.substr(i + 1, close - i - 1));
            keyed = mapping->find(std::string_view(key));
            if (!keyed) fail(ErrorKind::Value, "KeyError: '" + key + "'");
            usedMapping = true;
            i = close + 1;
        }
        std::string flags;
        while (i < fmt.size() && std::string_view("-+ 0#").find(fmt[i]) != std::string_view::npos) flags += fmt[i++];
        std::int64_t width = -1;
        std::int64_t precision = -1;
        if (i < fmt.size() && fmt[i] == '*') {
            width = toInteger(nextArg(), "width");
            ++i;
        } else if (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') {
            width = scanCount(fmt, i);
        }
        if (i < fmt.size() && fmt[i] == '.') {
            ++i;
            precision = 0;
            if (i < fmt.size() && fmt[i] == '*') {
                precision = toInteger(nextArg(), "precision");
                ++i;
            } else {
                precision = scanCount(fmt, i);
            }
        }
        while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
        if (i >= fmt.size()) fail(ErrorKind::Value, "incomplete format");
        if (width > kMaxFormatWidth || precision > kMaxFormatPrecision)
            fail(ErrorKind::Limit, "format width or precision too large");
        const char type = fmt[i];
        const Value& v = keyed ? *keyed : nextArg();
        const bool left = flags.find('-') != std::string::npos;
        std::string piece;
        std::string spec = concat("%", flags, width >= 0 ? std::to_string(width) : std::string(),
                                  precision >= 0 ? concat(".", std::to_string(precision)) : std::string());
        switch (type) {
        case 's':
        case 'r':
        case 'a':
            piece = padTo(truncateUnits(type == 's' ? toStr(v) : repr(v), precision), width, left);
            break;
        case 'd':
        case 'i':
        case 'u': {
            requireNumber(v, type);
            const double d = v.floatValue();
            if (v.isFloat() && std::isnan(d)) fail(ErrorKind::Value, "cannot convert float NaN to integer");
            if (v.isFloat() && !(std::fabs(d) < 9.2e18))
                fail(ErrorKind::Limit, "integer result outside the 64-bit range supported by this engine");
            const long long n = v.isFloat() ? static_cast<long long>(std::trunc(d)) : static_cast<long long>(v.intValue());
            piece = cFormat(spec + "lld", n);
            break;
        }
        case 'x':
        case 'X':
        case 'o':
            if (!(v.isInt() || v.isBool())) fail(ErrorKind::Type, std::string("%") + type + " format: an integer is required, not " + typeName(v));
            piece = cFormat(spec + "ll" + type, static_cast<long long>(v.intValue()));
            break;
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
            requireNumber(v, type);
            piece = cFormat(spec + type, v.floatValue());
            break;
        case 'c':
            if (v.isString() && utf8Length(v.str()) == 1) piece = v.str();
            else if (v.isInt() && (v.intValue() < 0 || v.intValue() > 0x10FFFF)) fail(ErrorKind::Value, "%c arg not in range(0x110000)");
            else if (v.isInt()) appendUtf8(piece, static_cast<char32_t>(v.intValue()));
            else fail(ErrorKind::Type, "%c requires int or char");
            piece = padTo(piece, width, left);
            break;
        default:
            fail(ErrorKind::Value, std::string("unsupported format character '") + type + "'");
        }
        interp.chargeWork(piece.size());
        if (out.size() + piece.size() > interp.limits().maxOutputBytes)  // the whole result is one string too
            fail(ErrorKind::Limit, "formatted string larger than " + std::to_string(interp.limits().maxOutputBytes) + " bytes");
        out += piece;
    }
    if (!usedMapping && !mapping && next < positional.size())
        fail(ErrorKind::Type, "not all arguments converted during string formatting");
    return out;
}

Value percentFormat(Interpreter& interp, const Value& fmt, const Value& args) {
    if (!fmt.isMarkup()) return Value::string(pyPercentFormat(interp, fmt.str(), args));
    auto escapeArg = [](const Value& v) { return v.isMarkup() ? v : Value::markup(htmlEscape(toStr(v))); };
    Value escaped;
    if (args.isList() && args.listKind() == ListKind::Tuple) {
        std::vector<Value> items;
        for (const auto& v : args.items()) items.push_back(escapeArg(v));
        escaped = Value::list(std::move(items), ListKind::Tuple);
    } else if (args.isDict()) {
        DictData d;
        for (const auto& [k, v] : args.dictData().entries) d.insert(k, escapeArg(v));
        escaped = Value::dict(std::move(d));
    } else {
        escaped = escapeArg(args);
    }
    return Value::markup(pyPercentFormat(interp, fmt.str(), escaped));
}

namespace {

struct FormatSpec {
    std::string fill = " ";
    char align = 0;
    char sign = '-';
    bool alternate = false;
    std::int64_t width = -1;
    char grouping = 0;
    std::int64_t precision = -1;
    char type = 0;
};

FormatSpec parseSpec(std::string_view spec) {
    FormatSpec f;
    std::size_t i = 0;
    auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    if (!spec.empty()) {
        const std::size_t first = decodeUtf8At(spec, 0).length;
        if (first < spec.size() && isAlign(spec[first])) {
            f.fill = std::string(spec.substr(0, first));
            f.align = spec[first];
            i = first + 1;
        } else if (isAlign(spec[0])) {
            f.align = spec[0];
            i = 1;
        }
    }
    if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) f.sign = spec[i++];
    if (i < spec.size() && spec[i] == '#') { f.alternate = true; ++i; }
    if (i < spec.size() && spec[i] == '0') {
        if (!f.align) { f.fill = "0"; f.align = '='; }
        ++i;
    }
    if (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') f.width = scanCount(spec, i);
    if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) f.grouping = spec[i++];
    if (i < spec.size() && spec[i] == '.') {
        ++i;
        f.precision = scanCount(spec, i);
    }
    if (i < spec.size()) f.type = spec[i++];
    if (i != spec.size()) fail(ErrorKind::Value, "Invalid format specifier '" + std::string(spec) + "'");
    return f;
}

std::string group(const std::string& digits, char sep) {
    std::string out;
    const std::size_t n = digits.size();
    for (std::size_t k = 0; k < n; ++k) {
        out += digits[k];
        if (sep && (n - k - 1) % 3 == 0 && k + 1 < n) out += sep;
    }
    return out;
}

std::string applyAlign(std::string body, const std::string& signPart, const FormatSpec& f, char defaultAlign) {
    const char align = f.align ? f.align : defaultAlign;
    const auto len = static_cast<std::int64_t>(utf8Length(body) + signPart.size());
    if (f.width <= len) return signPart + body;
    const auto total = static_cast<std::size_t>(f.width - len);
    std::string padding;
    auto fillN = [&](std::size_t n) {
        std::string s;
        for (std::size_t k = 0; k < n; ++k) s += f.fill;
        return s;
    };
    switch (align) {
    case '<': return signPart + body + fillN(total);
    case '^': return fillN(total / 2) + signPart + body + fillN(total - total / 2);
    case '=': return signPart + fillN(total) + body;
    default: return fillN(total) + signPart + body;
    }
}

std::string formatValue(const Value& v, std::string_view specText) {
    const FormatSpec f = parseSpec(specText);
    if (f.width > kMaxFormatWidth || f.precision > kMaxFormatPrecision) fail(ErrorKind::Limit, "format width or precision too large");
    if (v.isString() || (!v.isNumber() && f.type == 0 && specText.empty())) {
        if (!v.isString() && !specText.empty())
            fail(ErrorKind::Type, "unsupported format string passed to " + typeName(v) + ".__format__");
        std::string s = toStr(v);
        if (f.type != 0 && f.type != 's') fail(ErrorKind::Value, std::string("Unknown format code '") + f.type + "' for object of type 'str'");
        return applyAlign(truncateUnits(s, f.precision), "", f, '<');
    }
    if (!v.isNumber()) fail(ErrorKind::Type, "unsupported format string passed to " + typeName(v) + ".__format__");
    if (v.isBool() && f.type == 0 && specText.empty()) return v.boolValue() ? "True" : "False";
    const bool integral = !v.isFloat() && (f.type == 0 || std::string_view("dnbcoxX").find(f.type) != std::string_view::npos);
    const double d = v.floatValue();
    const bool negative = integral ? v.intValue() < 0 : std::signbit(d);
    std::string signPart = negative ? "-" : (f.sign == '+' ? "+" : (f.sign == ' ' ? " " : ""));
    std::string body;
    if (integral) {
        const unsigned long long mag = negative ? 0ULL - static_cast<unsigned long long>(v.intValue())
                                                : static_cast<unsigned long long>(v.intValue());
        char buf[80];
        switch (f.type) {
        case 'x': std::snprintf(buf, sizeof buf, "%llx", mag); body = (f.alternate ? "0x" : "") + std::string(buf); break;
        case 'X': std::snprintf(buf, sizeof buf, "%llX", mag); body = (f.alternate ? "0X" : "") + std::string(buf); break;
        case 'o': std::snprintf(buf, sizeof buf, "%llo", mag); body = (f.alternate ? "0o" : "") + std::string(buf); break;
        case 'b': {
            std::string bits;
            for (unsigned long long m = mag; m; m >>= 1) bits.insert(bits.begin(), static_cast<char>('0' + (m & 1)));
            body = (f.alternate ? "0b" : "") + (bits.empty() ? std::string("0") : bits);
            break;
        }
        case 'c':
            if (negative || mag > 0x10FFFF) fail(ErrorKind::Value, "%c arg not in range(0x110000)");
            signPart.clear();
            appendUtf8(body, static_cast<char32_t>(mag));
            break;
        default: body = group(std::to_string(mag), f.grouping);
        }
        return applyAlign(body, signPart, f, '>');
    }
    const double mag = std::fabs(d);
    char type = f.type;
    // What reaches printf below must be a floating-point conversion ('{:s}' of a number would
    // hand it a double for a char*).
    if (type != 0 && std::string_view("eEfFgGn%").find(type) == std::string_view::npos)
        fail(ErrorKind::Value, std::string("Unknown format code '") + type + "' for object of type '" + typeName(v) + "'");
    if (type == 0 && f.precision < 0) {
        body = pyFloatRepr(mag);
    } else {
        const std::int64_t precision = f.precision < 0 ? 6 : f.precision;
        if (type == 0) type = 'g';
        if (type == 'n') type = 'g';
        const bool percent = type == '%';
        const std::string spec = concat("%", f.alternate ? "#" : "", ".", std::to_string(precision),
                                        std::string(1, percent ? 'f' : type));
        body = cFormat(spec, percent ? mag * 100 : mag);
        if (percent) body += '%';
    }
    if (f.grouping && std::isfinite(mag)) {
        std::size_t end = body.find_first_not_of("0123456789");
        if (end == std::string::npos) end = body.size();
        body = group(body.substr(0, end), f.grouping) + body.substr(end);
    }
    return applyAlign(body, signPart, f, '>');
}

}  // namespace

std::string pyStrFormat(Interpreter& interp, std::string_view fmt, CallArgs& args) {
    std::string out;
    std::size_t autoIndex = 0;
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') { out += '}'; ++i; continue; }
            fail(ErrorKind::Value, "Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') { out += '{'; ++i; continue; }
        const std::size_t close = fmt.find('}', i);
        if (close == std::string_view::npos) fail(ErrorKind::Value, "Single '{' encountered in format string");
        const std::string_view field = fmt.substr(i + 1, close - i - 1);
        i = close;
        std::size_t cut = field.find_first_of("!:");
        std::string_view name = field.substr(0, cut);
        char conversion = 0;
        std::string_view spec;
        if (cut != std::string_view::npos && field[cut] == '!') {
            if (cut + 1 >= field.size()) fail(ErrorKind::Value, "end of string while looking for conversion specifier");
            conversion = field[cut + 1];
            cut += 2;
            if (cut < field.size() && field[cut] != ':') fail(ErrorKind::Value, "expected ':' after conversion specifier");
        }
        if (cut != std::string_view::npos && cut < field.size() && field[cut] == ':') spec = field.substr(cut + 1);

        const std::size_t accessor = name.find_first_of(".[");
        const std::string_view head = name.substr(0, accessor);
        Value v;
        bool numeric = !head.empty();
        for (char ch : head) numeric = numeric && ch >= '0' && ch <= '9';
        if (head.empty() || numeric) {
            const std::size_t index = head.empty() ? autoIndex++ : std::stoul(std::string(head));
            if (index >= args.positional.size())
                fail(ErrorKind::Value, "IndexError: Replacement index " + std::to_string(index) + " out of range");
            v = args.positional[index];
        } else {
            const Value* kw = nullptr;
            for (const auto& [k, val] : args.keyword)
                if (k == head) kw = &val;
            if (!kw) fail(ErrorKind::Value, "KeyError: '" + std::string(head) + "'");
            v = *kw;
        }
        for (std::size_t p = accessor; p != std::string_view::npos && p < name.size();) {
            if (name[p] == '.') {
                const std::size_t end = name.find_first_of(".[", p + 1);
                v = interp.getAttribute(v, name.substr(p + 1, end == std::string_view::npos ? std::string_view::npos : end - p - 1));
                p = end;
            } else {
                const std::size_t end = name.find(']', p);
                if (end == std::string_view::npos) fail(ErrorKind::Value, "Missing ']' in format string");
                const std::string key(name.substr(p + 1, end - p - 1));
                bool digits = !key.empty();
                for (char ch : key) digits = digits && ch >= '0' && ch <= '9';
                v = interp.getItem(v, digits ? Value::integer(std::stoll(key)) : Value::string(key));
                p = end + 1;
            }
        }
        if (v.isUndefined() && !v.undefinedHint().empty()) failUndefined(v);
        if (conversion == 'r' || conversion == 'a') v = Value::string(repr(v));
        else if (conversion == 's') v = Value::string(toStr(v));
        else if (conversion) fail(ErrorKind::Value, std::string("Unknown conversion specifier ") + conversion);
        std::string piece = formatValue(v, spec);
        interp.chargeWork(piece.size());
        interp.checkSize(out.size() + piece.size());  // many wide fields: the result is one string too
        out += piece;
    }
    return out;
}

// ---- strftime ----

namespace {

constexpr const char* kDayNames[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
constexpr const char* kMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                       "July",    "August",   "September", "October", "November", "December"};

bool isLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long daysFromCivil(int y, int m, int d) {
    y -= m <= 2;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const long long yoe = y - era * 400;
    const long long doy = (153LL * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int weekday(const DateTime& t) {  // 0 = Sunday
    const long long days = daysFromCivil(t.year, t.month, t.day);
    return static_cast<int>(((days % 7) + 11) % 7);
}

int dayOfYear(const DateTime& t) {  // 0-based
    return static_cast<int>(daysFromCivil(t.year, t.month, t.day) - daysFromCivil(t.year, 1, 1));
}

void isoWeek(const DateTime& t, int& isoYear, int& week) {
    const int wdayMon = (weekday(t) + 6) % 7;  // 0 = Monday
    const int yday = dayOfYear(t);
    const int thursday = yday - wdayMon + 3;
    isoYear = t.year;
    if (thursday < 0) {
        --isoYear;
        const int prevDays = isLeap(isoYear) ? 366 : 365;
        week = (thursday + prevDays) / 7 + 1;
    } else if (thursday >= (isLeap(t.year) ? 366 : 365)) {
        ++isoYear;
        week = 1;
    } else {
        week = thursday / 7 + 1;
    }
}

std::string number(long long v, int width, char padFlag) {
    std::string digits = std::to_string(v < 0 ? -v : v);
    if (padFlag != '-') {
        const char fill = padFlag == '_' ? ' ' : '0';
        while (static_cast<int>(digits.size()) < width) digits.insert(digits.begin(), fill);
    }
    return (v < 0 ? "-" : "") + digits;
}

}  // namespace

std::string pyStrftime(std::string_view fmt, const DateTime& t) {
    std::string out;
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%' || i + 1 >= fmt.size()) {
            out += fmt[i];
            continue;
        }
        char padFlag = 0;
        std::size_t j = i + 1;
        if (fmt[j] == '-' || fmt[j] == '_' || fmt[j] == '0') {
            padFlag = fmt[j];
            if (++j >= fmt.size()) {
                out.append(fmt.substr(i));
                break;
            }
        }
        const int wday = weekday(t);
        const int hour12 = t.hour % 12 == 0 ? 12 : t.hour % 12;
        switch (fmt[j]) {
        case 'a': out += std::string(kDayNames[wday]).substr(0, 3); break;
        case 'A': out += kDayNames[wday]; break;
        case 'b':
        case 'h': out += std::string(kMonthNames[t.month - 1]).substr(0, 3); break;
        case 'B': out += kMonthNames[t.month - 1]; break;
        case 'C': out += number(t.year / 100, 2, padFlag); break;
        case 'c':
            out += pyStrftime("%a %b ", t) + number(t.day, 2, '_') + pyStrftime(" %H:%M:%S %Y", t);
            break;
        case 'd': out += number(t.day, 2, padFlag); break;
        case 'D': out += pyStrftime("%m/%d/%y", t); break;
        case 'e': out += number(t.day, 2, padFlag ? padFlag : '_'); break;
        case 'f': out += "000000"; break;
        case 'F': out += pyStrftime("%Y-%m-%d", t); break;
        case 'G': {
            int y = 0, w = 0;
            isoWeek(t, y, w);
            out += std::to_string(y);
            break;
        }
        case 'H': out += number(t.hour, 2, padFlag); break;
        case 'I': out += number(hour12, 2, padFlag); break;
        case 'j': out += number(dayOfYear(t) + 1, 3, padFlag); break;
        case 'k': out += number(t.hour, 2, padFlag ? padFlag : '_'); break;
        case 'l': out += number(hour12, 2, padFlag ? padFlag : '_'); break;
        case 'm': out += number(t.month, 2, padFlag); break;
        case 'M': out += number(t.minute, 2, padFlag); break;
        case 'n': out += '\n'; break;
        case 'p': out += t.hour < 12 ? "AM" : "PM"; break;
        case 'P': out += t.hour < 12 ? "am" : "pm"; break;
        case 'R': out += pyStrftime("%H:%M", t); break;
        case 'S': out += number(t.second, 2, padFlag); break;
        case 't': out += '\t'; break;
        case 'T': out += pyStrftime("%H:%M:%S", t); break;
        case 'u': out += std::to_string(wday == 0 ? 7 : wday); break;
        case 'U': out += number((dayOfYear(t) + 7 - wday) / 7, 2, padFlag); break;
        case 'V': {
            int y = 0, w = 0;
            isoWeek(t, y, w);
            out += number(w, 2, padFlag);
            break;
        }
        case 'w': out += std::to_string(wday); break;
        case 'W': out += number((dayOfYear(t) + 7 - (wday + 6) % 7) / 7, 2, padFlag); break;
        case 'x': out += pyStrftime("%m/%d/%y", t); break;
        case 'X': out += pyStrftime("%H:%M:%S", t); break;
        case 'y': out += number(t.year % 100, 2, padFlag); break;
        case 'Y': out += std::to_string(t.year); break;
        case 'z':
        case 'Z': break;  // naive local time: no zone information
        case '%': out += '%'; break;
        default: out.append(fmt.substr(i, j - i + 1)); break;
        }
        i = j;
    }
    return out;
}

}  // namespace verdict::tok::jinja
