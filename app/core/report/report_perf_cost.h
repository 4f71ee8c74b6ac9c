// The performance and cost sections of the report (internal to report_data.cpp; tested through
// buildReportData). Performance figures are read from stored sweep points as they are; the cost
// figures come from the cost model (core/tco) over the measured throughput.
#pragma once

#include "core/report/report_types.h"
#include "core/store/database.h"
#include "core/store/run_record.h"
#include "core/store/sweep_record.h"

#include <vector>

namespace verdict::core {

// One point as the report reads it from sweep_points.metrics (docs/schema.md).
ReportPerfPoint perfPointFromRecord(const SweepPointRecord& record);

// Picks the sweeps of each run's model (explicit ids, else the newest completed sweep of the same
// file) and loads their points. Errors: an explicit sweep id that does not exist or measured
// neither model; database failures.
Result<void> gatherPerformance(Database& db, const ReportRequest& request, const RunRecord& runA, const RunRecord& runB,
                               ReportPerf* perfA, ReportPerf* perfB, std::vector<SweepRecord>* sweepsUsed);

// Loads one stored sweep into `perf` (what the window's Performance screen compares: any two
// sweeps, with or without runs). Errors: a sweep id that does not exist; database failures.
Result<void> loadSweepPerformance(Database& db, int64_t sweepId, ReportPerf* perf, SweepRecord* record = nullptr);
// Chooses the chart series and the reference point of both models (the batch-1 point with the
// smallest prompt, then gen, measured by both; else each model's own smallest batch-1 point).
void selectPerfSeries(ReportPerf* a, ReportPerf* b);

// Cost of both models on the requested device. Errors: an unknown hardware id or a catalog that
// does not load (user input). A model whose throughput is missing, or a price the catalog lacks,
// leaves that model's `missing` set instead.
Result<ReportCost> gatherCost(const ReportTcoInputs& inputs, const RunRecord& runA, const RunRecord& runB,
                              const std::vector<RunItemRecord>& itemsA, const std::vector<RunItemRecord>& itemsB,
                              const ReportPerf& perfA, const ReportPerf& perfB, const ReportModel& modelA,
                              const ReportModel& modelB);

}  // namespace verdict::core
