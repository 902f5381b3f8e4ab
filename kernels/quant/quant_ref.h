// CPU reference of the per-row FP8 e4m3 quantisation in quant.cuh (same contract, host memory).
// Row m of X [M,K] (row stride ldx): a = max_k |X[m,k]| in fp32 (NaN elements ignored),
// X8[m,k] = e4m3(X[m,k] · fp8_quant_mul(a)) with fp8_e4m3_encode, scale[m] = fp8_dequant_mul(a).
// A NaN product is stored as 0x7F (the device's multiply returns the positive canonical NaN).
// Consequences of fp8_quant_mul / fp8_dequant_mul, not special cases: a zero row, or a row holding
// ±Inf (a not finite), gets scale 1 and its elements are encoded unscaled (±Inf saturates to ±448);
// a row with 0 < a < 448/FLT_MAX (≈1.3e-36) has an infinite multiplier, so its zeros become NaN.
// Activations use it per token, weights per output channel (W [N,K]: scale[n]).
#pragma once
#include <cstdint>

namespace vgen::kern {

// x: [M, K] fp32, or bf16 bits (uint16_t) when x_bf16; x8: [M, K] dense; scale: [M].
void quantize_rows_fp8_ref(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, uint8_t* x8,
                           float* scale);

// The same in INT8 (int8_ref.h): x8[m,k] = int8_round(X[m,k] · int8_quant_mul(a)), scale[m] =
// int8_dequant_mul(a); NaN elements become 0, a row with a not finite or below kFp8MinAmax gets scale 1.
void quantize_rows_int8_ref(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, int8_t* x8,
                            float* scale);

// out[n] = s[n] · g[n] (fp32 multiply), or s[n] when g is null: a per-channel gate folded into the
// weight scales (w_scale'[n] = w_scale[n]·g[n]; the bias too, bias'[n] = bias[n]·g[n]).
void fp8_scale_vector_ref(const float* s, const float* g, float* out, int64_t N);

}  // namespace vgen::kern
