// The decision report's data: everything `verdict report` and the window's Export report… show,
// gathered from the results database (runs, suites, sweeps), the two model files' cards and the
// cost model. Nothing here measures or re-measures: every figure is read from the store or derived
// by the documented statistics (Wilson, McNemar, bootstrap) and cost formulas (docs/report.md).
//
//   ReportRequest req; req.runA = 3; req.runB = 4; req.weights = defaultCriterionWeights();
//   auto data = buildReportData(db, req);    // Error: missing run, unknown sweep/hardware, bad weights
//   std::cout << toJson(*data).dump(2);      // the shape tests and the GUI read
//
// Missing pieces are not errors: runs on different suites leave `accuracy.refused` set (with the
// reason) and no comparison; a model without a sweep has `perf.missing`; no hardware given leaves
// `cost.missing`. Each section then says what is missing.
#pragma once

#include "core/report/report_types.h"
#include "core/store/database.h"
#include "verdict/engine/result.h"

#include <nlohmann/json.hpp>

namespace verdict::core {

// Assembles the report. Errors (input the user must fix): a run id that does not exist, a sweep id
// that does not exist or measured neither model, an unknown hardware id, a weight that is negative
// or not finite, an unknown criterion name. Database failures are errors too.
Result<ReportData> buildReportData(Database& db, const ReportRequest& request);

// Only the performance half, for any two stored sweeps (the window's Performance screen): a.label /
// b.label are the sweeps' names (else the model file stems), perfA / perfB hold their points with
// the chart series chosen as the report chooses them. Errors: a sweep id that does not exist.
Result<ReportData> buildSweepComparison(Database& db, int64_t sweepA, int64_t sweepB);

// The stable JSON form (docs/report.md "JSON"): every section, nulls where a figure is missing.
nlohmann::json toJson(const ReportData& data);

}  // namespace verdict::core
