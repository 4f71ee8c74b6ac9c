// How the report writes numbers, shared by the decision table (core) and every renderer (ui/report)
// so the PDF, HTML, Markdown and the window print a figure the same way (docs/report.md "Numbers").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace verdict::core {

// 0.625 -> "62.5 %" (decimals after the point; the fraction is multiplied by 100).
std::string formatPercent(double fraction, int decimals = 1);
// Milliseconds: < 10 -> "%.2f ms", < 1000 -> "%.1f ms", else "%.0f ms".
std::string formatMs(double ms);
// Tokens per second: < 10 -> "%.2f tok/s", < 1000 -> "%.1f tok/s", else "%.0f tok/s".
std::string formatTokPerS(double tps);
// Money, the one formatter of the CLI, the window and the report: < $1 -> "$0.0123" (4 decimals),
// < $1,000 -> "$12.34", else "$12,345" (no cents); thousands grouped, the sign before the symbol
// ("-$1,252,146"); rounding is printf's (to nearest). `group` and `decimal` are the separators:
// the window passes its locale's (QLocale), the CLI and the report keep "," and ".".
std::string formatUsd(double usd, std::string_view group = ",", std::string_view decimal = ".");
// p-values: 0.0312 -> "0.031"; below 0.001 -> "< 0.001".
std::string formatPValue(double p);
// "+3.1 points" style difference of two fractions (A - B).
std::string formatPoints(double fractionDifference);
// "—" when absent.
std::string orDash(const std::optional<std::string>& s);
extern const char* const kDash;  // "—"

}  // namespace verdict::core
