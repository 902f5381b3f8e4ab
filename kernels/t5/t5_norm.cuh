// CUDA launcher of the T5 layer norm with the contract of t5_norm_ref.h: RMS over the row without
// mean subtraction or bias, the statistic always in fp32. f32: y = w ⊙ (x·rs). bf16 (transformers'
// T5LayerNorm on bf16 weights): y = bf16(w · bf16(x·rs)) — the normalized row is cast to the weight
// dtype before the weight multiply (wan_spec.md §2.3). Raw device pointers; queued on `stream`;
// returns the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// x, y [rows, dim], w [dim], all of `type` (f32 or bf16); y may alias x. rs = rsqrt(mean(x²) + eps).
cudaError_t t5_rms_norm(const void* x, const void* w, void* y, FloatType type, int64_t rows, int64_t dim, float eps,
                        cudaStream_t stream);

}  // namespace vgen::kern
