#include "core/tco/cost_model.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace verdict::core {
namespace {

std::string num(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

bool positiveFinite(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

const char* ownershipName(Ownership o) { return o == Ownership::Buy ? "buy" : "rent"; }

Result<void> validateAssumptions(const CostAssumptions& a) {
    if (!std::isfinite(a.utilisation) || a.utilisation <= 0 || a.utilisation > 1)
        return Error{"utilisation " + num(a.utilisation) + " is outside (0, 1]"};
    if (!positiveFinite(a.years)) return Error{"years " + num(a.years) + " must be a positive number"};
    if (!std::isfinite(a.electricityUsdPerKwh) || a.electricityUsdPerKwh < 0)
        return Error{"electricity price " + num(a.electricityUsdPerKwh) + " $/kWh must be >= 0"};
    if (!std::isfinite(a.pue) || a.pue < 1) return Error{"PUE " + num(a.pue) + " must be >= 1"};
    if (!std::isfinite(a.loadFactor) || a.loadFactor <= 0 || a.loadFactor > 1)
        return Error{"load factor " + num(a.loadFactor) + " is outside (0, 1]"};
    if (!std::isfinite(a.opsUsdPerMonth) || a.opsUsdPerMonth < 0)
        return Error{"ops overhead " + num(a.opsUsdPerMonth) + " $/month must be >= 0"};
    if (!std::isfinite(a.fixedUsdPerYear) || a.fixedUsdPerYear < 0)
        return Error{"fixed costs " + num(a.fixedUsdPerYear) + " $/year must be >= 0"};
    if (!std::isfinite(a.discountRate) || a.discountRate < 0 || a.discountRate > 10)
        return Error{"discount rate " + num(a.discountRate) + " must be in [0, 10] (0.08 = 8 % a year)"};
    return okResult();
}

DevicePrice devicePriceOf(const HardwareEntry& entry) {
    return {entry.purchaseUsd.value, entry.cloudUsdPerHour.value, entry.tdpW.value};
}

Result<DeviceCost> deviceCost(const DevicePrice& price, double tps, const CostAssumptions& a, const std::string& deviceName) {
    if (!positiveFinite(tps)) return Error{"throughput " + num(tps) + " tokens/s must be a positive number"};
    if (auto r = validateAssumptions(a); !r) return r.error();
    DeviceCost c;
    if (a.mode == Ownership::Rent) {
        if (!price.cloudUsdPerHour)
            return Error{deviceName + " has no cloud $/hour in the catalog; give --cloud-usd-per-hour or set it in the user hardware file"};
        c.rentUsdPerHour = *price.cloudUsdPerHour;
    } else {
        if (!price.purchaseUsd)
            return Error{deviceName + " has no purchase price in the catalog; give --purchase-usd or set it in the user hardware file"};
        if (!price.tdpW)
            return Error{deviceName + " has no TDP in the catalog (needed for the power cost); set tdp_w in the user hardware file"};
        c.amortisationUsdPerHour = *price.purchaseUsd / (a.years * kHoursPerYear);
        c.powerUsdPerHour = *price.tdpW / 1000.0 * a.loadFactor * a.pue * a.electricityUsdPerKwh;
        c.opsUsdPerHour = a.opsUsdPerMonth * 12.0 / kHoursPerYear;
    }
    c.hourlyUsd = c.amortisationUsdPerHour + c.powerUsdPerHour + c.opsUsdPerHour + c.rentUsdPerHour;
    c.cashOperatingUsdPerHour = c.hourlyUsd - c.amortisationUsdPerHour;
    c.usdPerMtok = c.hourlyUsd / (tps * 3600.0 * a.utilisation) * 1e6;
    return c;
}

Result<FleetCost> fleetCost(const DeviceCost& device, const DevicePrice& price, double tps, double tokensPerDay,
                            const CostAssumptions& a) {
    if (!positiveFinite(tps)) return Error{"throughput " + num(tps) + " tokens/s must be a positive number"};
    if (!positiveFinite(tokensPerDay)) return Error{"tokens per day " + num(tokensPerDay) + " must be a positive number"};
    if (auto r = validateAssumptions(a); !r) return r.error();
    FleetCost f;
    f.tokensPerDay = tokensPerDay;
    f.requiredTps = tokensPerDay / kSecondsPerDay;
    const double perDevice = tps * a.utilisation;
    // A ratio that is an integer up to rounding (e.g. 3.0000000000000004) must not add a device.
    const double ratio = f.requiredTps / perDevice;
    const double rounded = std::round(ratio);
    const double devices = std::fabs(ratio - rounded) < 1e-9 * std::max(1.0, rounded) ? rounded : std::ceil(ratio);
    if (devices > 1e15) return Error{"the volume needs more than 1e15 devices; check --tokens-per-day and the throughput"};
    f.devices = std::max<int64_t>(1, static_cast<int64_t>(devices));
    const double n = static_cast<double>(f.devices);
    f.capexUsd = a.mode == Ownership::Buy ? n * price.purchaseUsd.value_or(0) : 0.0;
    f.monthlyAmortisationUsd = n * device.amortisationUsdPerHour * kHoursPerMonth;
    f.monthlyPowerUsd = n * device.powerUsdPerHour * kHoursPerMonth;
    f.monthlyOpsUsd = n * device.opsUsdPerHour * kHoursPerMonth;
    f.monthlyRentUsd = n * device.rentUsdPerHour * kHoursPerMonth;
    f.monthlyFixedUsd = a.fixedUsdPerYear / 12.0;
    f.monthlyUsd = f.monthlyAmortisationUsd + f.monthlyPowerUsd + f.monthlyOpsUsd + f.monthlyRentUsd + f.monthlyFixedUsd;
    f.monthlyCashOperatingUsd = f.monthlyUsd - f.monthlyAmortisationUsd;
    f.tco3yUsd = n * device.hourlyUsd * kHoursPerYear * 3.0 + a.fixedUsdPerYear * 3.0;
    f.usdPerMtokAllIn = f.monthlyUsd / (tokensPerDay * kDaysPerMonth) * 1e6;
    return f;
}

double netPresentValue(double upfront, double monthlyCashFlow, int64_t months, double annualRate) {
    if (months <= 0) return -upfront;
    const double rm = std::pow(1.0 + annualRate, 1.0 / 12.0) - 1.0;
    // Annuity factor sum_{m=1..M} (1+rm)^-m; M x cash flow when there is no discounting.
    const double annuity = rm == 0.0 ? static_cast<double>(months)
                                     : (1.0 - std::pow(1.0 + rm, -static_cast<double>(months))) / rm;
    return -upfront + monthlyCashFlow * annuity;
}

Result<BaselineComparison> compareToBaseline(const FleetCost& fleet, double baselineUsdPerMtok, const CostAssumptions& a) {
    if (!positiveFinite(baselineUsdPerMtok))
        return Error{"baseline price " + num(baselineUsdPerMtok) + " $/1M tokens must be a positive number"};
    if (auto r = validateAssumptions(a); !r) return r.error();
    BaselineComparison b;
    b.baselineUsdPerMtok = baselineUsdPerMtok;
    b.baselineMonthlyUsd = fleet.tokensPerDay * kDaysPerMonth / 1e6 * baselineUsdPerMtok;
    b.monthlySavingsUsd = b.baselineMonthlyUsd - fleet.monthlyCashOperatingUsd;
    if (fleet.capexUsd <= 0)
        b.paybackMonths = b.monthlySavingsUsd > 0 ? std::optional<double>(0.0) : std::nullopt;
    else if (b.monthlySavingsUsd > 0)
        b.paybackMonths = fleet.capexUsd / b.monthlySavingsUsd;
    b.horizonMonths = static_cast<int64_t>(std::llround(12.0 * a.years));
    b.npvUsd = netPresentValue(fleet.capexUsd, b.monthlySavingsUsd, b.horizonMonths, a.discountRate);
    return b;
}

}  // namespace verdict::core
