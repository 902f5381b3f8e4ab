#include "ops/activation.h"

#include "kernels/activation/activation_ref.h"
#include "ops/check.h"
#include "ops/dit_device_ops.h"

namespace vgen {

void gelu_tanh_(Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_gelu_tanh_(x);
  check_cpu_f32(x, "gelu_tanh", "x");
  kern::gelu_tanh_ref(x.f32(), x.f32(), x.numel());
}

void gelu_erf_(Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_gelu_erf_(x);
  check_cpu_f32(x, "gelu_erf", "x");
  kern::gelu_erf_ref(x.f32(), x.f32(), x.numel());
}

void silu_(Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_silu_(x);
  check_cpu_f32(x, "silu", "x");
  kern::silu_ref(x.f32(), x.f32(), x.numel());
}

void quick_gelu_(Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_quick_gelu_(x);
  check_cpu_f32(x, "quick_gelu", "x");
  kern::quick_gelu_ref(x.f32(), x.f32(), x.numel());
}

Tensor gelu_tanh(const Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_gelu_tanh(x);
  check_cpu_f32(x, "gelu_tanh", "x");
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::gelu_tanh_ref(x.f32(), y.f32(), x.numel());
  return y;
}

Tensor silu(const Tensor& x) {
  if (x.defined() && !x.is_cpu()) return cuda_silu(x);
  check_cpu_f32(x, "silu", "x");
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::silu_ref(x.f32(), y.f32(), x.numel());
  return y;
}

}  // namespace vgen
