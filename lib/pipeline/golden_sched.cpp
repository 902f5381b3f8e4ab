#include "pipeline/golden.h"

namespace vgen {

void golden_scheduler(GoldenCase& c) {
  VGEN_THROW(ExitCode::kInternal, "case {}: module not implemented yet", c.name);
}

}  // namespace vgen
