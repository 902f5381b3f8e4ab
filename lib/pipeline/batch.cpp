#include "pipeline/batch.h"

namespace vgen {

int run_batch(const Recipe& recipe, Mesh& mesh, const RunOptions& opts) {
  VGEN_THROW(ExitCode::kInternal, "the T2V pipeline is not implemented yet");
}

}  // namespace vgen
