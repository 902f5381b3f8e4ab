// precision fp8 on the device (ops/fp8.h): activation / weight quantisation (quantize_rows_fp8,
// quantize_rows_int8), the e4m3 GEMM (linear_fp8), the INT8 GEMM (linear_int8), the FP8 attention
// (attention_fwd_fp8 or cuDNN's, attention_fwd_cudnn_fp8, as the path table says), and the device
// check of the start-up refusal.
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>

#include "core/cuda_stream.h"
#include "core/log.h"
#include "kernels/attention/attention_cudnn_fp8.cuh"
#include "kernels/attention/attention_fp8.cuh"
#include "kernels/gemm/gemm_fp8.cuh"
#include "kernels/gemm/gemm_int8.cuh"
#include "kernels/quant/quant.cuh"
#include "ops/device_op_checks.h"
#include "ops/fp8.h"
#include "ops/path_table.h"

namespace vgen {
namespace {

using device_ops::check_dev;
using device_ops::desc;
using device_ops::launched;

kern::GemmType gemm_type(DType dt, const char* op, const char* what, const Tensor& t) {
  VGEN_ASSERT(dt == DType::kF32 || dt == DType::kBF16, "{}: {} must be f32 or bf16, got {}", op, what, desc(t));
  return dt == DType::kF32 ? kern::GemmType::kF32 : kern::GemmType::kBF16;
}

// The arguments of linear_fp8 for the quantised x, e4m3 w8 [N, K] with per-row `scale` [N] f32 and
// bias b ([N] bf16/f32 or undefined).
kern::Fp8LinearArgs fp8_args(const char* op, const Fp8Activation& x, const Tensor& w8, const Tensor& scale,
                             const Tensor& b) {
  check_dev(w8, op, "w8");
  check_dev(scale, op, "w_scale");
  VGEN_ASSERT(x.x8.defined() && x.x8.ndim() == 2 && x.scale.defined(), "{}: the activation is not quantised", op);
  const int64_t K = x.x8.dim(1), N = w8.dim(0);  // K: the padded width of both (cuda_quantize_rows_fp8)
  VGEN_ASSERT(w8.dtype() == DType::kU8 && w8.ndim() == 2 && w8.dim(1) == K && scale.dtype() == DType::kF32 &&
                  scale.numel() == N,
              "{}: x {} vs e4m3 weight {} / scale {}", op, shape_str(x.shape), w8.str(), scale.str());
  kern::Fp8LinearArgs a;
  a.x8 = x.x8.data<uint8_t>();
  a.x_scale = x.scale.f32();
  a.w8 = w8.data<uint8_t>();
  a.w_scale = scale.f32();
  if (b.defined()) {
    check_dev(b, op, "bias");
    VGEN_ASSERT(b.numel() == N, "{}: bias {} for {} outputs", op, b.str(), N);
    a.bias = b.raw();
    a.bias_type = gemm_type(b.dtype(), op, "bias", b);
  }
  a.M = x.x8.dim(0), a.N = N, a.K = K;
  a.ldx = K, a.ldw = K, a.ldy = N;
  return a;
}

// The arguments of linear_int8 for the INT8 activation x and weight w8 [N, K] i8 with per-row
// `scale` [N] f32, bias b ([N] bf16 or undefined) and bf16 out.
kern::Int8LinearArgs int8_args(const char* op, const Fp8Activation& x, const Tensor& w8, const Tensor& scale,
                               const Tensor& b, DType out_dt) {
  check_dev(w8, op, "w8");
  check_dev(scale, op, "w_scale");
  VGEN_ASSERT(x.x8.defined() && x.x8.ndim() == 2 && x.x8.dtype() == DType::kI8 && x.scale.defined(),
              "{}: the activation is not quantised to INT8", op);
  const int64_t K = x.x8.dim(1), N = w8.dim(0);
  VGEN_ASSERT(w8.dtype() == DType::kI8 && w8.ndim() == 2 && w8.dim(1) == K && scale.dtype() == DType::kF32 &&
                  scale.numel() == N,
              "{}: x {} vs INT8 weight {} / scale {}", op, shape_str(x.shape), w8.str(), scale.str());
  VGEN_ASSERT(out_dt == DType::kBF16, "{}: the INT8 GEMM writes bf16, not {}", op, dtype_name(out_dt));
  kern::Int8LinearArgs a;
  a.x8 = x.x8.data<int8_t>();
  a.x_scale = x.scale.f32();
  a.w8 = w8.data<int8_t>();
  a.w_scale = scale.f32();
  if (b.defined()) {
    check_dev(b, op, "bias");
    VGEN_ASSERT(b.numel() == N && b.dtype() == DType::kBF16, "{}: bias {} for {} bf16 outputs", op, b.str(), N);
    a.bias = b.raw();
  }
  a.M = x.x8.dim(0), a.N = N, a.K = K;
  return a;
}

// A kernel's cudaErrorNotSupported (a device the start-up check should have refused), named for the user.
[[noreturn]] void throw_not_on_this_gpu(const char* what) {
  std::string gpu;
  cuda_fp8_available(&gpu);
  VGEN_THROW(ExitCode::kUsage, "precision fp8: {} does not run on this GPU, {} (vgen's own FP8 kernels need compute "
             "capability 9.0 with the build's sm_90a code; the portable paths, fp8_config.gemm_format e4m3 and "
             "cuDNN's FP8 SDPA, 8.9 and 9.0 or newer: docs/support.md)", what, gpu);
}

void run_int8(const kern::Int8LinearArgs& a, const char* op, const Tensor& t) {
  const cudaError_t e = kern::linear_int8(a, compute_stream());
  if (e == cudaErrorNotSupported) throw_not_on_this_gpu("the INT8 GEMM (fp8_config.gemm_format int8)");
  launched(e, op, t);
}

}  // namespace

void cuda_quantize_rows_fp8(const Tensor& x, Tensor& x8, Tensor& scale) {
  check_dev(x, "quantize_rows_fp8", "x");
  check_dev(x8, "quantize_rows_fp8", "x8");
  check_dev(scale, "quantize_rows_fp8", "scale");
  const int64_t K = x.dim(-1), M = K ? x.numel() / K : 0, Kp = fp8_padded_k(K);
  VGEN_ASSERT((x.dtype() == DType::kBF16 || x.dtype() == DType::kF32) &&
                  (x8.dtype() == DType::kU8 || x8.dtype() == DType::kI8) && x8.numel() == M * Kp &&
                  scale.dtype() == DType::kF32 && scale.numel() == M,
              "quantize_rows_fp8: x {} into x8 {} and scale {}", x.str(), x8.str(), scale.str());
  Tensor src = x;
  if (Kp != K && M > 0) {
    // Rows widened with zeros (a copy; never at the real model's widths, which are multiples of 16).
    src = Tensor::zeros({M, Kp}, x.dtype(), Device::kCUDA);
    const size_t es = dtype_size(x.dtype());
    VGEN_CUDA_CHECK(cudaMemcpy2DAsync(src.raw(), size_t(Kp) * es, x.raw(), size_t(K) * es, size_t(K) * es, size_t(M),
                                      cudaMemcpyDeviceToDevice, compute_stream()));
  }
  const bool bf16 = x.dtype() == DType::kBF16;
  if (x8.dtype() == DType::kI8)
    launched(kern::quantize_rows_int8(src.raw(), bf16, M, Kp, Kp, x8.data<int8_t>(), scale.f32(), compute_stream()),
             "quantize_rows_int8", x);
  else
    launched(kern::quantize_rows_fp8(src.raw(), bf16, M, Kp, Kp, x8.data<uint8_t>(), scale.f32(), compute_stream()),
             "quantize_rows_fp8", x);
}

Fp8Weight cuda_quantize_weight(const Tensor& w, GemmFormat f) {
  check_dev(w, "quantize_weight", "w");
  VGEN_ASSERT(w.ndim() == 2, "quantize_weight: w must be [N, K], got {}", w.str());
  // The block-scaled formats are refused before the load (pipeline/precision.cpp): their device
  // linears are not wired into the DiT yet (kernels/blockscale/, kernels/gemm/gemm_blockscale.cuh).
  VGEN_CHECK(!gemm_format_block_scaled(f), ExitCode::kUsage, "quantize_weight: {} weights on the device are not "
             "supported yet (docs/support.md)", gemm_format_name(f));
  Fp8Weight q;
  q.w8 = Tensor::empty({w.dim(0), fp8_padded_k(w.dim(1))}, gemm_format_dtype(f), Device::kCUDA);  // [N, Kp]
  q.scale = Tensor::empty({w.dim(0)}, DType::kF32, Device::kCUDA);                      // [N]
  cuda_quantize_rows_fp8(w, q.w8, q.scale);
  return q;
}

Tensor cuda_fp8_scale_vector(const Tensor& s, const Tensor& g) {
  check_dev(s, "fp8_scale_vector", "s");
  check_dev(g, "fp8_scale_vector", "g");
  VGEN_ASSERT(s.dtype() == DType::kF32 && g.dtype() == DType::kF32 && s.numel() == g.numel(),
              "fp8_scale_vector: s {} and g {} must be f32 of one size", s.str(), g.str());
  Tensor out = Tensor::empty({s.numel()}, DType::kF32, Device::kCUDA);
  launched(kern::fp8_scale_vector(s.f32(), g.f32(), out.f32(), s.numel(), compute_stream()), "fp8_scale_vector", s);
  return out;
}

Fp8Activation cuda_quantize_activation(const Tensor& x, GemmFormat f) {
  check_dev(x, "quantize_activation", "x");
  const int64_t K = x.dim(-1), M = K ? x.numel() / K : 0;
  VGEN_CHECK(!gemm_format_block_scaled(f), ExitCode::kUsage,
             "quantize_activation: {} activations on the device are not supported yet (docs/support.md)",
             gemm_format_name(f));
  Fp8Activation q;
  q.x8 = Tensor::empty({M, fp8_padded_k(K)}, gemm_format_dtype(f), Device::kCUDA);  // [M, Kp] e4m3 or INT8
  q.scale = Tensor::empty({M}, DType::kF32, Device::kCUDA);  // [M]
  q.shape = x.shape();
  cuda_quantize_rows_fp8(x, q.x8, q.scale);
  return q;
}

Tensor cuda_linear_fp8(const Fp8Activation& x, const Fp8Weight& w, const Tensor& b, DType out_dt, Activation act) {
  VGEN_ASSERT(x.format() == w.format(), "linear_fp8: a {} activation for a {} weight", gemm_format_name(x.format()),
              gemm_format_name(w.format()));
  const kern::GemmAct ka = act == Activation::kGeluTanh ? kern::GemmAct::kGeluTanh : kern::GemmAct::kNone;
  Shape os = x.shape;
  os.back() = w.w8.dim(0);  // [..., N]
  if (w.format() == GemmFormat::kInt8) {
    kern::Int8LinearArgs a = int8_args("linear_int8", x, w.w8, w.scale, b, out_dt);
    a.act = ka;
    Tensor y = Tensor::empty(os, out_dt, Device::kCUDA);
    a.y = y.raw();
    run_int8(a, "linear_int8", y);
    return y;
  }
  kern::Fp8LinearArgs a = fp8_args("linear_fp8", x, w.w8, w.scale, b);
  a.out_type = gemm_type(out_dt, "linear_fp8", "out", w.w8);
  a.act = ka;
  Tensor y = Tensor::empty(os, out_dt, Device::kCUDA);
  a.y = y.raw();
  launched(kern::linear_fp8(a, compute_stream()), "linear_fp8", y, kern::gemm_last_error());
  return y;
}

Tensor cuda_linear_fp8(const Tensor& x, const Fp8Weight& w, const Tensor& b, DType out_dt, Activation act) {
  return cuda_linear_fp8(cuda_quantize_activation(x, w.format()), w, b, out_dt, act);
}

void cuda_linear_fp8_add_(Tensor& y, const Tensor& x, const Tensor& w8, const Tensor& scale, const Tensor& b) {
  check_dev(y, "linear_fp8_add_", "y");
  check_dev(w8, "linear_fp8_add_", "w8");
  Shape ys = x.shape();
  ys.back() = w8.dim(0);  // [..., N]
  VGEN_ASSERT(y.shape() == ys, "linear_fp8_add_: y {} for x {} and w8 {}", y.str(), x.str(), w8.str());
  const GemmFormat f = Fp8Weight{w8, scale}.format();
  const Fp8Activation xq = cuda_quantize_activation(x, f);
  if (f == GemmFormat::kInt8) {
    kern::Int8LinearArgs a = int8_args("linear_int8_add_", xq, w8, scale, b, y.dtype());
    a.y = y.raw();
    a.residual = y.raw();  // in place: y += x·wᵀ + b in the epilogue
    run_int8(a, "linear_int8_add_", x);
    return;
  }
  kern::Fp8LinearArgs a = fp8_args("linear_fp8_add_", xq, w8, scale, b);
  a.out_type = gemm_type(y.dtype(), "linear_fp8_add_", "y", y);
  a.y = y.raw();
  a.residual = y.raw();  // in place: y += x·wᵀ + b in the epilogue
  launched(kern::linear_fp8(a, compute_stream()), "linear_fp8_add_", x, kern::gemm_last_error());
}

namespace {

// The checks of both FP8 attentions; the kernels' arguments (out: o, a bf16 [B,Sq,H,D] tensor).
kern::AttnArgs fp8_attn_args(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                             Tensor& o, Tensor* lse, int64_t num_valid_kv, float scale) {
  for (const Tensor* t : {&q, &k, &v, &out}) check_dev(*t, op, "q/k/v/out");
  VGEN_ASSERT(q.ndim() == 4 && k.ndim() == 4 && v.shape() == k.shape() && out.shape() == q.shape() &&
                  k.dim(0) == q.dim(0) && k.dim(2) == q.dim(2) && k.dim(3) == q.dim(3),
              "{}: q {} k {} v {} out {}", op, q.str(), k.str(), v.str(), out.str());
  VGEN_ASSERT(q.dtype() == DType::kBF16 && k.dtype() == DType::kBF16 && v.dtype() == DType::kBF16 &&
                  (out.dtype() == DType::kBF16 || out.dtype() == DType::kF32),
              "{}: bf16 q/k/v and a bf16 or f32 out, got {} {} {} {}", op, q.str(), k.str(), v.str(), out.str());
  const int64_t B = q.dim(0), Sq = q.dim(1), H = q.dim(2), D = q.dim(3);
  kern::AttnArgs a;
  a.q = q.raw(), a.k = k.raw(), a.v = v.raw(), a.out = o.raw();
  if (lse) {
    check_dev(*lse, op, "lse");
    VGEN_ASSERT(lse->dtype() == DType::kF32 && lse->shape() == (Shape{B, H, Sq}), "{}: lse {} for q {}", op,
                lse->str(), q.str());
    a.lse = lse->f32();
  }
  a.B = B, a.Sq = Sq, a.Skv = k.dim(1), a.H = H, a.D = D, a.num_valid_kv = num_valid_kv, a.scale = scale;
  return a;
}

// The kernels write bf16: an f32 out (a caller merging partials in fp32) gets a widened copy.
Tensor bf16_out(const Tensor& q, const Tensor& out) {
  return out.dtype() == DType::kBF16 ? out : Tensor::empty(q.shape(), DType::kBF16, Device::kCUDA);
}

}  // namespace

void cuda_attention_cudnn_fp8(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                              int64_t num_valid_kv, float scale) {
  static std::once_flag once;  // which kernel a run's fp8 self-attention used, once per process
  std::call_once(once, [&] {
    log_info("precision fp8: cuDNN's FP8 SDPA serves the self-attention (q {} k {}, {} output)", q.str(), k.str(),
             kern::attention_cudnn_fp8_out_type() == kern::CudnnFp8Out::kBF16 ? "bf16" : "e4m3");
  });
  Tensor o = bf16_out(q, out);
  const kern::AttnArgs a = fp8_attn_args("attention_cudnn_fp8", q, k, v, out, o, lse, num_valid_kv, scale);
  const size_t bytes = kern::attention_cudnn_fp8_workspace_bytes(a);
  Tensor ws = Tensor::empty({int64_t(std::max<size_t>(bytes, 1))}, DType::kU8, Device::kCUDA);
  const cudaError_t e = kern::attention_fwd_cudnn_fp8(a, ws.raw(), bytes, compute_stream());
  if (e == cudaErrorNotSupported)
    VGEN_THROW(ExitCode::kUsage, "precision fp8: cuDNN's FP8 SDPA does not serve q {} k {} here: {}", q.str(), k.str(),
               kern::attention_cudnn_fp8_last_error());
  launched(e, "attention_cudnn_fp8", q, kern::attention_cudnn_fp8_last_error());
  if (o.raw() != out.raw()) out.copy_from(cast(o, DType::kF32));
}

void cuda_attention_fp8(const Tensor& q, const Tensor& k, const Tensor& v, Tensor& out, Tensor* lse,
                        int64_t num_valid_kv, float scale, bool qk_int8, AttentionBackend backend) {
  Fp8Config f;
  f.attention_qk = qk_int8 ? QkFormat::kInt8 : QkFormat::kE4m3;
  const AttentionPath path = device_fp8_attention_path(backend, f);
  if (path == AttentionPath::kCudnnFp8) return cuda_attention_cudnn_fp8(q, k, v, out, lse, num_valid_kv, scale);
  if (path == AttentionPath::kNone) throw_not_on_this_gpu("the FP8 attention");
  Tensor o = bf16_out(q, out);
  const kern::AttnArgs a = fp8_attn_args("attention_fp8", q, k, v, out, o, lse, num_valid_kv, scale);
  const size_t bytes = kern::attention_fp8_workspace_bytes(a);
  Tensor ws = Tensor::empty({int64_t(std::max<size_t>(bytes, 1))}, DType::kU8, Device::kCUDA);
  const cudaError_t e =
      kern::attention_fwd_fp8(a, ws.raw(), bytes, compute_stream(), qk_int8 ? kern::Fp8Qk::kInt8 : kern::Fp8Qk::kE4m3);
  if (e == cudaErrorNotSupported) throw_not_on_this_gpu("the FP8 attention");
  launched(e, "attention_fp8", q);
  if (o.raw() != out.raw()) out.copy_from(cast(o, DType::kF32));
}

bool cuda_fp8_available(std::string* gpu) { return cuda_precision_available(Precision::kFp8, Fp8Config{}, gpu); }

bool cuda_precision_available(Precision prec, const Fp8Config& f, std::string* gpu, AttentionBackend backend) {
  // The path table decides (ops/path_table.h), with the run's attention backend: cuDNN's FP8 SDPA
  // is the fp8 self-attention where the own sm_90a kernel does not run.
  PathQuery q;
  q.precision = prec;
  q.fp8 = f;
  q.backend = backend;
  std::string name, why;
  if (!current_device_query(q, &name, &why)) {
    if (gpu) *gpu = "no usable CUDA device";
    return false;
  }
  const ExecutionPaths p = choose_execution_paths(q);
  const bool fp4 = prec == Precision::kFp4;
  bool ok = fp4 ? p.fp4_allowed : p.fp8_allowed;
  why = fp4 ? p.fp4_why : p.fp8_why;
  if (ok && (p.gemm == GemmPath::kCublasLtMxfp8 || p.gemm == GemmPath::kCublasLtNvfp4)) {
    ok = false;
    why = fmt::format("the path table chose {}, which the DiT's device forward does not drive yet (the kernels are "
                      "built, unmeasured: docs/support.md)",
                      gemm_path_name(p.gemm));
  }
  // The compute capability says why on a GPU without FP8 tensor cores; on the others the build, the
  // driver, cuDNN or the switches do, and so does fp8_config.scaling block anywhere.
  const bool tell = !ok && (q.cc >= kFp8MinCc || (!fp4 && f.scaling == Fp8Scaling::kBlock));
  if (gpu) *gpu = fmt::format("{} (compute capability {}.{}{})", name, q.cc / 10, q.cc % 10, tell ? "; " + why : "");
  return ok;
}

}  // namespace vgen
