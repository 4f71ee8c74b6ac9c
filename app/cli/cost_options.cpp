#include "cli/cost_options.h"

namespace verdict::cli {

const OptionTable<core::CostAssumptions>& costAssumptionOptions() {
    using S = core::CostAssumptions;
    constexpr double kBig = 1e15;  // the real bounds are validateAssumptions'
    static const OptionTable<S> table = {
        numberOption<S>("utilisation", "U", "share of hours serving at the measured rate, (0,1]",
                        [](auto& a) -> auto& { return a.utilisation; }, -kBig, kBig),
        numberOption<S>("years", "N", "amortisation period and NPV horizon", [](auto& a) -> auto& { return a.years; }, -kBig, kBig),
        numberOption<S>("electricity-usd-per-kwh", "X", "electricity price", [](auto& a) -> auto& { return a.electricityUsdPerKwh; },
                        -kBig, kBig),
        numberOption<S>("pue", "X", "power usage effectiveness, >= 1", [](auto& a) -> auto& { return a.pue; }, -kBig, kBig),
        numberOption<S>("load-factor", "X", "average draw as a share of TDP, (0,1]", [](auto& a) -> auto& { return a.loadFactor; },
                        -kBig, kBig),
        numberOption<S>("ops-usd-per-month", "X", "ops overhead per owned device per month",
                        [](auto& a) -> auto& { return a.opsUsdPerMonth; }, -kBig, kBig),
        numberOption<S>("fixed-usd-per-year", "X", "fixed yearly costs of the deployment: staff, audits",
                        [](auto& a) -> auto& { return a.fixedUsdPerYear; }, -kBig, kBig),
        numberOption<S>("discount-rate", "X", "yearly discount rate for NPV", [](auto& a) -> auto& { return a.discountRate; }, -kBig,
                        kBig),
        flagOption<S>("rent", "rent the device at the catalog's cloud $/hour (default: buy)",
                      [](S& a) { a.mode = core::Ownership::Rent; }),
    };
    return table;
}

}  // namespace verdict::cli
