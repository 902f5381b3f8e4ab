// The device convs' side of ops/vae_conv_prefetch.h (CUDA sources only).
#pragma once
#include "kernels/conv3d/conv3d.cuh"

namespace vgen {

// True when a VaeConvPlanPrefetch lives on this thread: `a`'s plan build (on `backend`) was handed
// to its workers (or was already) and the conv must not run.
bool vae_conv_prefetched(const kern::Conv3dArgs& a, kern::ConvBackend backend);

}  // namespace vgen
