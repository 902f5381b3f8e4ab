// precision fp8: the block lists, the host quantisation and the CPU emulation of a Linear
// (ops/fp8.h); the device calls are in fp8_cuda.cpp (in a CPU-only build they throw kUsage, below).
#include "ops/fp8.h"

#include "core/error.h"
#include "core/no_cuda_error.h"
#include "kernels/attention/attention_cudnn_fp8_ref.h"
#include "kernels/attention/attention_fp8_ref.h"
#include "kernels/blockscale/mxfp8_ref.h"
#include "kernels/blockscale/nvfp4_ref.h"
#include "kernels/gemm/gemm_fp8_ref.h"
#include "kernels/quant/quant_ref.h"
#include "ops/linear.h"

namespace vgen {
bool fp8_bf16_block(const std::vector<int>& blocks, int64_t i, int64_t n) {
  for (int b : blocks)
    if ((b < 0 ? b + n : b) == i) return true;
  return false;
}

void fp8_check_bf16_blocks(const std::vector<int>& blocks, int64_t n, const char* key) {
  for (size_t j = 0; j < blocks.size(); ++j)
    VGEN_CHECK(blocks[j] >= -n && blocks[j] < n, ExitCode::kRecipe,
               "{}[{}] is {}, outside the model's {} transformer blocks (0..{}, or -{}..-1 from the end)", key, j,
               blocks[j], n, n - 1, n);
}

int64_t fp8_padded_k(int64_t K) { return (K + 15) / 16 * 16; }

namespace {

// x [rows, K] host f32 (dense) → what format f stores of it, read back (kernels/blockscale/):
// MXFP8 per 32-value block; NVFP4 with one tensor scale (a weight) or one per row (an activation).
Tensor block_fake_quant(const Tensor& x, GemmFormat f, bool per_row) {
  Tensor y = x.to(DType::kF32).clone();
  const int64_t K = y.dim(-1), rows = K ? y.numel() / K : 0;
  if (f == GemmFormat::kMxfp8) kern::mxfp8_fake_quant_ref(y.f32(), rows, K);
  else if (per_row) kern::nvfp4_fake_quant_rows_ref(y.f32(), rows, K);
  else kern::nvfp4_fake_quant_ref(y.f32(), rows, K);
  return y;
}

// The block-scaled emulation: x̃ = x read back from f, y = (x̃·w8ᵀ)·scale + b, row by row (a row's
// result does not depend on the rows beside it).
Tensor block_linear_host(const Tensor& x, const Fp8Weight& w, const Tensor& b) {
  const int64_t N = w.w8.dim(0);
  const Tensor xq = block_fake_quant(x, w.block, /*per_row=*/true);  // [..., K]
  Tensor y = linear(xq, w.w8, Tensor(), LinearRows::kRowByRow);      // [..., N]
  float* yp = y.f32();
  const float* s = w.scale.f32();
  const float* bp = b.defined() ? b.f32() : nullptr;
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = yp[i] * s[i % N] + (bp ? bp[i % N] : 0.0f);
  return y;
}

}  // namespace

Fp8Weight fp8_quantize_weight(const Tensor& w, GemmFormat f) {
  VGEN_ASSERT(w.defined() && w.ndim() == 2, "fp8_quantize_weight: w must be [N, K], got {}",
              w.defined() ? w.str() : std::string("undefined"));
  const int64_t N = w.dim(0), K = w.dim(1);
  Fp8Weight q;
  if (!w.is_cpu()) return cuda_quantize_weight(w, f);
  if (gemm_format_block_scaled(f)) {
    q.w8 = block_fake_quant(w, f, /*per_row=*/false);  // [N, K] f32
    q.scale = Tensor::from_vector(std::vector<float>(size_t(N), 1.0f), {N});
    q.block = f;
    return q;
  }
  q.w8 = Tensor::empty({N, K}, gemm_format_dtype(f));
  q.scale = Tensor::empty({N}, DType::kF32);
  const Tensor wf = w.to(DType::kF32);
  if (f == GemmFormat::kInt8)
    kern::quantize_rows_int8_ref(wf.f32(), /*x_bf16=*/false, N, K, K, q.w8.data<int8_t>(), q.scale.f32());
  else
    kern::quantize_rows_fp8_ref(wf.f32(), /*x_bf16=*/false, N, K, K, q.w8.data<uint8_t>(), q.scale.f32());
  return q;
}

Tensor fp8_linear_host(const Tensor& x, const Fp8Weight& w, const Tensor& b) {
  const int64_t K = x.dim(-1), N = w.w8.dim(0);
  VGEN_ASSERT(w.defined() && w.w8.is_cpu() &&
                  (w.w8.dtype() == DType::kU8 || w.w8.dtype() == DType::kI8 || w.w8.dtype() == DType::kF32) &&
                  w.w8.dim(1) == K && w.scale.numel() == N && w.scale.dtype() == DType::kF32,
              "fp8_linear_host: x {} vs quantised weight {} / scale {}", x.str(),
              w.w8.defined() ? w.w8.str() : "undefined", w.scale.defined() ? w.scale.str() : "undefined");
  VGEN_ASSERT(x.is_cpu() && x.dtype() == DType::kF32 && (!b.defined() || (b.dtype() == DType::kF32 && b.numel() == N)),
              "fp8_linear_host: host f32 x and bias only, got {} and {}", x.str(), b.defined() ? b.str() : "no bias");
  if (w.w8.dtype() == DType::kF32) return block_linear_host(x, w, b);
  Shape os = x.shape();
  os.back() = N;
  Tensor y = Tensor::empty(os, DType::kF32);
  const float* bp = b.defined() ? b.f32() : nullptr;
  if (w.format() == GemmFormat::kInt8)
    kern::linear_int8_prequant_ref(x.f32(), w.w8.data<int8_t>(), w.scale.f32(), bp, y.f32(), x.numel() / K, N, K);
  else
    kern::linear_fp8_prequant_ref(x.f32(), w.w8.data<uint8_t>(), w.scale.f32(), bp, y.f32(), x.numel() / K, N, K);
  return y;
}

void fp8_attention_host(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        int64_t num_valid_kv, float scale, bool qk_int8, AttentionBackend backend) {
  for (const Tensor* t : {&q, &k, &v, static_cast<const Tensor*>(&out)})
    VGEN_ASSERT(t->is_cpu() && t->dtype() == DType::kF32, "fp8_attention_host: host f32 q/k/v/out, got {}", t->str());
  const int64_t B = q.dim(0), Sq = q.dim(1), Skv = k.dim(1), H = q.dim(2), D = q.dim(3);
  float* lse_ptr = lse ? lse->f32() : nullptr;
  if (backend == AttentionBackend::kCudnn)
    kern::attention_cudnn_fp8_ref(q.f32(), k.f32(), v.f32(), out.f32(), lse_ptr, B, Sq, Skv, H, D, num_valid_kv,
                                  scale);
  else
    kern::attention_fp8_ref(q.f32(), k.f32(), v.f32(), out.f32(), lse_ptr, B, Sq, Skv, H, D, num_valid_kv, scale,
                            qk_int8 ? kern::Fp8Qk::kInt8 : kern::Fp8Qk::kE4m3);
}

#ifndef VGEN_WITH_CUDA

void cuda_quantize_rows_fp8(const Tensor&, Tensor&, Tensor&) { throw_no_cuda("quantize_rows_fp8"); }
Fp8Weight cuda_quantize_weight(const Tensor&, GemmFormat) { throw_no_cuda("quantize_weight"); }
Tensor cuda_fp8_scale_vector(const Tensor&, const Tensor&) { throw_no_cuda("fp8_scale_vector"); }
Fp8Activation cuda_quantize_activation(const Tensor&, GemmFormat) { throw_no_cuda("quantize_activation"); }
Tensor cuda_linear_fp8(const Tensor&, const Fp8Weight&, const Tensor&, DType, Activation) { throw_no_cuda("linear_fp8"); }
Tensor cuda_linear_fp8(const Fp8Activation&, const Fp8Weight&, const Tensor&, DType, Activation) {
  throw_no_cuda("linear_fp8");
}
void cuda_linear_fp8_add_(Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  throw_no_cuda("linear_fp8_add_");
}
void cuda_attention_fp8(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float, bool,
                        AttentionBackend) {
  throw_no_cuda("attention_fp8");
}
void cuda_attention_cudnn_fp8(const Tensor&, const Tensor&, const Tensor&, Tensor&, Tensor*, int64_t, float) {
  throw_no_cuda("attention_cudnn_fp8");
}
bool cuda_precision_available(Precision, const Fp8Config&, std::string* gpu, AttentionBackend) {
  return cuda_fp8_available(gpu);
}
bool cuda_fp8_available(std::string* gpu) {
  if (gpu) *gpu = "none (this vgen was built without the CUDA backend)";
  return false;
}
#endif

}  // namespace vgen
