#include "ops/vae_subpixel_ops.h"

#include <cstring>

#include "core/no_cuda_error.h"
#include "ops/check.h"
#include "kernels/vae_subpixel/subpixel_ref.h"

namespace vgen {

namespace {
void check_host(const Tensor& t, const char* op, const char* what) {
  check_cpu_f32(t, op, what);
  VGEN_ASSERT(t.ndim() == 4, "{}: {} {} must be 4-d", op, what, t.str());
}
}  // namespace

Tensor vae_subpixel_weight(const Tensor& w3) {
  if (!w3.is_cpu()) return cuda_vae_subpixel_weight(w3);
  check_host(w3, "vae_subpixel_weight", "weight");
  VGEN_ASSERT(w3.dim(2) == 3 && w3.dim(3) == 3, "vae_subpixel_weight: weight {} must be [cout, cin, 3, 3]", w3.str());
  const int64_t cout = w3.dim(0), cin = w3.dim(1);
  Tensor w4 = Tensor::empty({4 * cout, cin, 2, 2}, DType::kF32);  // [4·cout, cin, 2, 2]
  kern::subpixel_weight_ref(w3.f32(), w4.f32(), cout, cin);
  return w4;
}

Tensor vae_subpixel_shuffle(const Tensor& r, int64_t C) {
  if (!r.is_cpu()) return cuda_vae_subpixel_shuffle(r, C);
  check_host(r, "vae_subpixel_shuffle", "input");
  const int64_t t = r.dim(1), H = r.dim(2) - 1, W = r.dim(3) - 1;
  VGEN_ASSERT(C >= 1 && r.dim(0) >= 4 * C && H >= 1 && W >= 1,
              "vae_subpixel_shuffle: input {} must be [>= 4·{}, t, H + 1, W + 1]", r.str(), C);
  // Channels past 4·C (the conv's zero rows) are never read: the reference indexes phases of C.
  Tensor y = Tensor::empty({C, t, 2 * H, 2 * W}, DType::kF32);  // [C, t, 2H, 2W]
  kern::subpixel_shuffle_ref(r.f32(), y.f32(), C, t, H, W);
  return y;
}

void vae_channels_into(const Tensor& x, int64_t c0, int64_t C, Tensor& y) {
  if (!x.is_cpu()) return cuda_vae_channels_into(x, c0, C, y);
  check_host(x, "vae_channels_into", "input");
  check_host(y, "vae_channels_into", "output");
  VGEN_ASSERT(c0 >= 0 && c0 + C <= x.dim(0) && y.shape() == (Shape{C, x.dim(1), x.dim(2), x.dim(3)}),
              "vae_channels_into: input {} channels [{}, +{}) into {}", x.str(), c0, C, y.str());
  const int64_t plane = x.dim(1) * x.dim(2) * x.dim(3);
  std::memcpy(y.f32(), x.f32() + c0 * plane, size_t(C * plane) * sizeof(float));  // channels-first: one block
}

#ifndef VGEN_WITH_CUDA
Tensor cuda_vae_subpixel_weight(const Tensor&) { throw_no_cuda("vae_subpixel_weight"); }
Tensor cuda_vae_subpixel_shuffle(const Tensor&, int64_t) { throw_no_cuda("vae_subpixel_shuffle"); }
void cuda_vae_channels_into(const Tensor&, int64_t, int64_t, Tensor&) { throw_no_cuda("vae_channels_into"); }
#endif

}  // namespace vgen
