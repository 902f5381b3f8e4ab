#include <cuda_runtime.h>

#include "core/cuda_stream.h"
#include "kernels/attention/attention.cuh"
#include "kernels/common/convert.cuh"
#include "kernels/gemm/gemm.cuh"
#include "ops/device_op_checks.h"
#include "ops/device_ops.h"

namespace vgen {

namespace {

using device_ops::float_type;

void check_device(const Tensor& t, const char* op, const char* what) {
  VGEN_ASSERT(t.defined() && t.device() == Device::kCUDA, "{}: {} must be a device tensor, got {}", op, what,
              t.defined() ? t.str() : std::string("undefined"));
}

void check_launch(cudaError_t e, const char* op, const std::string& detail = {}) {
  if (e != cudaSuccess)
    VGEN_THROW(ExitCode::kInternal, "{} failed: {} ({}){}{}", op, cudaGetErrorString(e), cudaGetErrorName(e),
               detail.empty() ? "" : ": ", detail);
}

kern::GemmType gemm_type(DType dt, const char* what, const Tensor& t) {
  VGEN_ASSERT(dt == DType::kF32 || dt == DType::kBF16, "cuda_linear: {} must be f32 or bf16, got {}", what, t.str());
  return dt == DType::kF32 ? kern::GemmType::kF32 : kern::GemmType::kBF16;
}

}  // namespace

Tensor cuda_cast(const Tensor& t, DType dt) {
  check_device(t, "cuda_cast", "input");
  if (t.dtype() == dt) return t;
  kern::FloatType st{}, ot{};
  VGEN_ASSERT(float_type(t.dtype(), &st) && float_type(dt, &ot), "cuda_cast: {} to {} is not a float conversion",
              t.str(), dtype_name(dt));
  Tensor out = Tensor::empty(t.shape(), dt, Device::kCUDA);
  check_launch(kern::convert_float(t.raw(), st, out.raw(), ot, t.numel(), compute_stream()), "cuda_cast");
  return out;
}

namespace {

// The launcher arguments of x · wᵀ + b (output pointer left to the caller): x [..., K], w [N, K].
kern::LinearArgs linear_args(const char* op, const Tensor& x, const Tensor& w, const Tensor& b, DType out_dt) {
  check_device(x, op, "x");
  check_device(w, op, "w");
  VGEN_ASSERT(x.ndim() >= 1 && w.ndim() == 2 && w.dim(1) == x.dim(-1), "{}: x {} vs w {}", op, x.str(), w.str());
  VGEN_ASSERT(x.dtype() == w.dtype(), "{}: x {} and w {} differ in dtype", op, x.str(), w.str());
  const int64_t K = x.dim(-1), N = w.dim(0);
  int64_t M = 1;  // rows = product of the leading dims (also when K = 0)
  for (int i = 0; i + 1 < x.ndim(); ++i) M *= x.dim(i);
  kern::LinearArgs a;
  a.x = x.raw();
  a.w = w.raw();
  a.in_type = gemm_type(x.dtype(), "x", x);
  a.out_type = gemm_type(out_dt, "out", x);
  if (b.defined()) {
    check_device(b, op, "b");
    VGEN_ASSERT(b.numel() == N, "{}: bias {} for w {}", op, b.str(), w.str());
    a.bias = b.raw();
    a.bias_type = gemm_type(b.dtype(), "b", b);
  }
  a.M = M, a.N = N, a.K = K;
  return a;
}

}  // namespace

Tensor cuda_linear(const Tensor& x, const Tensor& w, const Tensor& b, DType out_dt, Activation act) {
  kern::LinearArgs a = linear_args("cuda_linear", x, w, b, out_dt);
  a.act = act == Activation::kGeluTanh ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;
  Shape os = x.shape();
  os.back() = a.N;
  Tensor y = Tensor::empty(os, out_dt, Device::kCUDA);
  a.y = y.raw();
  cudaError_t e = kern::linear(a, compute_stream());
  check_launch(e, "cuda_linear", fmt::format("x {} w {}: {}", x.str(), w.str(), kern::gemm_last_error()));
  return y;
}

void cuda_linear_add_(Tensor& y, const Tensor& x, const Tensor& w, const Tensor& b, float alpha) {
  check_device(y, "cuda_linear_add_", "y");
  kern::LinearArgs a = linear_args("cuda_linear_add_", x, w, b, y.dtype());
  Shape ys = x.shape();
  ys.back() = a.N;
  VGEN_ASSERT(y.shape() == ys, "cuda_linear_add_: y {} for x {} and w {} (needs {})", y.str(), x.str(), w.str(),
              shape_str(ys));
  a.y = y.raw();
  a.residual = y.raw();
  a.alpha = alpha;
  cudaError_t e = kern::linear(a, compute_stream());
  check_launch(e, "cuda_linear_add_",
               fmt::format("y {} x {} w {}: {}", y.str(), x.str(), w.str(), kern::gemm_last_error()));
}

void cuda_attention(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse, int64_t num_valid_kv,
                    float scale) {
  check_device(q, "cuda_attention", "q");
  check_device(k, "cuda_attention", "k");
  check_device(v, "cuda_attention", "v");
  check_device(out, "cuda_attention", "out");
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && v.shape() == k.shape() && out.shape() == q.shape() &&
                  k.dim(0) == q.dim(0) && k.dim(2) == q.dim(2) && k.dim(3) == q.dim(3),
              "cuda_attention: q {} k {} v {} out {}", q.str(), k.str(), v.str(), out.str());
  VGEN_ASSERT(q.dtype() == k.dtype() && q.dtype() == v.dtype() && (q.dtype() == DType::kBF16 || q.dtype() == DType::kF32),
              "cuda_attention: q/k/v must all be bf16 or all f32, got {} {} {}", q.str(), k.str(), v.str());
  const int64_t B = q.dim(0), Sq = q.dim(1), H = q.dim(2), D = q.dim(3), Skv = k.dim(1);
  VGEN_ASSERT(D <= kern::kAttnMaxHeadDim, "cuda_attention: head dim {} above {}", D, kern::kAttnMaxHeadDim);
  kern::AttnArgs a;
  a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = out.raw();
  if (lse) {
    check_device(*lse, "cuda_attention", "lse");
    VGEN_ASSERT(lse->dtype() == DType::kF32 && lse->shape() == (Shape{B, H, Sq}), "cuda_attention: lse {} for q {}",
                lse->str(), q.str());
    a.lse = lse->f32();
  }
  a.B = B, a.Sq = Sq, a.Skv = Skv, a.H = H, a.D = D, a.num_valid_kv = num_valid_kv, a.scale = scale;
  cudaError_t e;
  if (q.dtype() == DType::kF32) {
    VGEN_ASSERT(out.dtype() == DType::kF32, "cuda_attention: f32 inputs need an f32 out, got {}", out.str());
    e = kern::attention_fwd_f32(a, compute_stream());
  } else {
    VGEN_ASSERT(out.dtype() == DType::kF32 || out.dtype() == DType::kBF16, "cuda_attention: out {} must be bf16 or f32",
                out.str());
    e = kern::attention_fwd_bf16(a, out.dtype() == DType::kF32 ? kern::AttnOut::kF32 : kern::AttnOut::kBF16,
                                 compute_stream());
  }
  check_launch(e, "cuda_attention", fmt::format("q {} k {}", q.str(), k.str()));
}

