// Per-row FP8 e4m3 (and INT8) quantisation on the device, bit-exact with quantize_rows_fp8_ref
// (quantize_rows_int8_ref; quant_ref.h states the numerics): the activations of a DiT linear layer per token before linear_fp8
// (kernels/gemm/gemm_fp8.cuh), the weights per output channel once at load.
// One block per row, one pass: a row is read once into registers (16-byte loads), its |max| reduced
// in the block, then encoded with cvt.rn.satfinite.e4m3x2.f32 and written with 8-byte stores. That
// path needs K % 8 == 0, K ≤ 16384, x and ldx·sizeof(element) 16-byte aligned; other rows take a
// general kernel (two passes over the row, the second mostly from L2). Never includes lib/.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace vgen::kern {

// x: [M, K] fp32, or bf16 when x_bf16, row stride ldx (elements, ≥ K); x8: [M, K] dense; scale: [M].
cudaError_t quantize_rows_fp8(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, uint8_t* x8,
                              float* scale, cudaStream_t stream);

// The same per row in INT8 (quantize_rows_int8_ref: rint(x · 127/amax) clamped to ±127, scale amax/127),
// the same paths and requirements: the inputs of the INT8 GEMM (kernels/gemm/gemm_int8.cuh).
cudaError_t quantize_rows_int8(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, int8_t* x8,
                               float* scale, cudaStream_t stream);

// out[n] = s[n] · g[n] (or s[n] when g is null), bit-exact with fp8_scale_vector_ref: folds a
// per-channel gate into the weight scales of linear_fp8 (and an fp32 bias the same way). out may be s.
cudaError_t fp8_scale_vector(const float* s, const float* g, float* out, int64_t N, cudaStream_t stream);

// out[i] = e4m3(x[i]), no scaling, NaN inputs as the conversion leaves them: the device conversion
// on its own, for tests against fp8_e4m3_encode.
cudaError_t fp8_e4m3_encode_device(const float* x, int64_t n, uint8_t* out, cudaStream_t stream);

}  // namespace vgen::kern
