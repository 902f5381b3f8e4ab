#include "kernels/gemm/gemm_int8_ref.h"

#include <cmath>

#include "kernels/common/bf16.h"

namespace vgen::kern {

namespace {

// One rounded f32 operation each. Out of line so that no compiler fuses a product and a sum into
// an FMA (GCC contracts by default where the target has FMA): the kernel's __fmul_rn / __fadd_rn
// round every step.
[[gnu::noinline]] float mul_rn(float a, float b) { return a * b; }
[[gnu::noinline]] float add_rn(float a, float b) { return a + b; }

float gelu_tanh(float v) {
  const float v3 = mul_rn(mul_rn(v, v), v);
  const float t = std::tanh(mul_rn(0.7978845608028654f, add_rn(v, mul_rn(0.044715f, v3))));
  return mul_rn(mul_rn(0.5f, v), add_rn(1.0f, t));
}

}  // namespace

float linear_int8_value_ref(int32_t acc, float x_scale, float w_scale, bool has_bias, float bias, bool gelu,
                            bool has_residual, float residual) {
  float v = mul_rn(mul_rn(float(acc), x_scale), w_scale);  // int → f32 rounds to nearest, as __int2float_rn
  if (has_bias) v = add_rn(v, bias);
  if (gelu) v = gelu_tanh(v);
  if (has_residual) v = add_rn(v, residual);
  return v;
}

void linear_int8_ref(const int8_t* x8, const float* x_scale, const int8_t* w8, const float* w_scale,
                     const uint16_t* bias, const uint16_t* residual, uint16_t* y, int64_t M, int64_t N, int64_t K,
                     bool gelu) {
  for (int64_t m = 0; m < M; ++m) {
    const int8_t* x = x8 + m * K;
    for (int64_t n = 0; n < N; ++n) {
      const int8_t* w = w8 + n * K;
      int32_t acc = 0;  // |acc| ≤ K·2^14 < 2^31
      for (int64_t k = 0; k < K; ++k) acc += int32_t(x[k]) * int32_t(w[k]);
      const size_t i = size_t(m * N + n);
      const float v = linear_int8_value_ref(acc, x_scale[m], w_scale[n], bias != nullptr,
                                            bias ? bf16_to_f32(bias[n]) : 0.0f, gelu, residual != nullptr,
                                            residual ? bf16_to_f32(residual[i]) : 0.0f);
      y[i] = f32_to_bf16(v);
    }
  }
}

}  // namespace vgen::kern