void cuda_attention_merge(Tensor& o1, Tensor& lse1, const Tensor& o2, const Tensor& lse2) {
  check_device(o1, "cuda_attention_merge", "o1");
  check_device(lse1, "cuda_attention_merge", "lse1");
  check_device(o2, "cuda_attention_merge", "o2");
  check_device(lse2, "cuda_attention_merge", "lse2");
  VGEN_ASSERT(o1.ndim() == 4 && o2.shape() == o1.shape() && o1.dtype() == DType::kF32 &&
                  (o2.dtype() == DType::kF32 || o2.dtype() == DType::kBF16),
              "cuda_attention_merge: o1 {} (f32) and o2 {} (f32 or bf16)", o1.str(), o2.str());
  const int64_t B = o1.dim(0), S = o1.dim(1), H = o1.dim(2), D = o1.dim(3);
  const Shape ls{B, H, S};
  VGEN_ASSERT(lse1.shape() == ls && lse2.shape() == ls && lse1.dtype() == DType::kF32 && lse2.dtype() == DType::kF32,
              "cuda_attention_merge: lse1 {} lse2 {} for o {}", lse1.str(), lse2.str(), o1.str());
  check_launch(kern::attention_merge(o1.f32(), lse1.f32(), o2.raw(), o2.dtype() == DType::kBF16, lse2.f32(), B, S, H,
                                     D, compute_stream()),
               "cuda_attention_merge");
}

}  // namespace vgen
