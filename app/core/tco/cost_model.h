// The cost model: what a token costs on a device, from measured throughput only. Every formula
// is written out in docs/tco.md with a worked example (checked by tests/core/test_tco.cpp).
//
//   hourly (owned)  = purchase / (years x 8760)                       amortisation, per wall-clock hour
//                   + TDP/1000 x load_factor x PUE x $/kWh            power
//                   + ops $/month x 12 / 8760                         ops overhead
//   hourly (rented) = cloud $/hour
//   $/1M tokens     = hourly / (tokens/s x 3600 x utilisation) x 1e6
//   devices         = ceil((tokens/day / 86400) / (tokens/s x utilisation))
//   monthly         = devices x hourly x 730 + fixed $/year / 12       (730 = 8760 / 12 hours)
//   3-year TCO      = devices x hourly x 8760 x 3 + fixed $/year x 3
//   payback months  = capex / (baseline monthly - cash-operating monthly)
//   NPV             = -capex + sum_{m=1..12 x years} (baseline - cash-operating monthly) / (1 + r_m)^m,
//                     r_m = (1 + r)^(1/12) - 1
// Utilisation is the share of wall-clock hours the device serves at the measured rate; it is
// applied once, in the token denominator, never to the hourly cost (a bought device costs the
// same whether it is busy or idle).
#pragma once

#include "core/tco/hardware_catalog.h"
#include "verdict/engine/result.h"

#include <optional>
#include <string>

namespace verdict::core {

constexpr double kHoursPerYear = 8760.0;
constexpr double kHoursPerMonth = kHoursPerYear / 12.0;  // 730
constexpr double kDaysPerMonth = 365.0 / 12.0;           // 30.4167
constexpr double kSecondsPerDay = 86400.0;

enum class Ownership { Buy, Rent };
const char* ownershipName(Ownership o);  // "buy" | "rent"

// The user's assumptions. Defaults are documented (and justified) in docs/tco.md.
struct CostAssumptions {
    Ownership mode = Ownership::Buy;
    double utilisation = 0.5;          // (0, 1]: share of hours serving at the measured rate
    double years = 3.0;                // > 0: amortisation period and NPV horizon
    double electricityUsdPerKwh = 0.15;// >= 0
    double pue = 1.5;                  // >= 1: facility power / IT power
    double loadFactor = 0.7;           // (0, 1]: average draw as a share of TDP over all hours
    double opsUsdPerMonth = 0.0;       // >= 0, per device (hosting, maintenance); owned devices only
    double fixedUsdPerYear = 0.0;      // >= 0, for the whole deployment (staff, audits)
    double discountRate = 0.08;        // >= 0, yearly, for NPV
};
// Checks every assumption's range; the message names the option (e.g. "utilisation 1.5 is
// outside (0, 1]").
Result<void> validateAssumptions(const CostAssumptions& a);

// The price of one device: from the catalog, or overridden on the command line.
struct DevicePrice {
    std::optional<double> purchaseUsd;
    std::optional<double> cloudUsdPerHour;
    std::optional<double> tdpW;
};
DevicePrice devicePriceOf(const HardwareEntry& entry);

// One device's hourly cost, split, and its cost per million output tokens.
struct DeviceCost {
    double amortisationUsdPerHour = 0;
    double powerUsdPerHour = 0;
    double opsUsdPerHour = 0;
    double rentUsdPerHour = 0;
    double hourlyUsd = 0;              // the sum
    double cashOperatingUsdPerHour = 0;// hourly minus amortisation (what is paid month by month)
    double usdPerMtok = 0;             // hourly / (tps x 3600 x utilisation) x 1e6
};
// Errors: tps not a positive finite number; a missing price (purchase for buy, cloud $/hour for
// rent) or TDP (buy), naming `deviceName`; out-of-range assumptions.
Result<DeviceCost> deviceCost(const DevicePrice& price, double tokensPerSecond, const CostAssumptions& a,
                              const std::string& deviceName);

// A deployment sized for a daily token volume.
struct FleetCost {
    double tokensPerDay = 0;
    double requiredTps = 0;            // tokens/day / 86400
    int64_t devices = 0;               // ceil(required / (tps x utilisation))
    double capexUsd = 0;               // devices x purchase (0 when renting)
    double monthlyUsd = 0;             // devices x hourly x 730 + fixed / 12
    double monthlyCashOperatingUsd = 0;// monthly without amortisation (the payback/NPV outflow)
    double monthlyAmortisationUsd = 0, monthlyPowerUsd = 0, monthlyOpsUsd = 0, monthlyRentUsd = 0, monthlyFixedUsd = 0;
    double tco3yUsd = 0;               // devices x hourly x 8760 x 3 + fixed x 3
    double usdPerMtokAllIn = 0;        // monthly / (tokens/day x 365/12) x 1e6
};
// Errors: tokens/day not positive, or more devices than fit in an int64.
Result<FleetCost> fleetCost(const DeviceCost& device, const DevicePrice& price, double tokensPerSecond,
                            double tokensPerDay, const CostAssumptions& a);

// The deployment against a hosted API that charges `baselineUsdPerMtok` per million tokens.
struct BaselineComparison {
    double baselineUsdPerMtok = 0;
    double baselineMonthlyUsd = 0;     // tokens/day x 365/12 / 1e6 x price
    double monthlySavingsUsd = 0;      // baseline - monthly cash operating
    std::optional<double> paybackMonths;  // capex / savings; 0 when nothing is bought; nullopt: never
    double npvUsd = 0;
    int64_t horizonMonths = 0;         // round(12 x years)
};
Result<BaselineComparison> compareToBaseline(const FleetCost& fleet, double baselineUsdPerMtok, const CostAssumptions& a);

// Net present value of -upfront now and `monthlyCashFlow` at the end of each of `months`
// months, discounted at the monthly equivalent of `annualRate`.
double netPresentValue(double upfront, double monthlyCashFlow, int64_t months, double annualRate);

}  // namespace verdict::core
