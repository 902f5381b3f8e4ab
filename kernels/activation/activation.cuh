// CUDA launchers of the pointwise activations (contracts of activation_ref.h and silu_ref):
// x of x_type, y of y_type (f32 or bf16), computed in fp32 with accurate tanhf/erff/expf, one
// rounding into y. y may alias x (same type). Raw device pointers; queued on `stream`; returns
// the launch status. Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/convert.cuh"

namespace vgen::kern {

// GELU, tanh approximation: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
cudaError_t gelu_tanh(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream);

// GELU, exact: 0.5·x·(1 + erf(x/√2)).
cudaError_t gelu_erf(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream);

// QuickGELU: x / (1 + exp(−1.702·x)).
cudaError_t quick_gelu(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream);

// SiLU: x / (1 + exp(−x)).
cudaError_t silu(const void* x, FloatType x_type, void* y, FloatType y_type, int64_t n, cudaStream_t stream);

}  // namespace vgen::kern
