#include "core/services/sweep.h"

#include "core/perf/engine_sweep_target.h"
#include "core/store/model_repository.h"
#include "core/version.h"

namespace verdict::core {

ServiceResult<SweepOutcome> runModelSweep(Database& db, const std::string& modelPath, const SweepSettings& settings,
                                          const SweepEvents& events, const std::atomic<bool>* cancel) {
    if (modelPath.empty()) return ServiceError{ServiceFailure::BadInput, "no model file given"};
    if (auto r = validateSweepSpec(settings.spec, kMaxSweepBatch); !r)
        return ServiceError{ServiceFailure::BadInput, r.error().message};
    auto identity = ModelRepository(db).identifyFile({modelPath});
    if (!identity) return ServiceError{ServiceFailure::BadInput, identity.error().message};

    if (events.loading) events.loading();
    EngineSweepTargetOptions to;
    to.threads = settings.threads;
    to.maxBatch = kMaxSweepBatch;
    to.cancelLoad = cancel;
    to.device = settings.device;
    to.gpuLayers = settings.gpuLayers;
    auto target = EngineSweepTarget::open(modelPath, to);
    if (cancel && cancel->load()) return ServiceError{ServiceFailure::Cancelled, "cancelled while loading " + modelPath};
    if (!target) return ServiceError{ServiceFailure::ModelOpen, target.error().message};

    SweepOptions so;
    so.name = settings.name;
    so.engineVersion = toolVersion();
    so.modelSha256 = identity->sha256;
    so.modelBytes = identity->bytes;
    so.bandwidthGbPerS = settings.bandwidthGbPerS;
    so.progress = events.progress;
    so.cancel = cancel;
    auto outcome = runSweep(db, **target, settings.spec, so);
    if (!outcome) return ServiceError{ServiceFailure::Storage, outcome.error().message};
    return std::move(*outcome);
}

}  // namespace verdict::core
