// CPU reference of the INT8 W8A8 linear layer (gemm_int8.cuh), the same contract on host memory:
//   y[m,n] = bf16( act( (float(Σ_k x8[m,k]·w8[n,k]) · x_scale[m]) · w_scale[n] + bias[n] ) + residual[m,n] )
// int32 sums (exact), then the device's f32 steps one IEEE operation at a time, in its order and
// without FMA contraction, so that the kernel's output matches it bit for bit (GELU: up to the
// ulp by which host and device tanhf may differ). Plain loops: no BLAS, no dependence on the host.
#pragma once
#include <cstdint>

namespace vgen::kern {

// The f32 value of one output before the bf16 rounding: acc the int32 sum; bias and residual as f32
// (their bf16 values), each added only when its has_ flag is set; gelu applies GELU-tanh.
float linear_int8_value_ref(int32_t acc, float x_scale, float w_scale, bool has_bias, float bias, bool gelu,
                            bool has_residual, float residual);

// x8 [M,K], w8 [N,K] (PyTorch Linear layout), x_scale [M], w_scale [N]; bias [N] bf16 bits or null;
// residual [M,N] bf16 bits or null, may be y (in place); y [M,N] bf16 bits. Not gelu with a residual
// (the kernel refuses it; here it is simply applied in the contract's order). K < 2^17.
void linear_int8_ref(const int8_t* x8, const float* x_scale, const int8_t* w8, const float* w_scale,
                     const uint16_t* bias, const uint16_t* residual, uint16_t* y, int64_t M, int64_t N, int64_t K,
                     bool gelu);

}  // namespace vgen::kern
