// The device side of ops/vae_subpixel_ops.h: channels-last activations, kernels/vae_subpixel on
// compute_stream().
#include "core/cuda_stream.h"
#include "kernels/vae_subpixel/subpixel.cuh"
#include "ops/device_op_checks.h"
#include "ops/vae_subpixel_ops.h"

namespace vgen {

using namespace device_ops;

Tensor cuda_vae_subpixel_weight(const Tensor& w3) {
  check_dev(w3, "vae_subpixel_weight", "weight");
  VGEN_ASSERT(w3.dtype() == DType::kF32 && w3.ndim() == 4 && w3.dim(2) == 3 && w3.dim(3) == 3,
              "vae_subpixel_weight: weight {} must be f32 [cout, cin, 3, 3]", w3.str());
  Tensor w4 = Tensor::empty({4 * w3.dim(0), w3.dim(1), 2, 2}, DType::kF32, Device::kCUDA);  // [4·cout, cin, 2, 2]
  launched(kern::vae_subpixel_weight(w3.f32(), w4.f32(), w3.dim(0), w3.dim(1), compute_stream()),
           "vae_subpixel_weight", w3);
  return w4;
}

Tensor cuda_vae_subpixel_shuffle(const Tensor& r, int64_t C) {
  const kern::FloatType t = act_type(r, "vae_subpixel_shuffle", "input");
  VGEN_ASSERT(r.ndim() == 4 && C >= 1 && r.dim(3) >= 4 * C && r.dim(1) >= 2 && r.dim(2) >= 2,
              "vae_subpixel_shuffle: input {} must be [t, H + 1, W + 1, >= 4·{}]", r.str(), C);
  const int64_t T = r.dim(0), H = r.dim(1) - 1, W = r.dim(2) - 1;
  Tensor y = Tensor::empty({T, 2 * H, 2 * W, C}, r.dtype(), Device::kCUDA);  // [t, 2H, 2W, C]
  launched(kern::vae_subpixel_shuffle(r.raw(), y.raw(), t, T, H, W, r.dim(3), C, compute_stream()),
           "vae_subpixel_shuffle", r);
  return y;
}

void cuda_vae_channels_into(const Tensor& x, int64_t c0, int64_t C, Tensor& y) {
  const kern::FloatType t = act_type(x, "vae_channels_into", "input");
  VGEN_ASSERT(act_type(y, "vae_channels_into", "output") == t && x.ndim() == 4 && y.ndim() == 4 && c0 >= 0 &&
                  c0 + C <= x.dim(3) && y.dim(3) == C && y.numel() == x.numel() / x.dim(3) * C,
              "vae_channels_into: input {} channels [{}, +{}) into {}", x.str(), c0, C, y.str());
  launched(kern::vae_copy_channels(x.raw(), y.raw(), t, x.numel() / x.dim(3), x.dim(3), c0, C, compute_stream()),
           "vae_channels_into", x);
}

}  // namespace vgen
