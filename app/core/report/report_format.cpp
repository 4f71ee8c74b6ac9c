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

std::string formatUsd(double v) {
    const double a = std::fabs(v);
    std::string sign = v < 0 ? "-" : "";
    if (a == 0) return "$0";
    if (a < 1) return sign + "$" + printf1("%.4f", a);
    if (a < 1000) return sign + "$" + printf1("%.2f", a);
    std::string digits = printf1("%.0f", a), grouped;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
        grouped += digits[i];
    }
    return sign + "$" + grouped;
}

std::string formatPValue(double p) {
    if (p < 0.001) return "< 0.001";
    return printf1("%.3f", p);
}

std::string formatPoints(double d) { return printf1("%+.1f points", d * 100.0); }

std::string orDash(const std::optional<std::string>& s) { return s ? *s : std::string(kDash); }

}  // namespace verdict::core
