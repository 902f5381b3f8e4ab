#include "ops/elementwise.h"

#include "kernels/elementwise/elementwise_ref.h"
#include "kernels/reduce/reduce_ref.h"
#include "ops/check.h"
#include "ops/dit_device_ops.h"
#include "ops/norm.h"

namespace vgen {

void add_inplace(Tensor& x, const Tensor& y) {
  if (x.defined() && !x.is_cpu()) return cuda_add_inplace(x, y);
  check_cpu_f32(x, "add_inplace", "x");
  check_cpu_f32(y, "add_inplace", "y");
  VGEN_ASSERT(x.numel() == y.numel(), "add_inplace: {} vs {}", x.str(), y.str());
  kern::add_ref(x.f32(), y.f32(), x.f32(), x.numel());
}

Tensor sub(const Tensor& a, const Tensor& b) {
  if (a.defined() && !a.is_cpu()) return cuda_sub(a, b);
  check_cpu_f32(a, "sub", "a");
  check_cpu_f32(b, "sub", "b");
  VGEN_ASSERT(a.numel() == b.numel(), "sub: {} vs {}", a.str(), b.str());
  Tensor out = Tensor::empty(a.shape(), DType::kF32);
  kern::sub_ref(a.f32(), b.f32(), out.f32(), a.numel());
  return out;
}

Tensor abs_diff_sums(const Tensor& a, const Tensor& b) {
  if (a.defined() && !a.is_cpu()) return cuda_abs_diff_sums(a, b);
  check_cpu_f32(a, "abs_diff_sums", "a");
  check_cpu_f32(b, "abs_diff_sums", "b");
  VGEN_ASSERT(a.numel() == b.numel(), "abs_diff_sums: {} vs {}", a.str(), b.str());
  double d = 0, r = 0;
  kern::abs_diff_sums_ref(a.f32(), b.f32(), a.numel(), &d, &r);
  Tensor out = Tensor::empty({2}, DType::kF32);
  out.f32()[0] = float(d), out.f32()[1] = float(r);
  return out;
}

Tensor add_row(const Tensor& x, const Tensor& row) {
  if (x.defined() && !x.is_cpu()) return cuda_add_row(x, row);
  check_cpu_f32(x, "add_row", "x");
  check_cpu_f32(row, "add_row", "row");
  const int64_t D = row.numel();
  VGEN_ASSERT(D > 0 && x.dim(-1) == D, "add_row: x {} and row {}", x.str(), row.str());
  Tensor y = Tensor::empty(x.shape(), DType::kF32);
  kern::add_row_ref(x.f32(), row.f32(), y.f32(), x.numel() / D, D);
  return y;
}

void gated_residual_(Tensor& x, const Tensor& y, const Tensor& mod, int gate_idx) {
  if (x.defined() && !x.is_cpu()) return cuda_gated_residual_(x, y, mod, gate_idx);
  check_cpu_f32(x, "gated_residual_", "x");
  check_cpu_f32(y, "gated_residual_", "y");
  check_cpu_f32(mod, "gated_residual_", "mod");
  VGEN_ASSERT(x.shape() == y.shape(), "gated_residual_: x {} vs y {}", x.str(), y.str());
  ModAddress g = mod_address(x, mod, gate_idx, "gated_residual_");
  kern::gated_residual_ref(x.f32(), y.f32(), mod.f32() + g.offset, g.stride, g.rows_per_mod, x.f32(),
                           x.dim(0) * x.dim(1), x.dim(2));
}

Tensor cfg_combine(const Tensor& cond, const Tensor& uncond, float scale) {
  if (cond.defined() && !cond.is_cpu()) return cuda_cfg_combine(cond, uncond, scale);
  check_cpu_f32(cond, "cfg_combine", "cond");
  check_cpu_f32(uncond, "cfg_combine", "uncond");
  VGEN_ASSERT(cond.shape() == uncond.shape(), "cfg_combine: cond {} vs uncond {}", cond.str(), uncond.str());
  Tensor out = Tensor::empty(cond.shape(), DType::kF32);
  kern::cfg_combine_ref(cond.f32(), uncond.f32(), out.f32(), cond.numel(), scale);
  return out;
}

}  // namespace vgen
