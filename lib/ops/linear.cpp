#include "ops/linear.h"

#include "kernels/gemm/gemm_ref.h"

namespace vgen {

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, LinearRows rows) {
  int64_t K = x.dim(-1), N = w.dim(0);
  VGEN_ASSERT(w.dim(1) == K, "linear: x {} vs w {}", x.str(), w.str());
  VGEN_ASSERT(x.is_cpu() && x.dtype() == DType::kF32 && w.dtype() == DType::kF32, "linear: CPU f32 path only, got {} {}",
              x.str(), w.str());
  Shape os = x.shape();
  os.back() = N;
  Tensor y = Tensor::empty(os, DType::kF32);
  (rows == LinearRows::kRowByRow ? kern::linear_rows_ref : kern::linear_ref)(x.f32(), w.f32(), b.defined() ? b.f32() : nullptr, y.f32(),
                                                     x.numel() / K, N, K);
  return y;
}

}  // namespace vgen
