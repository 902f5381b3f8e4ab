#include "core/no_cuda_error.h"

#include "core/error.h"

namespace vgen {

void throw_no_cuda(const char* what) {
  VGEN_THROW(ExitCode::kUsage, "{}: this vgen was built without the CUDA backend (VGEN_CUDA=OFF); use device: cpu",
             what);
}

}  // namespace vgen
