#include "core/version.h"

#include "verdict_version.h"  // generated (app/CMakeLists.txt)

namespace verdict::core {

const char* versionNumber() { return VERDICT_GENERATED_VERSION; }
std::string toolVersion() { return std::string("verdict ") + VERDICT_GENERATED_VERSION; }
const char* buildCommit() { return VERDICT_GENERATED_BUILD_COMMIT; }

}  // namespace verdict::core
