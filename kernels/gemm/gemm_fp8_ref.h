// CPU reference of the FP8 e4m3 linear layer (gemm_fp8.cuh; also the CPU emulation of
// precision fp8): both operands quantised per row (quantize_rows_fp8_ref: activations per token,
// weights per output channel), then
//   y[m,n] = (Σ_k x8[m,k]·w8[n,k]) · x_scale[m] · w_scale[n] + bias[n]
// The sum is exact (double accumulation of e4m3 products: every partial sum is a multiple of 2^-18
// below 2^35 for K < 170 000), scaled and biased in double, rounded once to fp32. No activation.
// The INT8 forms (precision fp8 with fp8_config.gemm_format int8; quantize_rows_int8_ref) are the
// same formula over INT8 bytes: integer sums, exact in double for K < 2^37 / 127².
#pragma once
#include <cstdint>

namespace vgen::kern {

// x [M,K], w [N,K] fp32 (PyTorch Linear layout); bias [N] or null; y [M,N].
void linear_fp8_ref(const float* x, const float* w, const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// As linear_fp8_ref with the weights already quantised (w8 [N,K], w_scale [N]: quantised once at load).
void linear_fp8_prequant_ref(const float* x, const uint8_t* w8, const float* w_scale, const float* bias, float* y,
                             int64_t M, int64_t N, int64_t K);

// Both operands quantised (x8 [M,K], x_scale [M]): the formula itself.
void linear_fp8_quantized_ref(const uint8_t* x8, const float* x_scale, const uint8_t* w8, const float* w_scale,
                              const float* bias, float* y, int64_t M, int64_t N, int64_t K);

// INT8: x quantised per token (quantize_rows_int8_ref), w8 per output channel.
void linear_int8_prequant_ref(const float* x, const int8_t* w8, const float* w_scale, const float* bias, float* y,
                              int64_t M, int64_t N, int64_t K);
void linear_int8_quantized_ref(const int8_t* x8, const float* x_scale, const int8_t* w8, const float* w_scale,
                               const float* bias, float* y, int64_t M, int64_t N, int64_t K);

}  // namespace vgen::kern
