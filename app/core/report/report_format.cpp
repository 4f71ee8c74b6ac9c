#include "core/report/report_format.h"

#include <cmath>
#include <cstdio>

namespace verdict::core {

const char* const kDash = "\u2014";

namespace {
std::string printf1(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}
std::string byMagnitude(double v, const char* unit) {
    const double a = std::fabs(v);
    std::string num = a < 10 ? printf1("%.2f", v) : a < 1000 ? printf1("%.1f", v) : printf1("%.0f", v);
    return num + " " + unit;
}
}  // namespace

std::string formatPercent(double fraction, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f %%", decimals, fraction * 100.0);
    return buf;
}

std::string formatMs(double ms) { return byMagnitude(ms, "ms"); }
std::string formatTokPerS(double tps) { return byMagnitude(tps, "tok/s"); }

std::string formatUsd(double v, std::string_view group, std::string_view decimal) {
    if (!std::isfinite(v)) return std::isnan(v) ? "$?" : v < 0 ? "-$∞" : "$∞";
    const double a = std::fabs(v);
    if (a == 0) return "$0";
    const int decimals = a < 1 ? 4 : a < 1000 ? 2 : 0;
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, a);
    std::string digits = buf, frac;
    if (auto dot = digits.find('.'); dot != std::string::npos) {
        frac = std::string(decimal) + digits.substr(dot + 1);
        digits.resize(dot);
    }
    std::string grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += group;
        grouped += digits[i];
    }
    // A value that rounds to zero carries no sign ("$0.0000", not "-$0.0000").
    const bool zero = digits.find_first_not_of('0') == std::string::npos && frac.find_first_of("123456789") == std::string::npos;
    return (v < 0 && !zero ? "-$" : "$") + grouped + frac;
}

std::string formatPValue(double p) {
    if (p < 0.001) return "< 0.001";
    return printf1("%.3f", p);
}

std::string formatPoints(double d) { return printf1("%+.1f points", d * 100.0); }

std::string orDash(const std::optional<std::string>& s) { return s ? *s : std::string(kDash); }

}  // namespace verdict::core
