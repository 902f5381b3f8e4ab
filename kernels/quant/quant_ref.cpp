#include "kernels/quant/quant_ref.h"

#include <cmath>

#include "kernels/common/bf16.h"
#include "kernels/quant/fp8_e4m3_ref.h"
#include "kernels/quant/int8_ref.h"

namespace vgen::kern {

namespace {

float load(const void* x, bool x_bf16, int64_t idx) {
  return x_bf16 ? bf16_to_f32(static_cast<const uint16_t*>(x)[idx]) : static_cast<const float*>(x)[idx];
}

}  // namespace

namespace {
// One pass per row: a = max |x| (NaN ignored, as fmaxf on the device), then encode(x·mul(a)) and
// scale[m] = dequant(a).
template <typename Q, typename Mul, typename Enc, typename Dequant>
void quantize_rows(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, Q* x8, float* scale, Mul mul_of,
                   Enc encode, Dequant dequant_of) {
#pragma omp parallel for schedule(static) if (M * K > (int64_t(1) << 16))
  for (int64_t m = 0; m < M; ++m) {
    float a = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float v = std::fabs(load(x, x_bf16, m * ldx + k));
      if (v > a) a = v;  // false for NaN
    }
    const float mul = mul_of(a);
    for (int64_t k = 0; k < K; ++k) x8[m * K + k] = encode(load(x, x_bf16, m * ldx + k) * mul);
    scale[m] = dequant_of(a);
  }
}
}  // namespace

void quantize_rows_fp8_ref(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, uint8_t* x8,
                           float* scale) {
  quantize_rows(
      x, x_bf16, M, K, ldx, x8, scale, fp8_quant_mul,
      [](float q) { return std::isnan(q) ? uint8_t(0x7F) : fp8_e4m3_encode(q); }, fp8_dequant_mul);
}

void quantize_rows_int8_ref(const void* x, bool x_bf16, int64_t M, int64_t K, int64_t ldx, int8_t* x8,
                            float* scale) {
  quantize_rows(
      x, x_bf16, M, K, ldx, x8, scale, int8_quant_mul, [](float q) { return int8_t(int8_round(q)); },
      int8_dequant_mul);
}

void fp8_scale_vector_ref(const float* s, const float* g, float* out, int64_t N) {
  for (int64_t n = 0; n < N; ++n) out[n] = g ? s[n] * g[n] : s[n];
}

}  // namespace vgen::kern
