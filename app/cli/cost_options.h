// The cost assumptions of `verdict tco` and `verdict report --hardware` (core/tco/cost_model.h
// CostAssumptions), declared once: the defaults shown in --help are the struct's, the ones the
// window's Cost screen starts from. Ranges are validateAssumptions' (out of range: bad input).
#pragma once

#include "cli/options.h"
#include "core/tco/cost_model.h"

namespace verdict::cli {

// --utilisation, --years, --electricity-usd-per-kwh, --pue, --load-factor, --ops-usd-per-month,
// --fixed-usd-per-year, --discount-rate, --rent.
const OptionTable<core::CostAssumptions>& costAssumptionOptions();

}  // namespace verdict::cli
