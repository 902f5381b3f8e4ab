// CUDA reductions with the contracts of reduce_ref.h. Deterministic: a fixed grid, fixed per-thread
// ranges and fixed-order trees in double, so a result does not change from run to run. Raw device
// pointers; queued on `stream`; returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// Doubles of device workspace abs_diff_sums needs.
constexpr int64_t kAbsDiffWorkspace = 2 * 264;

// out[0] = Σ|a − b|, out[1] = Σ|b| (fp32, from double sums) over n elements of `type`;
// workspace: kAbsDiffWorkspace doubles of device memory.
cudaError_t abs_diff_sums(const void* a, const void* b, FloatType type, int64_t n, double* workspace, float* out,
                          cudaStream_t stream);

}  // namespace vgen::kern
