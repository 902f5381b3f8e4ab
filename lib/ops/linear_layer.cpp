#include "ops/linear_layer.h"

#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/quant/quant_ref.h"
#include "ops/activation.h"
#include "ops/check.h"
#include "ops/dit_device_ops.h"
#include "ops/elementwise.h"

namespace vgen {
namespace {

// The weight of a call in the compute dtype: precision fp8 may have freed it on the device.
void check_weight(const LinearWeights& l) {
  VGEN_CHECK(l.w.defined(), ExitCode::kInternal,
             "a linear runs in the compute dtype but only its quantised weight is held (precision fp8 freed the "
             "weights: WanFp8Options::keep_weights false, yet this step runs in bf16)");
}

// The host's quantised weight: the copy of enable_fp8, or w quantised now (host DWDP's staged blocks).
Fp8Weight host_fp8_weight(const LinearWeights& l, GemmFormat f) {
  return l.w8.defined() ? Fp8Weight{l.w8, l.w_scale, f} : fp8_quantize_weight(l.w, f);
}

// x [R, ...] with row r times s[r] (f32 [R]) → new tensor; the host's twin of cuda_scale_rows.
Tensor host_scale_rows(const Tensor& x, const Tensor& s) {
  check_cpu_f32(x, "fold_gate", "weight");
  check_cpu_f32(s, "fold_gate", "gate");
  const int64_t rows = x.dim(0), width = rows ? x.numel() / rows : 0;
  VGEN_ASSERT(s.numel() == rows, "fold_gate: gate {} for weight {}", s.str(), x.str());
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::scale_rows_ref(x.f32(), s.f32(), y.f32(), rows, width);
  return y;
}

// s [N] · g [N] in f32 → new [N] f32; the host's twin of cuda_fp8_scale_vector.
Tensor host_scale_vector(const Tensor& s, const Tensor& g) {
  check_cpu_f32(s, "fold_gate", "scale");
  check_cpu_f32(g, "fold_gate", "gate");
  VGEN_ASSERT(s.numel() == g.numel(), "fold_gate: scale {} for gate {}", s.str(), g.str());
  Tensor y = Tensor::empty({s.numel()}, DType::kF32);
  kern::fp8_scale_vector_ref(s.f32(), g.f32(), y.f32(), s.numel());
  return y;
}

}  // namespace

Tensor linear(const LinearWeights& l, const Tensor& x, const LinearMode& m, Activation act, const Fp8Activation* xq) {
  const bool device = xq ? !xq->x8.is_cpu() : !x.is_cpu();
  if (device) {
    if (m.fp8 && xq) return cuda_linear_fp8(*xq, Fp8Weight{l.w8, l.w_scale}, l.b, m.dtype, act);
    if (m.fp8) return cuda_linear_fp8(x, Fp8Weight{l.w8, l.w_scale}, l.b, m.dtype, act);
    check_weight(l);
    return cuda_linear(x, l.w, l.b, x.dtype(), act);
  }
  VGEN_ASSERT(!xq, "linear: a quantised activation on the host");
  if (!m.fp8) check_weight(l);
  Tensor y = m.fp8 ? fp8_linear_host(x, host_fp8_weight(l, m.format), l.b) : linear(x, l.w, l.b, m.rows);
  if (act == Activation::kGeluTanh) gelu_tanh_(y);
  return y;
}

void linear_add_(Tensor& y, const LinearWeights& l, const Tensor& x, const LinearMode& m) {
  if (!y.is_cpu()) {
    if (m.fp8) return cuda_linear_fp8_add_(y, x, l.w8, l.w_scale, l.b);
    check_weight(l);
    return cuda_linear_add_(y, x, l.w, l.b);
  }
  add_inplace(y, linear(l, x, m));
}

LinearWeights fold_gate(const LinearWeights& l, const Tensor& gate, const LinearMode& m) {
  LinearWeights g;
  if (m.fp8) {
    const Fp8Weight q = l.w_scale.is_cpu() ? host_fp8_weight(l, m.format) : Fp8Weight{l.w8, l.w_scale};
    g.w8 = q.w8;
    if (!q.scale.is_cpu()) {
      g.w_scale = cuda_fp8_scale_vector(q.scale, gate);
      // Rounded back to the bias's dtype (bf16), as cuda_scale_rows rounds it: cuBLASLt's fused
      // bias + residual epilogue takes it (an f32 bias has no fused kernel with bf16 out).
      if (l.b.defined()) g.b = cast(cuda_fp8_scale_vector(cast(l.b, DType::kF32), gate), l.b.dtype());
    } else {
      g.w_scale = host_scale_vector(q.scale, gate);
      if (l.b.defined()) g.b = host_scale_vector(l.b, gate);
    }
    return g;
  }
  check_weight(l);
  g.w = l.w.is_cpu() ? host_scale_rows(l.w, gate) : cuda_scale_rows(l.w, gate);
  if (l.b.defined()) g.b = l.b.is_cpu() ? host_scale_rows(l.b, gate) : cuda_scale_rows(l.b, gate);
  return g;
}

std::optional<Fp8Activation> quantize_activation_shared(const Tensor& x, GemmFormat format) {
  if (x.is_cpu()) return std::nullopt;
  return cuda_quantize_activation(x, format);
}

}  // namespace vgen
