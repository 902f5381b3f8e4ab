#include "ops/rope.h"

#include "kernels/rope/rope_ref.h"
#include "ops/check.h"
#include "ops/dit_device_ops.h"
#include "ops/norm.h"

namespace vgen {

void rope_(Tensor& x, const Tensor& cos, const Tensor& sin) {
  if (x.defined() && !x.is_cpu()) return cuda_rope_(x, cos, sin);
  check_cpu_f32(x, "rope", "x");
  check_cpu_f32(cos, "rope", "cos");
  check_cpu_f32(sin, "rope", "sin");
  VGEN_ASSERT(x.ndim() == 4 && x.dim(3) % 2 == 0, "rope: x must be [B, S, H, Dh] with even Dh, got {}", x.str());
  const Shape table{x.dim(1), x.dim(3)};
  VGEN_ASSERT(cos.shape() == table && sin.shape() == table, "rope: tables {} / {} for x {}", cos.str(), sin.str(),
              x.str());
  kern::rope_ref(x.f32(), cos.f32(), sin.f32(), x.f32(), x.dim(0), x.dim(1), x.dim(2), x.dim(3));
}

Tensor rms_norm_rope(const Tensor& x, const Tensor& weight, const Tensor& cos, const Tensor& sin, float eps) {
  if (x.defined() && !x.is_cpu()) return cuda_rms_norm_rope(x, weight, cos, sin, eps);
  VGEN_ASSERT(x.ndim() == 4, "rms_norm_rope: x must be [B, S, H, Dh], got {}", x.str());
  Tensor y = rms_norm(x.reshape({x.dim(0), x.dim(1), x.dim(2) * x.dim(3)}), weight, eps).reshape(x.shape());
  rope_(y, cos, sin);
  return y;
}

}  // namespace vgen
