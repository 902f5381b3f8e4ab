// CPU-only build: there is nothing to prefetch (ops/vae_conv_prefetch_cuda.cpp has the real one).
#include "ops/vae_conv_prefetch.h"

#include <algorithm>
#include <thread>

#include "core/no_cuda_error.h"

namespace vgen {

int vae_prefetch_workers() {
  return std::clamp(int(std::thread::hardware_concurrency() / 2), 2, 8);
}

#ifndef VGEN_WITH_CUDA
struct VaeConvPlanPrefetch::Impl {};
VaeConvPlanPrefetch::VaeConvPlanPrefetch(int) { throw_no_cuda("VaeConvPlanPrefetch"); }
VaeConvPlanPrefetch::~VaeConvPlanPrefetch() = default;
int VaeConvPlanPrefetch::submitted() const { return 0; }
#endif

}  // namespace vgen
